package adk

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// A run's state travels in its context: the session every agent of the run
// shares, and the RunPath of the agent the context belongs to.
type runState struct {
	session *session
	path    []RunStep
	// resume is the input a resumed run aims at interrupted points, by
	// point id.
	resume map[string]any
	// prefix starts the ids of the points of a run inside an agent tool.
	prefix string
	// rootPath, before the root agent enters, is the RunPath it takes
	// (WithRunPath).
	rootPath []RunStep
	// callers, in the root agent's state only, are the agents of the
	// caller it may transfer to (WithCallerAgents).
	callers []CallerAgent
}

// at returns the state of the agent at path in the same run.
func (st *runState) at(path []RunStep) *runState {
	return &runState{session: st.session, path: path, resume: st.resume, prefix: st.prefix}
}

type runStateKey struct{}

func stateOf(ctx context.Context) *runState {
	st, _ := ctx.Value(runStateKey{}).(*runState)
	return st
}

func withState(ctx context.Context, st *runState) context.Context {
	return context.WithValue(ctx, runStateKey{}, st)
}

// appendPath returns path with one more step, never sharing path's array:
// paths are handed to events and must stay as they were.
func appendPath(path []RunStep, name string) []RunStep {
	out := make([]RunStep, len(path)+1)
	copy(out, path)
	out[len(path)] = RunStep{AgentName: name}
	return out
}

// isPrefix reports whether p is a prefix of (or equal to) of.
func isPrefix(p, of []RunStep) bool {
	if len(p) > len(of) {
		return false
	}
	if len(p) == 0 || &p[0] == &of[0] {
		return true
	}
	for i := range p {
		if p[i] != of[i] {
			return false
		}
	}
	return true
}

func samePath(a, b []RunStep) bool { return len(a) == len(b) && isPrefix(a, b) }

// session is what the agents of one run share: its values, its input and
// the history of messages its agents produced.
type session struct {
	values    *values
	input     []*schema.Message
	streaming bool

	mu      sync.Mutex
	history []*historyEntry
}

func newSession(vals *values, input *AgentInput) *session {
	s := &session{values: vals}
	if s.values == nil {
		s.values = &values{}
	}
	if input != nil {
		s.input, s.streaming = input.Messages, input.EnableStreaming
	}
	return s
}

// historyEntry is one message an agent produced. It is visible to the
// agents whose RunPath starts with path: the agent that produced it, and
// the agents it transferred to or that follow it in a workflow. A message
// that was streamed is concatenated from its copy of the stream when first
// needed.
type historyEntry struct {
	agent string
	path  []RunStep // guarded by session.mu: settle moves it up the tree

	mu     sync.Mutex
	msg    *schema.Message
	stream *schema.StreamReader[*schema.Message]
	// forOthers is msg as other agents see it (rewriteForContext), made
	// once.
	forOthers     *schema.Message
	forOthersDone bool
}

func (e *historyEntry) message() *schema.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.messageLocked()
}

// messageForOthers returns the message rewritten for agents other than
// its producer; nil when it tells them nothing.
func (e *historyEntry) messageForOthers() *schema.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.forOthersDone {
		if m := e.messageLocked(); m != nil {
			e.forOthers = rewriteForContext(m, e.agent)
		}
		e.forOthersDone = true
	}
	return e.forOthers
}

func (e *historyEntry) messageLocked() *schema.Message {
	if e.stream != nil {
		// A stream that failed leaves no message: the failure was the
		// producing agent's to report.
		e.msg, _ = schema.ConcatMessageStream(e.stream)
		e.stream = nil
	}
	return e.msg
}

// record adds the message of ev, produced by agent at path, to the history,
// and returns its entry (nil for an event without one).
// A streamed message is copied so the event's reader and the history each
// get the whole stream.
func (s *session) record(ev *AgentEvent, agent string, path []RunStep) *historyEntry {
	ev.recorded = true
	mv := ev.Output.MessageOutput
	e := &historyEntry{agent: agent, path: path}
	if mv.IsStreaming {
		if mv.MessageStream == nil {
			return nil
		}
		copies := mv.MessageStream.Copy(2)
		mv.MessageStream, e.stream = copies[0], copies[1]
	} else {
		if mv.Message == nil {
			return nil
		}
		e.msg = mv.Message
	}
	s.mu.Lock()
	s.history = append(s.history, e)
	s.mu.Unlock()
	return e
}

// visible returns the history entries an agent at path can see, in order.
func (s *session) visible(path []RunStep) []*historyEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.history) == 0 {
		return nil
	}
	var out []*historyEntry
	for _, e := range s.history {
		if isPrefix(e.path, path) {
			out = append(out, e)
		}
	}
	return out
}

// mark returns the position a workflow step's history starts at.
func (s *session) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.history)
}

// settle makes the history produced under at since mark visible from at
// itself, so the steps that follow a workflow step see everything it
// produced, including what agents it transferred to said. With branches
// (a Parallel agent's sub-agents, in order) the entries are also regrouped
// branch by branch, as branches run concurrently and interleave.
func (s *session) settle(mark int, at []RunStep, branches []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var slots []int
	for i := mark; i < len(s.history); i++ {
		if isPrefix(at, s.history[i].path) {
			slots = append(slots, i)
		}
	}
	if len(branches) > 1 && len(slots) > 1 {
		branch := func(e *historyEntry) int {
			if len(e.path) > len(at) {
				if i := slices.Index(branches, e.path[len(at)].AgentName); i >= 0 {
					return i
				}
			}
			return len(branches)
		}
		entries := make([]*historyEntry, len(slots))
		for k, i := range slots {
			entries[k] = s.history[i]
		}
		slices.SortStableFunc(entries, func(a, b *historyEntry) int { return branch(a) - branch(b) })
		for k, i := range slots {
			s.history[i] = entries[k]
		}
	}
	for _, i := range slots {
		s.history[i].path = at
	}
}

// values are a run's session values. Agents used as tools share the values
// of the run that calls them.
type values struct {
	mu sync.Mutex
	m  map[string]any
}

// getRaw returns a value as kept: a restoredValue for a value of a type
// without a StateType brought back from a checkpoint.
func (v *values) getRaw(key string) (any, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	val, ok := v.m[key]
	return val, ok
}

func (v *values) get(key string) (any, bool) {
	val, ok := v.getRaw(key)
	if rv, restored := val.(restoredValue); restored {
		return rv.generic, ok
	}
	return val, ok
}

func (v *values) set(kvs map[string]any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.m == nil {
		v.m = make(map[string]any, len(kvs))
	}
	maps.Copy(v.m, kvs)
}

func (v *values) allRaw() map[string]any {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.m)
}

func (v *values) all() map[string]any {
	m := v.allRaw()
	for k, val := range m {
		if rv, restored := val.(restoredValue); restored {
			m[k] = rv.generic
		}
	}
	return m
}

// AddSessionValue sets a session value of the run ctx belongs to; outside a
// run it does nothing.
func AddSessionValue(ctx context.Context, key string, value any) {
	AddSessionValues(ctx, map[string]any{key: value})
}

// AddSessionValues sets several session values of the run ctx belongs to;
// outside a run it does nothing.
func AddSessionValues(ctx context.Context, kvs map[string]any) {
	if st := stateOf(ctx); st != nil {
		st.session.values.set(kvs)
	}
}

// GetSessionValue returns a session value of the run ctx belongs to.
func GetSessionValue(ctx context.Context, key string) (any, bool) {
	if st := stateOf(ctx); st != nil {
		return st.session.values.get(key)
	}
	return nil, false
}

// GetSessionValues returns a copy of the session values of the run ctx
// belongs to; outside a run it is empty.
func GetSessionValues(ctx context.Context) map[string]any {
	if st := stateOf(ctx); st != nil {
		if m := st.session.values.all(); m != nil {
			return m
		}
	}
	return map[string]any{}
}

// RunInput returns the messages the run ctx belongs to started with;
// outside a run it is nil. A run a caller started (a Runner's) begins with
// what the person sent, earlier turns included; a run that serves a caller
// in another process (bridge.Executor) begins with the calling agent's
// whole input, context about the caller's agents included.
// UserRequest(RunInput(ctx)) is the person's request in both.
func RunInput(ctx context.Context) []*schema.Message {
	if st := stateOf(ctx); st != nil {
		return st.session.input
	}
	return nil
}

// CurrentRunPath returns the RunPath of the agent ctx belongs to in its
// run; nil outside a run. An agent that calls another process (a remote
// agent) sends it, so the far side's events fit the caller's tree.
func CurrentRunPath(ctx context.Context) []RunStep {
	if st := stateOf(ctx); st != nil {
		return st.path
	}
	return nil
}
