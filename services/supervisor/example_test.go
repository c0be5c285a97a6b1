package supervisor_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"testing/fstest"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/research"
	"github.com/a2amesh/a2amesh/services/supervisor"
	"github.com/a2amesh/a2amesh/services/writer"
)

// answer reads a run's events to the end and returns the agents that ran,
// in order, and the last answer one of them gave.
func answer(events *adk.AsyncIterator[*adk.AgentEvent]) (route []string, text string) {
	for {
		ev, ok := events.Next()
		if !ok {
			return route, text
		}
		if ev.Err != nil {
			log.Fatalf("%s: %v", ev.AgentName, ev.Err)
		}
		if len(route) == 0 || route[len(route)-1] != ev.AgentName {
			route = append(route, ev.AgentName)
		}
		if ev.Output == nil || ev.Output.MessageOutput == nil || ev.Output.MessageOutput.Role != schema.Assistant {
			continue
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			log.Fatal(err)
		}
		if msg.Content != "" {
			text = msg.Content
		}
	}
}

// The supervisor hands a topic to the research agent, then the findings
// to the writer, and gives the final report. Its team here are local
// agents, the research agent over two notes; in the mesh they are remote
// ones (bridge.NewRemoteAgent). "Write a report on checkpoints" is an
// example of its skill.
func ExampleNew() {
	ctx := context.Background()
	m := offline.New()
	corpus := fstest.MapFS{
		"checkpoints.md": {Data: []byte("# Checkpoints\n\nA run that stops for input is saved as a checkpoint and resumes from it.")},
		"gateway.md":     {Data: []byte("# Gateway\n\nThe gateway composes remote agents into one.")},
	}
	r, err := research.New(ctx, research.Config{Model: m, Corpus: corpus})
	if err != nil {
		log.Fatal(err)
	}
	w, err := writer.New(ctx, writer.Config{Model: m})
	if err != nil {
		log.Fatal(err)
	}
	agent, err := supervisor.New(ctx, supervisor.Config{Model: m, Research: r, Writer: w})
	if err != nil {
		log.Fatal(err)
	}
	route, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Write a report on checkpoints"))
	fmt.Println(strings.Join(route, " > "))
	fmt.Println(text)
	// Output:
	// SupervisorAgent > ResearchAgent > SupervisorAgent > WriterAgent > SupervisorAgent
	// [offline model] You asked: Write a report on checkpoints
	// Building on what ResearchAgent said: [1] checkpoints.md — Checkpoints
	// A run that stops for input is saved as a checkpoint and resumes from it.
}
