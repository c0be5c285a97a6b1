package chat_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/chat"
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

// The chat agent makes small talk; with the offline model it restates
// what it was told. "Hello there!" is an example of its skill.
func ExampleNew() {
	ctx := context.Background()
	agent, err := chat.New(ctx, chat.Config{Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	who, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Hello there!"))
	fmt.Println(who+":", text)
	// Output:
	// ChatAgent: [offline model] You asked: Hello there!
}
