package adk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// ErrAgentNotFound is what a transfer to an agent that is not reachable
// from the transferring agent fails with.
var ErrAgentNotFound = errors.New("adk: agent not found")

// PanicError is what a panic in an agent or in the framework becomes: the
// error of the run's last event.
type PanicError struct {
	Agent string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("adk: agent %s panicked: %v", e.Agent, e.Value)
}

// HistoryEntry is one message of the history an agent's input is made
// from: the run's input, or a message an agent of the run produced.
type HistoryEntry struct {
	// IsUserInput is true for the messages the run was started with.
	IsUserInput bool
	// AgentName is the agent that produced the message.
	AgentName string
	Message   *schema.Message
}

// HistoryRewriter turns an agent's history into its input messages.
type HistoryRewriter func(ctx context.Context, entries []*HistoryEntry) ([]*schema.Message, error)

// AgentOption configures an agent's place in an agent tree; see
// AgentWithOptions.
type AgentOption func(*flowAgent)

// WithDisallowTransferToParent keeps the agent from transferring back to
// the agent that transferred to it.
func WithDisallowTransferToParent() AgentOption {
	return func(a *flowAgent) { a.disallowParent = true }
}

// WithHistoryRewriter replaces how the agent's input is made from the run's
// history. By default the run's input comes first, then every message the
// agents before it produced: its own as they were, other agents' as user
// messages that say "For context: [Agent] said ...".
func WithHistoryRewriter(h HistoryRewriter) AgentOption {
	return func(a *flowAgent) { a.rewriter = h }
}

// emitFunc receives the events of a run on the run's goroutine.
type emitFunc func(*AgentEvent)

// inlineAgent is implemented by this package's agents: they run on the
// calling goroutine and hand their events to emit, so a run that passes
// through many agents needs one goroutine, not one per agent.
type inlineAgent interface {
	runInline(ctx context.Context, input *AgentInput, opts []AgentRunOption, emit emitFunc)
}

// flowAgent is an agent in a tree: it builds the agent's input from the
// run's history, stamps and records the agent's events, and carries out
// the transfer the agent asks for when it ends.
type flowAgent struct {
	agent Agent
	name  string
	desc  string

	subAgents      []*flowAgent
	parent         *flowAgent
	disallowParent bool
	rewriter       HistoryRewriter
}

func (a *flowAgent) Name(context.Context) string        { return a.name }
func (a *flowAgent) Description(context.Context) string { return a.desc }

func toFlowAgent(ctx context.Context, ag Agent) *flowAgent {
	if fa, ok := ag.(*flowAgent); ok {
		return fa
	}
	return &flowAgent{agent: ag, name: ag.Name(ctx), desc: ag.Description(ctx)}
}

// AgentWithOptions returns agent configured by opts. When agent came from
// SetSubAgents, AgentWithOptions or a workflow constructor, the options
// apply to it in place, keeping its place in its tree.
func AgentWithOptions(ctx context.Context, agent Agent, opts ...AgentOption) (Agent, error) {
	fa := toFlowAgent(ctx, agent)
	wasDisallowed := fa.disallowParent
	for _, o := range opts {
		o(fa)
	}
	if fa.disallowParent && !wasDisallowed {
		if on, ok := fa.agent.(OnSubAgents); ok {
			if err := on.OnDisallowTransferToParent(ctx); err != nil {
				return nil, fmt.Errorf("adk: agent %s: %w", fa.name, err)
			}
		}
	}
	return fa, nil
}

// SetSubAgents makes subAgents the agents agent can transfer to, and agent
// the parent they can transfer back to. Names must be unique among the
// sub-agents and differ from agent's; an agent has at most one parent; an
// agent's sub-agents are set once.
func SetSubAgents(ctx context.Context, agent Agent, subAgents []Agent) (Agent, error) {
	return setSubAgents(ctx, toFlowAgent(ctx, agent), subAgents)
}

func setSubAgents(ctx context.Context, fa *flowAgent, subAgents []Agent) (*flowAgent, error) {
	if len(fa.subAgents) > 0 {
		return nil, fmt.Errorf("adk: the sub-agents of %s are already set", fa.name)
	}
	subs := make([]*flowAgent, len(subAgents))
	seen := map[string]bool{fa.name: true}
	for i, s := range subAgents {
		if s == nil {
			return nil, fmt.Errorf("adk: sub-agent %d of %s is nil", i, fa.name)
		}
		sub := toFlowAgent(ctx, s)
		if seen[sub.name] {
			return nil, fmt.Errorf("adk: the name %q is used twice among %s and its sub-agents", sub.name, fa.name)
		}
		seen[sub.name] = true
		if sub.parent != nil {
			return nil, fmt.Errorf("adk: agent %s is already a sub-agent of %s", sub.name, sub.parent.name)
		}
		subs[i] = sub
	}
	if on, ok := fa.agent.(OnSubAgents); ok {
		asAgents := make([]Agent, len(subs))
		for i, s := range subs {
			asAgents[i] = s
		}
		if err := on.OnSetSubAgents(ctx, asAgents); err != nil {
			return nil, fmt.Errorf("adk: agent %s: %w", fa.name, err)
		}
	}
	for _, sub := range subs {
		if on, ok := sub.agent.(OnSubAgents); ok {
			if err := on.OnSetAsSubAgent(ctx, fa); err != nil {
				return nil, fmt.Errorf("adk: agent %s: %w", sub.name, err)
			}
		}
	}
	for _, sub := range subs {
		sub.parent = fa
	}
	fa.subAgents = subs
	return fa, nil
}

// reachable returns the agent named name that a may transfer to.
func (a *flowAgent) reachable(name string) *flowAgent {
	for _, s := range a.subAgents {
		if s.name == name {
			return s
		}
	}
	if a.parent != nil && !a.disallowParent && a.parent.name == name {
		return a.parent
	}
	return nil
}

func (a *flowAgent) reachableNames() string {
	var names []string
	for _, s := range a.subAgents {
		names = append(names, s.name)
	}
	if a.parent != nil && !a.disallowParent {
		names = append(names, a.parent.name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (a *flowAgent) Run(ctx context.Context, input *AgentInput, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	return spawn(a.name, func(emit emitFunc) { a.runInline(ctx, input, opts, emit) })
}

// spawn runs fn on a goroutine of its own and returns the events it emits.
func spawn(agent string, fn func(emitFunc)) *AsyncIterator[*AgentEvent] {
	it, gen := NewAsyncIteratorPair[*AgentEvent]()
	go func() {
		defer gen.Close()
		defer func() {
			if p := recover(); p != nil {
				gen.Send(&AgentEvent{AgentName: agent, Err: &PanicError{Agent: agent, Value: p, Stack: debug.Stack()}})
			}
		}()
		fn(gen.Send)
	}()
	return it
}

// runInline runs the agent as part of the run ctx belongs to (a new run
// when it belongs to none), then the agent it transfers to.
func (a *flowAgent) runInline(ctx context.Context, input *AgentInput, opts []AgentRunOption, emit emitFunc) {
	st := stateOf(ctx)
	var s *session
	var path []RunStep
	if st == nil || len(st.path) == 0 {
		if st == nil {
			s = newSession(nil, input)
			if vals := commonOptions(opts).sessionValues; vals != nil {
				s.values.set(vals)
			}
		} else {
			s = st.session
		}
		path = []RunStep{{AgentName: a.name}}
	} else {
		s = st.session
		path = appendPath(st.path, a.name)
	}
	ctx = withState(ctx, &runState{session: s, path: path})

	in, err := a.input(ctx, s, path)
	if err != nil {
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: err})
		return
	}

	var last *AgentAction
	failed := false
	own := func(ev *AgentEvent) {
		if len(ev.RunPath) == 0 {
			if ev.AgentName == "" {
				ev.AgentName = a.name
			}
			ev.RunPath = path
		}
		if samePath(ev.RunPath, path) {
			if ev.Err != nil {
				failed = true
			}
			if act := ev.Action; act != nil && (act.Exit || act.TransferToAgent != nil || act.Interrupted != nil) {
				last = act
			}
			if ev.Output != nil && ev.Output.MessageOutput != nil && (ev.Action == nil || ev.Action.Interrupted == nil) {
				s.record(ev, a.name, path)
			}
		}
		emit(ev)
	}
	innerOpts := opts
	if _, ok := a.agent.(*workflowAgent); !ok {
		// A workflow passes every option on to its steps, which pick theirs.
		innerOpts = optionsFor(a.name, opts)
	}
	runGuarded(ctx, a.name, a.agent, in, innerOpts, own)

	if failed || last == nil || last.TransferToAgent == nil || last.Exit || last.Interrupted != nil {
		return
	}
	dest := last.TransferToAgent.DestAgentName
	target := a.reachable(dest)
	if target == nil {
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: fmt.Errorf(
			"transfer from %s to %q: %w (%s can transfer to: %s)", a.name, dest, ErrAgentNotFound, a.name, a.reachableNames())})
		return
	}
	if err := ctx.Err(); err != nil {
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: fmt.Errorf("transfer from %s to %s: %w", a.name, dest, err)})
		return
	}
	target.runInline(ctx, nil, opts, emit)
}

// runGuarded runs ag and passes its events to emit; a panic becomes an
// error event.
func runGuarded(ctx context.Context, name string, ag Agent, in *AgentInput, opts []AgentRunOption, emit emitFunc) {
	defer func() {
		if p := recover(); p != nil {
			emit(&AgentEvent{AgentName: name, Err: &PanicError{Agent: name, Value: p, Stack: debug.Stack()}})
		}
	}()
	if il, ok := ag.(inlineAgent); ok {
		il.runInline(ctx, in, opts, emit)
		return
	}
	it := ag.Run(ctx, in, opts...)
	for {
		ev, ok := it.Next()
		if !ok {
			return
		}
		if ev != nil {
			emit(ev)
		}
	}
}

// input makes the agent's input from the run's input and the history it
// can see.
func (a *flowAgent) input(ctx context.Context, s *session, path []RunStep) (*AgentInput, error) {
	in := &AgentInput{Messages: s.input, EnableStreaming: s.streaming}
	var seen []*historyEntry
	if len(path) > 1 {
		seen = s.visible(path)
	}
	if a.rewriter == nil {
		if len(seen) == 0 {
			return in, nil
		}
		msgs := make([]*schema.Message, 0, len(s.input)+len(seen))
		msgs = append(msgs, s.input...)
		for _, e := range seen {
			m := e.message()
			if m == nil {
				continue
			}
			if e.agent != a.name {
				if m = rewriteForContext(m, e.agent); m == nil {
					continue
				}
			}
			msgs = append(msgs, m)
		}
		in.Messages = msgs
		return in, nil
	}
	entries := make([]*HistoryEntry, 0, len(s.input)+len(seen))
	for _, m := range s.input {
		entries = append(entries, &HistoryEntry{IsUserInput: true, Message: m})
	}
	for _, e := range seen {
		if m := e.message(); m != nil {
			entries = append(entries, &HistoryEntry{AgentName: e.agent, Message: m})
		}
	}
	msgs, err := a.rewriter(ctx, entries)
	if err != nil {
		return nil, fmt.Errorf("adk: history of %s: %w", a.name, err)
	}
	in.Messages = msgs
	return in, nil
}

// rewriteForContext turns another agent's message into a user message that
// tells the reader what that agent said or did; nil when there is nothing
// to tell.
func rewriteForContext(m *schema.Message, agent string) *schema.Message {
	var b strings.Builder
	switch m.Role {
	case schema.Assistant:
		if text := m.Text(); text != "" {
			fmt.Fprintf(&b, " [%s] said: %s", agent, text)
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, " [%s] called tool `%s` with arguments: %s", agent, tc.Function.Name, tc.Function.Arguments)
		}
	case schema.Tool:
		if text := m.Text(); text != "" {
			fmt.Fprintf(&b, " [%s] `%s` tool returned result: %s", agent, m.ToolName, text)
		}
	case schema.User:
		if text := m.Text(); text != "" {
			fmt.Fprintf(&b, " [%s] was told: %s", agent, text)
		}
	}
	if b.Len() == 0 {
		return nil
	}
	return schema.UserMessage("For context:" + b.String())
}
