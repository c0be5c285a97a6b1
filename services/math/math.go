// Package math is the mesh's math agent: it calculates, evaluating every
// expression with a calculator tool rather than guessing.
package math

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/tools/calc"
)

// Config configures the math agent.
type Config struct {
	// Model is what the agent thinks with; required.
	Model model.ChatModel
}

// New returns the math agent, MathAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("math: Config.Model is required")
	}
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "MathAgent", Description: "Calculates: arithmetic and math expressions",
		Instruction: "You calculate. Evaluate every expression with the calculate tool and give the result.",
		Model:       cfg.Model, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{calc.Tool()}},
	})
}
