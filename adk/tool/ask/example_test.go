package ask_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/ask"
)

// lastEvent reads a run to its end and returns its last event.
func lastEvent(events *adk.AsyncIterator[*adk.AgentEvent]) *adk.AgentEvent {
	var last *adk.AgentEvent
	for ev, ok := events.Next(); ok; ev, ok = events.Next() {
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		last = ev
	}
	return last
}

// ask_user stops the run with a question for a person: the run's last
// event is an interrupt whose point carries the question. Resumed with
// the person's answer for that point, the same call answers with it. (The
// offline model asks the request itself; a language model phrases the
// question.)
func ExampleTool() {
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "TripAgent", Instruction: "You plan trips. When the destination is open, ask the person with ask_user.",
		Model:       offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{ask.Tool("Ask the person a question")}},
	})
	if err != nil {
		log.Fatal(err)
	}
	// An interrupted run is kept as a checkpoint, under an id of one's
	// choosing, to be resumed.
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: &adk.MemoryCheckPointStore{}})
	last := lastEvent(runner.Query(ctx, "Where should my trip go?", adk.WithCheckPointID("trip-1")))
	point := last.Action.Interrupted.Points[0]
	fmt.Println(point.Tool, "asks:", point.Info)

	events, err := runner.Resume(ctx, "trip-1", adk.ResumeWith(point.ID, "Lisbon"))
	if err != nil {
		log.Fatal(err)
	}
	msg, err := lastEvent(events).Output.MessageOutput.GetMessage()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(msg.Content)
	// Output:
	// ask_user asks: Where should my trip go?
	// [offline model] to “Where should my trip go?” the person answered: Lisbon
}
