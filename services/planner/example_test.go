package planner_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/planner"
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

// The planner plans a task of several steps and carries them out one by
// one. Without math and research agents it calculates and searches the
// project's docs in-process. The request is an example of its skill.
func ExampleNew() {
	ctx := context.Background()
	agent, err := planner.New(ctx, planner.Config{Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	route, text := answer(adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent}).Query(ctx, "Plan: calculate 2 + 3, then calculate 4 * 5"))
	fmt.Println(strings.Join(route, " > "))
	fmt.Println(text)
	// Output:
	// Planner > Executor > Replanner > Executor > Replanner
	// [offline model] calculate 2 + 3: 2 + 3 = 5
	// calculate 4 * 5: 4 * 5 = 20
}
