// Package supervisor is the mesh's supervisor agent: it coordinates
// research and writing, handing a topic to the research agent and then the
// findings to the writer, one at a time, and gives the final report.
package supervisor

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
)

// Config configures the supervisor agent.
type Config struct {
	// Model is what the supervisor thinks with; required.
	Model model.ChatModel
	// Research and Writer are the team: the research and writer agents,
	// local or remote (bridge.RemoteAgent); both required.
	Research, Writer adk.Agent
}

// New returns the supervisor agent, SupervisorAgent, over its team.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil || cfg.Research == nil || cfg.Writer == nil {
		return nil, errors.New("supervisor: Config.Model, Research and Writer are required")
	}
	boss, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "SupervisorAgent", Description: "Coordinates research and writing: researches a topic, then writes a report on it",
		Instruction: "You coordinate a team. Hand each task to the member that fits it, one at a time; when every task is done, give the final answer.",
		Model:       cfg.Model,
	})
	if err != nil {
		return nil, err
	}
	return supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{cfg.Research, cfg.Writer}})
}
