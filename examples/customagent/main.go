// Command customagent is the first thing a team does with a2amesh: define
// an agent of its own (a ChatModelAgent with a tool), serve it as a
// complete A2A server, and call it with the A2A client.
//
//	go run ./examples/customagent
//
// It runs on the offline model, so it needs no model endpoint; pass a
// go-openai model (adk/model/openai) instead to use one.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strconv"

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

// celsius is the tool's argument; its JSON schema comes from the tags.
type celsius struct {
	Degrees float64 `json:"degrees" desc:"the temperature in degrees Celsius"`
}

func run(ctx context.Context, out io.Writer) error {
	// 1. The agent: a ReAct agent with one tool.
	convert, err := tool.FromFunc("celsius_to_fahrenheit", "Convert a temperature from Celsius to Fahrenheit",
		func(_ context.Context, in celsius) (string, error) {
			return strconv.FormatFloat(in.Degrees*9/5+32, 'f', -1, 64) + " °F", nil
		})
	if err != nil {
		return err
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "ThermoAgent", Description: "Converts temperatures between Celsius and Fahrenheit",
		Instruction: "You convert temperatures with your tool.", Model: offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{convert}},
	})
	if err != nil {
		return err
	}

	// 2. Serve it: a free port on 127.0.0.1, tasks in memory.
	srv, err := serve.New(ctx, agent, serve.Config{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	// 3. Call it over A2A, as any team would: the client reads the card.
	c, err := client.New(ctx, srv.URL(), client.Config{})
	if err != nil {
		return err
	}
	defer c.CloseIdleConnections()
	fmt.Fprintf(out, "calling %s at %s\n", c.Card().Name, srv.URL())
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewTextMessage(a2a.RoleUser, "Convert 100 degrees Celsius to Fahrenheit"),
	})
	if err != nil {
		return err
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
		return fmt.Errorf("unexpected result %#v", res)
	}
	fmt.Fprintf(out, "answer: %s\n", task.Artifacts[len(task.Artifacts)-1].Text())
	return nil
}
