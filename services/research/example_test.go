package research_test

import (
	"context"
	"fmt"
	"log"
	"testing/fstest"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/research"
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

// The research agent searches its corpus and reports what it found,
// citing the files. Its corpus here is two notes; by default it is the
// project's own docs. "Research checkpoints" is an example of its skill.
func ExampleNew() {
	ctx := context.Background()
	corpus := fstest.MapFS{
		"checkpoints.md": {Data: []byte("# Checkpoints\n\nA run that stops for input is saved as a checkpoint and resumes from it.")},
		"gateway.md":     {Data: []byte("# Gateway\n\nThe gateway composes remote agents into one.")},
	}
	agent, err := research.New(ctx, research.Config{Model: offline.New(), Corpus: corpus})
	if err != nil {
		log.Fatal(err)
	}
	who, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Research checkpoints"))
	fmt.Println(who+":", text)
	// Output:
	// ResearchAgent: [offline model] [1] checkpoints.md — Checkpoints
	// A run that stops for input is saved as a checkpoint and resumes from it.
}
