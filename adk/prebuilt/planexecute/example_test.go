package planexecute_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/planexecute"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

type weatherIn struct {
	City string `json:"city" desc:"the city"`
}

// A planner splits the request into steps, an executor carries out one
// step at a time with its tools, and a replanner records each result and
// revises the rest of the plan or answers. The executed steps stay in the
// session, under ExecutedStepsKey.
func ExampleNew() {
	ctx := context.Background()
	m := offline.New()
	weather, err := tool.FromFunc("get_weather", "Current weather of a city",
		func(ctx context.Context, in weatherIn) (string, error) {
			return "sunny in " + in.City, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	planner, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: m})
	if err != nil {
		log.Fatal(err)
	}
	executor, err := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{
		Model:       m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weather}},
	})
	if err != nil {
		log.Fatal(err)
	}
	replanner, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: m})
	if err != nil {
		log.Fatal(err)
	}
	agent, err := planexecute.New(ctx, &planexecute.Config{
		Planner: planner, Executor: executor, Replanner: replanner,
	})
	if err != nil {
		log.Fatal(err)
	}

	var steps []planexecute.ExecutedStep
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	events := runner.Query(ctx, "Check the weather in Lisbon, then check the weather in Oslo",
		adk.WithRunEnd(func(ctx context.Context) {
			steps, _ = adk.SessionValue[[]planexecute.ExecutedStep](ctx, planexecute.ExecutedStepsKey)
		}))
	for ev, ok := events.Next(); ok; ev, ok = events.Next() {
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		msg := ev.Output.MessageOutput.Message
		for _, c := range msg.ToolCalls {
			fmt.Printf("%s calls %s %s\n", ev.AgentName, c.Function.Name, c.Function.Arguments)
		}
		switch {
		case msg.Role == schema.Tool:
			fmt.Printf("%s got from %s: %s\n", ev.AgentName, msg.ToolName, msg.Content)
		case msg.Content != "":
			fmt.Printf("%s: %s\n", ev.AgentName, msg.Content)
		}
	}
	for _, s := range steps {
		fmt.Printf("done: %s => %s\n", s.Step, s.Result)
	}
	// Output:
	// Planner: Plan:
	// 1. Check the weather in Lisbon
	// 2. check the weather in Oslo
	// Executor calls get_weather {"city":"Lisbon"}
	// Executor got from get_weather: sunny in Lisbon
	// Executor: [offline model] sunny in Lisbon
	// Replanner: Revised plan:
	// 1. check the weather in Oslo
	// Executor calls get_weather {"city":"Oslo"}
	// Executor got from get_weather: sunny in Oslo
	// Executor: [offline model] sunny in Oslo
	// Replanner: [offline model] Check the weather in Lisbon: sunny in Lisbon
	// check the weather in Oslo: sunny in Oslo
	// done: Check the weather in Lisbon => [offline model] sunny in Lisbon
	// done: check the weather in Oslo => [offline model] sunny in Oslo
}
