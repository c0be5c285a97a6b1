package writer_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/writer"
)

// answer reads a run's events to the end and returns the last answer an
// agent gave, and the agent that gave it.
func answer(events *adk.AsyncIterator[*adk.AgentEvent]) (agent, text string) {
	for {
		ev, ok := events.Next()
		if !ok {
			return agent, text
		}
		if ev.Err != nil {
			log.Fatalf("%s: %v", ev.AgentName, ev.Err)
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil || ev.Output.MessageOutput.Role != schema.Assistant {
			continue
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			log.Fatal(err)
		}
		if msg.Content != "" {
			agent, text = ev.AgentName, msg.Content
		}
	}
}

// The writer agent writes a report or summary from the findings it is
// given. The request is an example of its skill.
func ExampleNew() {
	ctx := context.Background()
	agent, err := writer.New(ctx, writer.Config{Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	request := "Summarize these findings: checkpoints are saved after every step, and a resumed run continues from the last one"
	who, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, request))
	fmt.Println(who+":", text)
	// Output:
	// WriterAgent: [offline model] You asked: Summarize these findings: checkpoints are saved after every step, and a resumed run continues from the last one
}
