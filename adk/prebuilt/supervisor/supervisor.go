// Package supervisor is the supervisor pattern: one agent hands each task
// to a sub-agent, and every sub-agent hands control back to it when its
// task is done, until the supervisor answers. A supervisor can be a
// sub-agent of another supervisor.
package supervisor

import (
	"context"
	"errors"

	"github.com/a2amesh/a2amesh/adk"
)

// Config configures a supervisor.
type Config struct {
	// Supervisor decides who works next; a ChatModelAgent gets the
	// transfer_to_agent tool for its sub-agents.
	Supervisor adk.Agent
	// SubAgents do the tasks; each transfers back to Supervisor when it
	// ends on its own (adk.AgentWithDeterministicTransferTo).
	SubAgents []adk.Agent
}

// New returns the supervisor with its sub-agents.
func New(ctx context.Context, cfg *Config) (adk.Agent, error) {
	if cfg == nil || cfg.Supervisor == nil {
		return nil, errors.New("supervisor: the config needs a Supervisor")
	}
	name := cfg.Supervisor.Name(ctx)
	subs := make([]adk.Agent, len(cfg.SubAgents))
	for i, s := range cfg.SubAgents {
		if s == nil {
			return nil, errors.New("supervisor: a sub-agent is nil")
		}
		subs[i] = adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{Agent: s, ToAgentNames: []string{name}})
	}
	return adk.SetSubAgents(ctx, cfg.Supervisor, subs)
}
