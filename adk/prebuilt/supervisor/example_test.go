package supervisor_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

type cityIn struct {
	City string `json:"city" desc:"the city"`
}

func chatAgent(ctx context.Context, name, desc string, tools ...tool.Tool) adk.Agent {
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Model: offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: tools},
	})
	if err != nil {
		log.Fatal(err)
	}
	return a
}

// The supervisor hands the request to the sub-agent that fits it; the
// sub-agent hands control back when it is done, and the supervisor,
// having been through the agents that fit, answers.
func ExampleNew() {
	ctx := context.Background()
	weather, err := tool.FromFunc("get_weather", "Current weather of a city",
		func(ctx context.Context, in cityIn) (string, error) { return "sunny in " + in.City, nil })
	if err != nil {
		log.Fatal(err)
	}
	team, err := supervisor.New(ctx, &supervisor.Config{
		Supervisor: chatAgent(ctx, "Supervisor", "Coordinates the forecasters."),
		SubAgents: []adk.Agent{
			chatAgent(ctx, "WeatherAgent", "Reports the weather of a city.", weather),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: team}).Query(ctx, "Report the weather in Lisbon")
	for ev, ok := events.Next(); ok; ev, ok = events.Next() {
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		if a := ev.Action; a != nil && a.TransferToAgent != nil {
			fmt.Println(ev.AgentName, "->", a.TransferToAgent.DestAgentName)
			continue
		}
		msg := ev.Output.MessageOutput.Message
		for _, c := range msg.ToolCalls {
			if c.Function.Name != adk.TransferToAgentToolName {
				fmt.Printf("%s calls %s %s\n", ev.AgentName, c.Function.Name, c.Function.Arguments)
			}
		}
		if msg.Role != schema.Tool && msg.Content != "" {
			fmt.Printf("%s: %s\n", ev.AgentName, msg.Content)
		}
	}
	// Output:
	// Supervisor -> WeatherAgent
	// WeatherAgent calls get_weather {"city":"Lisbon"}
	// WeatherAgent: [offline model] sunny in Lisbon
	// WeatherAgent -> Supervisor
	// Supervisor: [offline model] You asked: Report the weather in Lisbon
	// Building on what WeatherAgent said: sunny in Lisbon
}
