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
	"github.com/a2amesh/a2amesh/tools/weather"
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
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "WeatherAgent", Description: "Answers questions about the weather in a city",
		Instruction: "You answer questions about the weather. Look it up with get_weather; never guess.",
		Model:       cfg.Model, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weather.Tool(weather.Config{Endpoint: cfg.Endpoint})}},
	})
}
