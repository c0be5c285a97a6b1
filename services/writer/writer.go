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
	"github.com/a2amesh/a2amesh/adk/tool/ask"
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
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "WriterAgent", Description: "Writes reports and summaries from the findings it is given",
		// The instruction does not name the ask tool: the offline model
		// would take that for "always ask".
		Instruction: "You write clear, short reports from the findings in the conversation. When the request leaves open who the report is for or what it must cover, ask the person first.",
		Model:       cfg.Model,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{ask.Tool("Ask the person a question, when the request leaves something open")}},
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
	return adk.Skill{ID: "write-from-findings", Name: "Write from findings",
		Description: "Writes a clear, short report or summary from the findings or notes it is given, in the request " +
			"or by other agents; may ask the person who the report is for",
		Tags: []string{"write", "summary", "summarize", "draft", "notes", "findings"},
		Examples: []string{
			"Summarize these findings: checkpoints are saved after every step, and a resumed run continues from the last one",
			"Write a short summary of these notes: the gateway retries a failed hop, then fails the task",
			"Turn these findings into a report: the mesh runs eight agents and a gateway"}}
}
