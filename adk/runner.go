package adk

import (
	"context"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// CheckPointStore keeps the checkpoints of interrupted runs, by checkpoint
// id. Implementations are safe for concurrent use.
type CheckPointStore interface {
	// Get returns the checkpoint saved under id; ok is false when there is
	// none.
	Get(ctx context.Context, id string) (data []byte, ok bool, err error)
	// Set saves a checkpoint under id, replacing any other.
	Set(ctx context.Context, id string, data []byte) error
	// Delete removes the checkpoint saved under id, if any.
	Delete(ctx context.Context, id string) error
}

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	// Agent is the root of the agent tree the Runner runs.
	Agent Agent
	// EnableStreaming asks the agents for streamed output.
	EnableStreaming bool
	// CheckPointStore keeps the state of interrupted runs.
	CheckPointStore CheckPointStore
}

// Runner runs an agent tree: each run gets its own session (values and
// history) that every agent of the run shares.
type Runner struct {
	agent     *flowAgent
	streaming bool
	store     CheckPointStore
}

// NewRunner returns a Runner for cfg.
func NewRunner(ctx context.Context, cfg RunnerConfig) *Runner {
	return &Runner{agent: toFlowAgent(ctx, cfg.Agent), streaming: cfg.EnableStreaming, store: cfg.CheckPointStore}
}

// Run starts a run on messages and returns its events; cancelling ctx ends
// it.
func (r *Runner) Run(ctx context.Context, messages []*schema.Message, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	in := &AgentInput{Messages: messages, EnableStreaming: r.streaming}
	s := newSession(nil, in)
	if vals := commonOptions(opts).sessionValues; vals != nil {
		s.values.set(vals)
	}
	ctx = withState(ctx, &runState{session: s})
	return spawn(r.agent.name, func(emit emitFunc) { r.agent.runInline(ctx, in, opts, emit) })
}

// Query runs on a single user message.
func (r *Runner) Query(ctx context.Context, query string, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	return r.Run(ctx, []*schema.Message{schema.UserMessage(query)}, opts...)
}
