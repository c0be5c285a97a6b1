// Command approval shows human-in-the-loop across A2A: a tool of one's own
// stops the run to ask for approval (an interrupt), the served agent's
// task waits in INPUT_REQUIRED with the question, and the caller's answer,
// sent as a follow-up on the same task, resumes the run inside the tool,
// which then does its work.
//
//	go run ./examples/approval
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/serve"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// refund is the tool's argument.
type refund struct {
	Amount float64 `json:"amount" desc:"the amount to refund, in euros"`
}

// refundTool refunds an amount once a person approves it. The first call
// interrupts the run with a question, keeping the amount as the
// interrupt's state; when the run resumes, the same call finds the
// person's answer as resume data.
func refundTool() (tool.Tool, error) {
	return tool.FromFunc("issue_refund", "Issue a refund of an amount to the customer, after a person approves it",
		func(ctx context.Context, in refund) (string, error) {
			answer, resumed := adk.GetResumeData[string](ctx)
			if !resumed {
				question := fmt.Sprintf("Refund %.2f EUR? Answer yes or no.", in.Amount)
				return "", adk.StatefulInterrupt(ctx, question, in)
			}
			asked, _, err := adk.GetInterruptState[refund](ctx)
			if err != nil {
				return "", err
			}
			if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "yes") {
				return fmt.Sprintf("refund of %.2f EUR not issued: the person said %q", asked.Amount, answer), nil
			}
			return fmt.Sprintf("refund of %.2f EUR issued", asked.Amount), nil
		})
}

func run(ctx context.Context, out io.Writer) error {
	t, err := refundTool()
	if err != nil {
		return err
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "RefundAgent", Description: "Issues refunds to customers, with a person's approval",
		Instruction: "You issue refunds with issue_refund.", Model: offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{t}},
	})
	if err != nil {
		return err
	}
	srv, err := serve.New(ctx, agent, serve.Config{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	c, err := client.New(ctx, srv.URL(), client.Config{})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()

	// The run stops in the tool: the task waits for input, saying why.
	task, err := send(ctx, c, a2a.NewTextMessage(a2a.RoleUser, "Please issue a refund of 42.50 euros"))
	if err != nil {
		return err
	}
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
		return fmt.Errorf("task %s is %s, want it waiting for input", task.ID, task.Status.State)
	}
	fmt.Fprintf(out, "%s asks: %s\n", c.Card().Name, task.Status.Message.Text())

	// The answer goes to the same task; the run resumes inside the tool.
	answer := a2a.NewTextMessage(a2a.RoleUser, "yes")
	answer.TaskID, answer.ContextID = task.ID, task.ContextID
	if task, err = send(ctx, c, answer); err != nil {
		return err
	}
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
		return fmt.Errorf("task %s is %s after the answer, want it completed", task.ID, task.Status.State)
	}
	fmt.Fprintf(out, "answered yes: %s\n", task.Artifacts[len(task.Artifacts)-1].Text())
	return nil
}

// send sends msg and returns the task it started or continued, once the
// task has settled.
func send(ctx context.Context, c *client.Client, msg *a2a.Message) (*a2a.Task, error) {
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, err
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		return nil, fmt.Errorf("the agent answered with a message, not a task: %#v", res)
	}
	return task, nil
}
