package checkpoint_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/tool"
)

type cancelArgs struct {
	Order int `json:"order" desc:"the order number"`
}

// newAgent returns an agent whose cancel_order tool asks a person before
// it cancels anything: its first call interrupts the run, and the call
// made again on resume finds the person's answer.
func newAgent(ctx context.Context) adk.Agent {
	cancelOrder, err := tool.FromFunc("cancel_order", "Cancel an order, once a person approves.",
		func(ctx context.Context, in cancelArgs) (string, error) {
			answer, resumed := adk.GetResumeData[string](ctx)
			if !resumed {
				return "", adk.Interrupt(ctx, fmt.Sprintf("Cancel order %d?", in.Order))
			}
			if answer != "yes" {
				return fmt.Sprintf("order %d kept", in.Order), nil
			}
			return fmt.Sprintf("order %d canceled", in.Order), nil
		})
	if err != nil {
		log.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "OrderAgent",
		Model:       offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{cancelOrder}},
	})
	if err != nil {
		log.Fatal(err)
	}
	return agent
}

// lastEvent reads a run to its end and returns its last event.
func lastEvent(events *adk.AsyncIterator[*adk.AgentEvent]) *adk.AgentEvent {
	var last *adk.AgentEvent
	for ev, ok := events.Next(); ok; ev, ok = events.Next() {
		last = ev
	}
	return last
}

// A File store keeps the checkpoint of a run that stopped to ask a person,
// in a directory, so that the run resumes in another Runner, even in
// another process after a restart.
func ExampleFile() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "checkpoints")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := checkpoint.NewFile(dir)
	if err != nil {
		log.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(ctx), CheckPointStore: store})
	last := lastEvent(runner.Query(ctx, "Please cancel order 1042", adk.WithCheckPointID("task-7")))
	point := last.Action.Interrupted.Points[0]
	fmt.Println(point.Tool, "asks:", point.Info)

	// Later, with a new Runner on the same directory: the person said yes.
	store, err = checkpoint.NewFile(dir)
	if err != nil {
		log.Fatal(err)
	}
	runner = adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(ctx), CheckPointStore: store})
	events, err := runner.Resume(ctx, "task-7", adk.ResumeWith(point.ID, "yes"))
	if err != nil {
		log.Fatal(err)
	}
	msg, err := lastEvent(events).Output.MessageOutput.GetMessage()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(msg.Content)

	// A finished run's checkpoint is gone.
	_, ok, err := store.Get(ctx, "task-7")
	fmt.Println(ok, err)
	// Output:
	// cancel_order asks: Cancel order 1042?
	// [offline model] order 1042 canceled
	// false <nil>
}
