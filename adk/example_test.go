package adk_test

import (
	"context"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// printRun reads a run's events to the end and prints each: the agent
// that produced it, and the message, tool call or action it carries.
func printRun(events *adk.AsyncIterator[*adk.AgentEvent]) {
	for {
		ev, ok := events.Next()
		if !ok {
			return
		}
		if ev.Err != nil {
			fmt.Printf("%s failed: %v\n", ev.AgentName, ev.Err)
			continue
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil {
			msg, err := ev.Output.MessageOutput.GetMessage()
			if err != nil {
				log.Fatal(err)
			}
			switch {
			case len(msg.ToolCalls) > 0:
				for _, c := range msg.ToolCalls {
					fmt.Printf("%s calls %s %s\n", ev.AgentName, c.Function.Name, c.Function.Arguments)
				}
			case msg.Role == schema.Tool:
				fmt.Printf("%s got from %s: %s\n", ev.AgentName, msg.ToolName, msg.Content)
			default:
				fmt.Printf("%s says: %s\n", ev.AgentName, msg.Content)
			}
		}
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			fmt.Printf("%s hands over to %s\n", ev.AgentName, ev.Action.TransferToAgent.DestAgentName)
		}
	}
}

type cityArgs struct {
	City string `json:"city" desc:"the city"`
}

func lookupWeather() tool.Tool {
	t, err := tool.FromFunc("get_weather", "Current weather of a city.",
		func(ctx context.Context, in cityArgs) (string, error) {
			return "sunny, 24°C in " + in.City, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	return t
}

// A ChatModelAgent calls its model, runs the tools the model asks for and
// calls the model again with their results, until the model answers. A
// Runner runs it and yields every step as an event. The offline model
// stands in for a real one here: it is deterministic and needs no
// endpoint.
func ExampleRunner() {
	ctx := context.Background()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "WeatherAgent",
		Description: "Answers questions about the weather.",
		Instruction: "Answer questions about the weather with get_weather.",
		Model:       offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{lookupWeather()}},
	})
	if err != nil {
		log.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent})
	printRun(runner.Query(ctx, "What's the weather in Lisbon?"))
	// Output:
	// WeatherAgent calls get_weather {"city":"Lisbon"}
	// WeatherAgent got from get_weather: sunny, 24°C in Lisbon
	// WeatherAgent says: [offline model] sunny, 24°C in Lisbon
}

// SetSubAgents lets an agent hand the conversation to the agents below
// it: its model gets a transfer_to_agent tool and the list of agents it
// can name. The agent transferred to reads the request and what was said
// before it.
func ExampleSetSubAgents() {
	ctx := context.Background()
	m := offline.New()
	weather, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "WeatherAgent",
		Description: "Answers questions about the weather of a city.",
		Model:       m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{lookupWeather()}},
	})
	if err != nil {
		log.Fatal(err)
	}
	router, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "RouterAgent",
		Description: "Sends each request to the agent that fits it.",
		Instruction: "You route requests.",
		Model:       m,
	})
	if err != nil {
		log.Fatal(err)
	}
	root, err := adk.SetSubAgents(ctx, router, []adk.Agent{weather})
	if err != nil {
		log.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root})
	printRun(runner.Query(ctx, "What's the weather in Lisbon?"))
	// Output:
	// RouterAgent calls transfer_to_agent {"agent_name":"WeatherAgent"}
	// RouterAgent got from transfer_to_agent: successfully transferred to agent [WeatherAgent]
	// RouterAgent hands over to WeatherAgent
	// WeatherAgent calls get_weather {"city":"Lisbon"}
	// WeatherAgent got from get_weather: sunny, 24°C in Lisbon
	// WeatherAgent says: [offline model] sunny, 24°C in Lisbon
}

// A Sequential agent runs its steps in order, each seeing what the steps
// before it said. OutputKey keeps a step's answer as a session value,
// which later instructions refer to as {key} and the caller reads after
// the run.
func ExampleNewSequentialAgent() {
	ctx := context.Background()
	m := offline.New()
	research, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "Researcher",
		Instruction: "Find the facts the request needs.",
		Model:       m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{lookupWeather()}},
		OutputKey:   "facts",
	})
	if err != nil {
		log.Fatal(err)
	}
	writer, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name:        "Writer",
		Instruction: "Write a short note from these facts: {facts}",
		Model:       m,
	})
	if err != nil {
		log.Fatal(err)
	}
	pipeline, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
		Name:      "ResearchThenWrite",
		SubAgents: []adk.Agent{research, writer},
	})
	if err != nil {
		log.Fatal(err)
	}

	var facts string
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: pipeline})
	printRun(runner.Query(ctx, "Write a note on the weather in Lisbon",
		adk.WithRunEnd(func(ctx context.Context) {
			facts, _ = adk.SessionValue[string](ctx, "facts")
		})))
	fmt.Println("facts:", facts)
	// Output:
	// Researcher calls get_weather {"city":"Lisbon"}
	// Researcher got from get_weather: sunny, 24°C in Lisbon
	// Researcher says: [offline model] sunny, 24°C in Lisbon
	// Writer says: [offline model] You asked: Write a note on the weather in Lisbon
	// Building on what Researcher said: sunny, 24°C in Lisbon
	// facts: [offline model] sunny, 24°C in Lisbon
}
