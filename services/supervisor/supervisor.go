// Package supervisor is the mesh's supervisor agent: it coordinates
// research and writing, handing a topic to the research agent and then the
// findings to the writer, one at a time, and gives the final report.
package supervisor

import (
	"context"
	"errors"
	"fmt"

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
		// The instruction names the team in the order of the work, which
		// the offline model follows too.
		Instruction: fmt.Sprintf("You coordinate a team. For a report, first hand the topic to %s to research it, then to %s to write the report "+
			"from the findings; hand any other task to the member that fits it, one at a time. When every task is done, give the final answer.",
			cfg.Research.Name(ctx), cfg.Writer.Name(ctx)),
		Model: cfg.Model,
	})
	if err != nil {
		return nil, err
	}
	team, err := supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: []adk.Agent{cfg.Research, cfg.Writer}})
	if err != nil {
		return nil, err
	}
	return adk.AgentWithConfig(ctx, team, adk.AgentConfig{Skills: []adk.Skill{skill()}})
}

// skill is what the agent declares it does, on its card and to the agents
// that transfer to it. Its examples are requests the agent handles with
// the offline model too.
func skill() adk.Skill {
	return adk.Skill{ID: "research-and-report", Name: "Research and report",
		Description: "Writes a report on a topic: the research agent researches it in the documents, then the writer " +
			"writes the report from the findings",
		Tags: []string{"report", "research", "write", "topic"},
		Examples: []string{"Write a report on checkpoints", "Research the gateway and write a report",
			"Prepare a report about push notifications"}}
}
