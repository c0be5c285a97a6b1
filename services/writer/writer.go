// Package writer is the mesh's writer agent: it writes clear, short
// reports and summaries from the findings in the conversation, and asks
// the person (an interrupt) when the request leaves open who a report is
// for or what it must cover.
package writer

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/tools/ask"
)

// Config configures the writer agent.
type Config struct {
	// Model is what the agent thinks with; required.
	Model model.ChatModel
}

// New returns the writer agent, WriterAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("writer: Config.Model is required")
	}
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "WriterAgent", Description: "Writes reports and summaries from the findings it is given",
		Instruction: "You write clear, short reports from the findings in the conversation. When the request leaves open who the report is for or what it must cover, ask the person with ask_user first.",
		Model:       cfg.Model,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{ask.Tool("Ask the person a question, when the request leaves something open")}},
	})
}
