// Package weather is the mesh's weather agent: it answers questions about
// the weather in a city by looking it up at an HTTP endpoint the
// deployment names, and says plainly that it cannot when there is none.
package weather

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/weather"
)

// Config configures the weather agent.
type Config struct {
	// Model is what the agent thinks with; required.
	Model model.ChatModel
	// Endpoint answers GET ?city=<city> with the weather; empty: the
	// agent says the weather service is offline.
	Endpoint string
}

// New returns the weather agent, WeatherAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("weather: Config.Model is required")
	}
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "WeatherAgent", Description: "Answers questions about the weather in a city",
		Instruction: "You answer questions about the weather. Look it up with get_weather; never guess.",
		Model:       cfg.Model, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weather.Tool(weather.Config{Endpoint: cfg.Endpoint})}},
	})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithConfig(ctx, a, adk.AgentConfig{Skills: []adk.Skill{skill()}})
}

// skill is what the agent declares it does, on its card and to the agents
// that transfer to it. Its examples are requests the agent handles with
// the offline model too.
func skill() adk.Skill {
	return adk.Skill{ID: "current-weather", Name: "Current weather",
		Description: "Looks up the current weather of a city with the weather service; with no service configured it says " +
			"the weather service is offline rather than guess",
		Tags: []string{"weather", "temperature", "hot", "cold", "sunny", "rain", "snow", "wind", "city"},
		Examples: []string{"What's the weather in Beijing?", "Is it raining in London?",
			"What's the temperature in Oslo right now?", "How windy is it in Chicago?"}}
}
