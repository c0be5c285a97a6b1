package router_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/services/math"
	"github.com/a2amesh/a2amesh/services/router"
	"github.com/a2amesh/a2amesh/services/weather"
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

// The router hands each request to the agent whose skills fit it. Its
// agents here are the weather and math agents, in-process; in a gateway
// they are the remote agents the topology gives it. "How much is 12
// percent of 250?" is an example of its skill.
func ExampleNew() {
	ctx := context.Background()
	m := offline.New()
	w, err := weather.New(ctx, weather.Config{Model: m})
	if err != nil {
		log.Fatal(err)
	}
	calc, err := math.New(ctx, math.Config{Model: m})
	if err != nil {
		log.Fatal(err)
	}
	agent, err := router.New(ctx, router.Config{Model: m, Agents: []adk.Agent{w, calc}})
	if err != nil {
		log.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	for _, request := range []string{"How much is 12 percent of 250?", "What's the weather in Beijing?"} {
		route, text := answer(runner.Query(ctx, request))
		fmt.Println(strings.Join(route, " > "))
		fmt.Println(text)
	}
	// Output:
	// RouterAgent > MathAgent
	// [offline model] 12% of 250 = 30
	// RouterAgent > WeatherAgent
	// [offline model] the weather service is offline (no endpoint is configured), so the weather in Beijing is unknown
}
