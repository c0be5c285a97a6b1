package math_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/math"
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

// The math agent evaluates arithmetic, in symbols or in words, with its
// calculate tool. "How much is 12 percent of 250?" is an example of its
// skill.
func ExampleNew() {
	ctx := context.Background()
	agent, err := math.New(ctx, math.Config{Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	who, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "How much is 12 percent of 250?"))
	fmt.Println(who+":", text)
	// Output:
	// MathAgent: [offline model] 12% of 250 = 30
}
