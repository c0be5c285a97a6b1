// Package router is the mesh's router agent: it transfers each request to
// the agent that fits it best, among its sub-agents or the agents a caller
// offers it, and answers only what none fits.
package router

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
)

// Config configures the router agent.
type Config struct {
	// Model is what the router thinks with; required.
	Model model.ChatModel
	// Agents are the agents it routes to (local or remote); none: the
	// agents a caller offers it (a gateway that makes it the parent of
	// others).
	Agents []adk.Agent
}

// New returns the router agent, RouterAgent.
func New(ctx context.Context, cfg Config) (adk.Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("router: Config.Model is required")
	}
	cm, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "RouterAgent", Description: "Routes each request to the agent that can answer it",
		Instruction: "You route requests. Answer only what no other agent fits.", Model: cfg.Model,
	})
	if err != nil {
		return nil, err
	}
	r, err := adk.AgentWithConfig(ctx, cm, adk.AgentConfig{Skills: []adk.Skill{skill()}})
	if err != nil || len(cfg.Agents) == 0 {
		return r, err
	}
	return adk.SetSubAgents(ctx, r, cfg.Agents)
}

// skill is what the agent declares it does, on its card and to the agents
// that transfer to it. Its examples are requests the agent handles with
// the offline model too.
func skill() adk.Skill {
	return adk.Skill{ID: "route", Name: "Route requests",
		Description: "Hands each request to the agent whose skills fit it; answers itself only when no agent fits",
		Tags:        []string{"routing", "mesh"},
		Examples: []string{"What's the weather in Beijing?", "How much is 12 percent of 250?",
			"Write a report on checkpoints"}}
}
