// Package math is the mesh's math agent: it calculates, evaluating every
// expression with a calculator tool rather than guessing.
package math

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/calc"
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
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "MathAgent", Description: "Calculates: arithmetic and math expressions",
		Instruction: "You calculate. Evaluate every expression with the calculate tool and give the result.",
		Model:       cfg.Model, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{calc.Tool()}},
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
	return adk.Skill{ID: "calculate", Name: "Calculate",
		Description: "Works out arithmetic written in symbols or in words with an exact expression evaluator: " +
			"+ - * / ^, percentages, powers, roots and functions",
		Tags: []string{"math", "arithmetic", "calculate", "percent", "square root", "power"},
		Examples: []string{"What is (17 + 25) * 3?", "How much is 12 percent of 250?", "What is seven times eight?",
			"What is the square root of 144?", "2 to the power of 10", "Divide 100 by 8", "Calculate 1.5 * 40"}}
}
