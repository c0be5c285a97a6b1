package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
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

// AgentConfig configures an agent's place in an agent tree; see
// AgentWithConfig. A zero field leaves that aspect as it is.
type AgentConfig struct {
	// OutputKey, when set, stores the agent's answer, the text of its last
	// assistant message, in that session value when the agent ends; any
	// agent, a remote one too. (ChatModelAgentConfig.OutputKey does it for
	// a ChatModelAgent's own answer.)
	OutputKey string
	// DisallowTransferToParent keeps the agent from transferring back to
	// the agent that transferred to it.
	DisallowTransferToParent bool
	// HistoryRewriter, when set, replaces how the agent's input is made
	// from the run's history. By default the run's input comes first, then
	// every message the agents before it produced: its own as they were,
	// other agents' as user messages that say "For context: [Agent] said
	// ...", marked as context (ContextMessageKey). The messages a rewriter
	// makes are taken as they are: one that retells another agent's
	// message is context only if the rewriter marks it, whatever its text
	// says, so UserRequest and the offline model take an unmarked "For
	// context: ..." message for the person's words.
	HistoryRewriter HistoryRewriter
	// Skills, when not nil, are what the agent declares, in place of what
	// it declares itself (an empty, non-nil slice: none): the transfer
	// instructions of the agents that can transfer to it list them, and
	// an A2A card made for it (bridge.Card) carries them. The agent keeps
	// its own copy.
	Skills []Skill
}

// emitFunc receives the events of a run on the run's goroutine.
type emitFunc func(*AgentEvent)

// inlineAgent is implemented by this package's agents: they run on the
// calling goroutine and hand their events to emit, so a run that passes
// through many agents needs one goroutine, not one per agent. Both methods
// return the agent's frame when it was interrupted, nil when it ended.
type inlineAgent interface {
	runInline(ctx context.Context, input *AgentInput, opts []AgentRunOption, emit emitFunc) *frame
	resumeInline(ctx context.Context, f *frame, opts []AgentRunOption, emit emitFunc) *frame
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
	// transferTo are the agents to transfer to when the agent ends on its
	// own (AgentWithDeterministicTransferTo).
	transferTo []string
	outputKey  string
	skills     []Skill // AgentConfig.Skills, when skillsSet
	skillsSet  bool
}

func (a *flowAgent) Name(context.Context) string        { return a.name }
func (a *flowAgent) Description(context.Context) string { return a.desc }

func toFlowAgent(ctx context.Context, ag Agent) *flowAgent {
	if fa, ok := ag.(*flowAgent); ok {
		return fa
	}
	return &flowAgent{agent: ag, name: ag.Name(ctx), desc: ag.Description(ctx)}
}

// AgentWithConfig returns agent configured by cfg. When agent came from
// SetSubAgents, AgentWithConfig or a workflow constructor, cfg applies to
// it in place, keeping its place in its tree.
func AgentWithConfig(ctx context.Context, agent Agent, cfg AgentConfig) (Agent, error) {
	fa := toFlowAgent(ctx, agent)
	wasDisallowed := fa.disallowParent
	if cfg.OutputKey != "" {
		fa.outputKey = cfg.OutputKey
	}
	if cfg.HistoryRewriter != nil {
		fa.rewriter = cfg.HistoryRewriter
	}
	if cfg.Skills != nil {
		fa.skills, fa.skillsSet = slices.Clone(cfg.Skills), true
	}
	fa.disallowParent = fa.disallowParent || cfg.DisallowTransferToParent
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

func (a *flowAgent) reachableNames(callers []CallerAgent) string {
	var names []string
	for _, s := range a.subAgents {
		names = append(names, s.name)
	}
	if a.parent != nil && !a.disallowParent {
		names = append(names, a.parent.name)
	}
	for _, c := range callers {
		names = append(names, c.Name)
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
		growStack()
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

// enter places the agent in the run ctx belongs to (a new run when it
// belongs to none) and returns its context, session and RunPath.
func (a *flowAgent) enter(ctx context.Context, input *AgentInput, opts []AgentRunOption) (context.Context, *session, []RunStep) {
	st := stateOf(ctx)
	if st == nil {
		s := newSession(nil, input)
		if vals := commonOptions(opts).sessionValues; vals != nil {
			s.values.set(vals)
		}
		st = &runState{session: s}
	}
	if len(st.path) > 0 {
		path := appendPath(st.path, a.name)
		return withState(ctx, st.at(path)), st.session, path
	}
	path := st.rootPath
	if len(path) == 0 {
		path = []RunStep{{AgentName: a.name}}
	}
	root := st.at(path)
	root.callers = st.callers
	return withState(ctx, root), st.session, path
}

// growStack grows a new run goroutine's stack while it is one frame deep.
// A run goes deep (flow, agent, tool node, tool, JSON decoding, and again
// for each transfer), and growing the stack there copies and adjusts every
// frame; profiles of the transfer chain benchmark put a third of its CPU
// time in that. Growing it first costs a copy of almost nothing.
//
//go:noinline
func growStack() {
	var pad [24 << 10]byte
	touch(pad[:])
}

//go:noinline
func touch([]byte) {}

// runInline runs the agent as part of the run ctx belongs to, then the
// agent it transfers to.
func (a *flowAgent) runInline(ctx context.Context, input *AgentInput, opts []AgentRunOption, emit emitFunc) *frame {
	ctx, s, path := a.enter(ctx, input, opts)
	in, err := a.input(ctx, s, path)
	if err != nil {
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: err})
		return nil
	}
	return a.drive(ctx, s, path, opts, emit, func(ctx context.Context, own emitFunc, innerOpts []AgentRunOption) *frame {
		return a.runAgent(ctx, path, in, innerOpts, own)
	})
}

// resumeInline continues the agent, or the agent it transferred to, from
// f.
func (a *flowAgent) resumeInline(ctx context.Context, f *frame, opts []AgentRunOption, emit emitFunc) *frame {
	ctx, s, path := a.enter(ctx, nil, opts)
	ff := f.Flow
	if ff == nil {
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: fmt.Errorf("%w: agent %s has no frame to resume", ErrBadCheckPoint, a.name)})
		return nil
	}
	if ff.Target != nil {
		target := a.reachable(ff.TransferTo)
		if target == nil {
			emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: fmt.Errorf(
				"resume: %s transferred to %q: %w (%s can transfer to: %s)", a.name, ff.TransferTo, ErrAgentNotFound, a.name, a.reachableNames(nil))})
			return nil
		}
		if tf := target.resumeInline(ctx, ff.Target, opts, emit); tf != nil {
			return &frame{Flow: &flowFrame{TransferTo: ff.TransferTo, Target: tf}}
		}
		return nil
	}
	return a.drive(ctx, s, path, opts, emit, func(ctx context.Context, own emitFunc, innerOpts []AgentRunOption) *frame {
		return a.resumeAgent(ctx, s, path, ff.Inner, innerOpts, own)
	})
}

// drive runs (or resumes) the flow's own agent through step, records and
// stamps its events, and then carries out the transfer it asks for; all in
// the agent's span, if the run is traced.
func (a *flowAgent) drive(ctx context.Context, s *session, path []RunStep, opts []AgentRunOption, emit emitFunc,
	step func(ctx context.Context, own emitFunc, innerOpts []AgentRunOption) *frame) *frame {
	var last *AgentAction
	var lastSaid *historyEntry // the agent's last assistant message, for outputKey
	var failed error           // the agent's own error event's; its span's too
	ctx, span := agentSpan(ctx, a.name, path)
	defer func() { endSpan(span, failed) }()
	own := func(ev *AgentEvent) {
		if len(ev.RunPath) == 0 {
			if ev.AgentName == "" {
				ev.AgentName = a.name
			}
			ev.RunPath = path
		}
		if last != nil && last.TransferToAgent != nil && len(ev.RunPath) > len(path) && isPrefix(path, ev.RunPath) &&
			ev.RunPath[len(path)].AgentName == last.TransferToAgent.DestAgentName {
			// The transfer was carried out below, where the events come
			// from: an agent this run cannot see into (a remote agent's
			// tree) transferred within itself.
			last = nil
		}
		if samePath(ev.RunPath, path) {
			if ev.Err != nil {
				failed = ev.Err
			}
			if act := ev.Action; act != nil && (act.Exit || act.TransferToAgent != nil || act.Interrupted != nil) {
				last = act
			}
			if ev.Output != nil && ev.Output.MessageOutput != nil && (ev.Action == nil || ev.Action.Interrupted == nil) {
				if e := s.record(ev, a.name, path); e != nil && ev.Output.MessageOutput.Role == schema.Assistant {
					lastSaid = e
				}
			}
		}
		emit(ev)
	}
	innerOpts := opts
	if _, ok := a.agent.(*workflowAgent); !ok {
		// A workflow passes every option on to its steps, which pick theirs.
		innerOpts = optionsFor(a.name, opts)
	}
	if f := step(ctx, own, innerOpts); f != nil {
		return &frame{Flow: &flowFrame{Inner: f}}
	}
	if a.outputKey != "" && failed == nil && lastSaid != nil {
		if m := lastSaid.message(); m != nil && len(m.ToolCalls) == 0 {
			AddSessionValue(ctx, a.outputKey, m.Text())
		}
	}
	if failed != nil || last != nil && (last.Exit || last.Interrupted != nil) {
		return nil
	}
	if last == nil || last.TransferToAgent == nil {
		for _, to := range a.transferTo {
			call, result := transferMessages(to)
			own(&AgentEvent{Output: &AgentOutput{MessageOutput: &MessageVariant{Message: call, Role: schema.Assistant}}})
			own(&AgentEvent{Output: &AgentOutput{MessageOutput: &MessageVariant{Message: result, Role: schema.Tool, ToolName: TransferToAgentToolName}},
				Action: NewTransferToAgentAction(to)})
		}
	}
	if last == nil || last.TransferToAgent == nil {
		return nil
	}
	dest := last.TransferToAgent.DestAgentName
	target := a.reachable(dest)
	if target == nil {
		callers := stateOf(ctx).callers
		if slices.ContainsFunc(callers, func(c CallerAgent) bool { return c.Name == dest }) {
			return nil // the caller carries it out
		}
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: fmt.Errorf(
			"transfer from %s to %q: %w (%s can transfer to: %s)", a.name, dest, ErrAgentNotFound, a.name, a.reachableNames(callers))})
		return nil
	}
	if err := ctx.Err(); err != nil {
		emit(&AgentEvent{AgentName: a.name, RunPath: path, Err: fmt.Errorf("transfer from %s to %s: %w", a.name, dest, err)})
		return nil
	}
	tctx, tspan := transferSpan(ctx, a.name, dest)
	defer endSpan(tspan, nil)
	if tf := target.runInline(tctx, nil, opts, emit); tf != nil {
		return &frame{Flow: &flowFrame{TransferTo: dest, Target: tf}}
	}
	return nil
}

// runAgent runs the flow's own agent and passes its events to emit; a
// panic becomes an error event.
func (a *flowAgent) runAgent(ctx context.Context, path []RunStep, in *AgentInput, opts []AgentRunOption, emit emitFunc) (f *frame) {
	defer a.recoverTo(emit)
	if il, ok := a.agent.(inlineAgent); ok {
		return il.runInline(ctx, in, opts, emit)
	}
	return a.drain(ctx, path, a.agent.Run(ctx, in, opts...), emit)
}

// resumeAgent continues the flow's own agent from f.
func (a *flowAgent) resumeAgent(ctx context.Context, s *session, path []RunStep, f *frame, opts []AgentRunOption, emit emitFunc) *frame {
	defer a.recoverTo(emit)
	if f == nil {
		emit(&AgentEvent{Err: fmt.Errorf("%w: agent %s has no frame to resume", ErrBadCheckPoint, a.name)})
		return nil
	}
	if il, ok := a.agent.(inlineAgent); ok {
		return il.resumeInline(ctx, f, opts, emit)
	}
	ra, ok := a.agent.(ResumableAgent)
	if !ok || f.Custom == nil {
		emit(&AgentEvent{Err: fmt.Errorf("adk: agent %s was interrupted but cannot resume: it is not a ResumableAgent", a.name)})
		return nil
	}
	st := stateOf(ctx)
	id := pointID(st.prefix, path, "")
	info := &ResumeInfo{EnableStreaming: s.streaming, State: f.Custom.State, Data: st.resume[id], PointID: id, Inputs: st.resume}
	return a.drain(ctx, path, ra.Resume(ctx, info, opts...), emit)
}

func (a *flowAgent) recoverTo(emit emitFunc) {
	if p := recover(); p != nil {
		emit(&AgentEvent{AgentName: a.name, Err: &PanicError{Agent: a.name, Value: p, Stack: debug.Stack()}})
	}
}

// drain passes on the events of an agent that is not one of this
// package's. An interrupt event of its own (NewInterruptEvent) becomes its
// frame and gets its interrupt point.
func (a *flowAgent) drain(ctx context.Context, path []RunStep, it *AsyncIterator[*AgentEvent], emit emitFunc) *frame {
	var f *frame
	for {
		ev, ok := it.Next()
		if !ok {
			return f
		}
		if ev == nil {
			continue
		}
		// Events from below this agent that no flow of this run recorded
		// come from agents this run cannot see into (a remote agent's
		// tree): they join the history here.
		if len(ev.RunPath) > len(path) && !ev.recorded && isPrefix(path, ev.RunPath) &&
			ev.Output != nil && ev.Output.MessageOutput != nil && (ev.Action == nil || ev.Action.Interrupted == nil) {
			stateOf(ctx).session.record(ev, ev.AgentName, ev.RunPath)
		}
		if act := ev.Action; act != nil && act.Interrupted != nil && (len(ev.RunPath) == 0 || samePath(ev.RunPath, path)) {
			f = &frame{Custom: &customFrame{}}
			if state := act.Interrupted.state; state != nil {
				raw, err := json.Marshal(state)
				if err != nil {
					emit(&AgentEvent{Err: fmt.Errorf("adk: the interrupt state of %s cannot be saved: %w", a.name, err)})
					return nil
				}
				f.Custom.State = raw
			}
			if len(act.Interrupted.Points) == 0 {
				st := stateOf(ctx)
				act.Interrupted.Points = []*InterruptPoint{{ID: pointID(st.prefix, path, ""), Agent: a.name, RunPath: path, Info: act.Interrupted.Data}}
			}
		}
		emit(ev)
	}
}

// input makes the agent's input from the run's input and the history it
// can see.
func (a *flowAgent) input(ctx context.Context, s *session, path []RunStep) (*AgentInput, error) {
	in := &AgentInput{Messages: s.input, EnableStreaming: s.streaming}
	seen := s.visible(path)
	if a.rewriter == nil {
		if len(seen) == 0 {
			return in, nil
		}
		msgs := make([]*schema.Message, 0, len(s.input)+len(seen))
		msgs = append(msgs, s.input...)
		for _, e := range seen {
			var m *schema.Message
			if e.agent == a.name {
				m = e.message()
			} else {
				m = e.messageForOthers()
			}
			if m != nil {
				msgs = append(msgs, m)
			}
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
// tells the reader what that agent said or did, marked as context
// (ContextMessageKey) so that nothing takes it for the person's request;
// nil when there is nothing to tell.
func rewriteForContext(m *schema.Message, agent string) *schema.Message {
	var b strings.Builder
	b.WriteString("For context:")
	tag := " [" + agent + "] "
	switch m.Role {
	case schema.Assistant:
		if text := m.Text(); text != "" {
			b.WriteString(tag + "said: " + text)
		}
		for _, tc := range m.ToolCalls {
			b.WriteString(tag + "called tool `" + tc.Function.Name + "` with arguments: " + tc.Function.Arguments)
		}
	case schema.Tool:
		if text := m.Text(); text != "" {
			b.WriteString(tag + "`" + m.ToolName + "` tool returned result: " + text)
		}
	case schema.User:
		if text := m.Text(); text != "" {
			b.WriteString(tag + "was told: " + text)
		}
	}
	if b.Len() == len("For context:") {
		return nil
	}
	out := schema.UserMessage(b.String())
	out.Extra = map[string]any{ContextMessageKey: agent}
	return out
}
