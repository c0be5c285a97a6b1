package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// CheckPointStore keeps the checkpoints of interrupted runs, by checkpoint
// id. Implementations are safe for concurrent use: MemoryCheckPointStore
// here, a file-backed one in adk/checkpoint, and the suite every store
// passes in adk/checkpoint/checkpointtest.
type CheckPointStore interface {
	// Get returns the checkpoint saved under id; ok is false when there is
	// none.
	Get(ctx context.Context, id string) (data []byte, ok bool, err error)
	// Set saves a checkpoint under id, replacing any other.
	Set(ctx context.Context, id string, data []byte) error
	// Delete removes the checkpoint saved under id, if any.
	Delete(ctx context.Context, id string) error
}

// CheckPointLocker is implemented by stores that can keep two runs of one
// checkpoint apart, across Runners and processes. Without it a Runner
// keeps its own runs apart only.
type CheckPointLocker interface {
	// Lock claims id for one run; it fails with ErrCheckPointBusy while
	// another claim holds. unlock releases the claim.
	Lock(ctx context.Context, id string) (unlock func(), err error)
}

// Errors of checkpoints and resumes.
var (
	// ErrCheckPointNotFound: no checkpoint has the id; its run finished or
	// never interrupted.
	ErrCheckPointNotFound = errors.New("adk: no such checkpoint (its run finished, or never interrupted)")
	// ErrCheckPointBusy: another run of the checkpoint is going on.
	ErrCheckPointBusy = errors.New("adk: the checkpoint is being run")
	// ErrBadCheckPoint: the checkpoint cannot be read or does not fit the
	// agent tree resuming it.
	ErrBadCheckPoint = errors.New("adk: bad checkpoint")
	// ErrCheckPointUnavailable: a store kept elsewhere cannot be reached
	// at the moment, and the same call may succeed later. A Runner saving
	// or deleting the checkpoint of a run that ended waits for the store
	// (up to CheckPointOutage) rather than lose the run's outcome.
	ErrCheckPointUnavailable = errors.New("adk: the checkpoint store cannot be reached")
)

// CheckPointVersion is the version of the checkpoint format this package
// writes and reads (docs/adk.md describes it).
const CheckPointVersion = 1

// checkpoint is what a Runner saves when a run interrupts.
type checkpoint struct {
	Version int               `json:"version"`
	Session sessionRecord     `json:"session"`
	Frame   *frame            `json:"frame"`
	Points  []*InterruptPoint `json:"points,omitempty"`
}

type sessionRecord struct {
	Input     []*schema.Message      `json:"input"`
	Streaming bool                   `json:"streaming,omitempty"`
	Values    map[string]*typedValue `json:"values,omitempty"`
	History   []historyRecord        `json:"history,omitempty"`
}

type historyRecord struct {
	Agent   string          `json:"agent"`
	Path    []RunStep       `json:"path"`
	Message *schema.Message `json:"message"`
}

// typedValue is a session value with the name of its type, so it comes back
// as the type it was.
type typedValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// StateType names a Go type whose session values checkpoints bring back as
// that type; see RunnerConfig.StateTypes.
type StateType struct {
	name string
	typ  reflect.Type
}

// StateTypeOf names T for checkpoints. Names are written into checkpoints:
// keep them stable, and unique within a Runner.
func StateTypeOf[T any](name string) StateType {
	return StateType{name: name, typ: reflect.TypeFor[T]()}
}

// The types every checkpoint knows by these names.
var (
	builtinTypes = map[string]reflect.Type{
		"string":            reflect.TypeFor[string](),
		"bool":              reflect.TypeFor[bool](),
		"int":               reflect.TypeFor[int](),
		"int64":             reflect.TypeFor[int64](),
		"float64":           reflect.TypeFor[float64](),
		"[]string":          reflect.TypeFor[[]string](),
		"[]any":             reflect.TypeFor[[]any](),
		"map[string]any":    reflect.TypeFor[map[string]any](),
		"map[string]string": reflect.TypeFor[map[string]string](),
	}
	builtinNames = func() map[reflect.Type]string {
		m := make(map[reflect.Type]string, len(builtinTypes))
		for name, t := range builtinTypes {
			m[t] = name
		}
		return m
	}()
)

// typeRegistry maps type names both ways: the built-in ones and those a
// Runner was given. The zero registry knows the built-in ones.
type typeRegistry struct {
	byName map[string]reflect.Type
	byType map[reflect.Type]string
}

func newTypeRegistry(types []StateType) (*typeRegistry, error) {
	r := &typeRegistry{}
	if len(types) == 0 {
		return r, nil
	}
	r.byName, r.byType = map[string]reflect.Type{}, map[reflect.Type]string{}
	for _, st := range types {
		if st.name == "" || st.typ == nil {
			return nil, errors.New("adk: a state type without a name (use StateTypeOf)")
		}
		prev, dup := r.byName[st.name]
		if !dup {
			prev, dup = builtinTypes[st.name]
		}
		if dup && prev != st.typ {
			return nil, fmt.Errorf("adk: the state type name %q is given to %s and %s", st.name, prev, st.typ)
		}
		r.byName[st.name] = st.typ
		r.byType[st.typ] = st.name
	}
	return r, nil
}

func (r *typeRegistry) typeNamed(name string) (reflect.Type, bool) {
	if t, ok := r.byName[name]; ok {
		return t, true
	}
	t, ok := builtinTypes[name]
	return t, ok
}

func (r *typeRegistry) nameOf(t reflect.Type) (string, bool) {
	if name, ok := r.byType[t]; ok {
		return name, true
	}
	name, ok := builtinNames[t]
	return name, ok
}

// unregisteredPrefix marks the type name of a value whose type has no name;
// it comes back as plain JSON values, which SessionValue can still decode.
const unregisteredPrefix = "go:"

func (r *typeRegistry) encode(v any) (*typedValue, error) {
	if rv, ok := v.(restoredValue); ok {
		return &typedValue{Type: rv.typ, Value: rv.raw}, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return &typedValue{Type: "null", Value: raw}, nil
	}
	t := reflect.TypeOf(v)
	name, ok := r.nameOf(t)
	if !ok {
		name = unregisteredPrefix + t.String()
	}
	return &typedValue{Type: name, Value: raw}, nil
}

func (r *typeRegistry) decode(tv *typedValue) (any, error) {
	if tv.Type == "null" {
		return nil, nil
	}
	t, ok := r.typeNamed(tv.Type)
	if !ok {
		var generic any
		if err := json.Unmarshal(tv.Value, &generic); err != nil {
			return nil, err
		}
		return restoredValue{typ: tv.Type, raw: tv.Value, generic: generic}, nil
	}
	ptr := reflect.New(t)
	if err := json.Unmarshal(tv.Value, ptr.Interface()); err != nil {
		return nil, err
	}
	return ptr.Elem().Interface(), nil
}

// restoredValue is a session value of a type without a StateType, brought
// back from a checkpoint: GetSessionValue gives its plain JSON form,
// SessionValue decodes it into the type asked for.
type restoredValue struct {
	typ     string
	raw     json.RawMessage
	generic any
}

// SessionValue returns the session value key as a T. A value of another
// type (a value restored from a checkpoint whose type has no StateType, or
// one that crossed a process boundary as JSON) is decoded into T.
func SessionValue[T any](ctx context.Context, key string) (v T, ok bool) {
	st := stateOf(ctx)
	if st == nil {
		return v, false
	}
	raw, found := st.session.values.getRaw(key)
	if !found {
		return v, false
	}
	if rv, isRestored := raw.(restoredValue); isRestored {
		if err := json.Unmarshal(rv.raw, &v); err != nil {
			return v, false
		}
		return v, true
	}
	return convert[T](raw)
}

// MarshalSessionValues encodes the session values of the run ctx belongs
// to as a checkpoint does: each with its type's name (built-in, from
// types, or "go:<type>"), so UnmarshalSessionValues brings them back as
// the same types. A bridge uses it to carry session values to a remote run.
func MarshalSessionValues(ctx context.Context, types ...StateType) ([]byte, error) {
	reg, err := newTypeRegistry(types)
	if err != nil {
		return nil, err
	}
	var vals map[string]any
	if st := stateOf(ctx); st != nil {
		vals = st.session.values.allRaw()
	}
	return marshalValues(vals, reg)
}

func marshalValues(vals map[string]any, reg *typeRegistry) ([]byte, error) {
	if len(vals) == 0 {
		return []byte("{}"), nil
	}
	out := make(map[string]*typedValue, len(vals))
	for k, v := range vals {
		tv, err := reg.encode(v)
		if err != nil {
			return nil, fmt.Errorf("session value %q: %w", k, err)
		}
		out[k] = tv
	}
	return json.Marshal(out)
}

// UnmarshalSessionValues decodes what MarshalSessionValues wrote. A value
// whose type is neither built in nor in types comes back as a value that
// GetSessionValue shows as plain JSON and SessionValue decodes into the
// type asked for.
func UnmarshalSessionValues(data []byte, types ...StateType) (map[string]any, error) {
	reg, err := newTypeRegistry(types)
	if err != nil {
		return nil, err
	}
	var in map[string]*typedValue
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("adk: session values: %w", err)
	}
	out := make(map[string]any, len(in))
	for k, tv := range in {
		if tv == nil {
			return nil, fmt.Errorf("adk: session value %q is null", k)
		}
		v, err := reg.decode(tv)
		if err != nil {
			return nil, fmt.Errorf("adk: session value %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// snapshot records the session for a checkpoint, with its values unless
// reg is nil. Streamed messages are concatenated; by the time a run
// interrupts, their streams have ended.
func (s *session) snapshot(reg *typeRegistry) (sessionRecord, error) {
	rec := sessionRecord{Input: s.input, Streaming: s.streaming}
	var vals map[string]any
	if reg != nil {
		vals = s.values.allRaw()
	}
	for k, v := range vals {
		tv, err := reg.encode(v)
		if err != nil {
			return rec, fmt.Errorf("session value %q: %w", k, err)
		}
		if rec.Values == nil {
			rec.Values = map[string]*typedValue{}
		}
		rec.Values[k] = tv
	}
	s.mu.Lock()
	entries := append([]*historyEntry(nil), s.history...)
	paths := make([][]RunStep, len(entries))
	for i, e := range entries {
		paths[i] = e.path
	}
	s.mu.Unlock()
	for i, e := range entries {
		rec.History = append(rec.History, historyRecord{Agent: e.agent, Path: paths[i], Message: e.message()})
	}
	return rec, nil
}

// restoreSession makes the session a checkpoint recorded. vals, when not
// nil, are the values to share (an agent tool's run shares its caller's).
func restoreSession(rec *sessionRecord, reg *typeRegistry, vals *values) (*session, error) {
	s := &session{values: vals, input: rec.Input, streaming: rec.Streaming}
	if s.values == nil {
		s.values = &values{}
		m := make(map[string]any, len(rec.Values))
		for k, tv := range rec.Values {
			v, err := reg.decode(tv)
			if err != nil {
				return nil, fmt.Errorf("%w: session value %q: %v", ErrBadCheckPoint, k, err)
			}
			m[k] = v
		}
		s.values.m = m
	}
	for _, h := range rec.History {
		s.history = append(s.history, &historyEntry{agent: h.Agent, path: h.Path, msg: h.Message})
	}
	return s, nil
}

// encodeCheckpoint writes the checkpoint of an interrupted run.
func encodeCheckpoint(s *session, f *frame, points []*InterruptPoint, reg *typeRegistry) ([]byte, error) {
	rec, err := s.snapshot(reg)
	if err != nil {
		return nil, err
	}
	return json.Marshal(&checkpoint{Version: CheckPointVersion, Session: rec, Frame: f, Points: points})
}

func decodeCheckpoint(data []byte) (*checkpoint, error) {
	var cp checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadCheckPoint, err)
	}
	if cp.Version != CheckPointVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads version %d", ErrBadCheckPoint, cp.Version, CheckPointVersion)
	}
	if err := validate(&cp.Session, cp.Frame); err != nil {
		return nil, err
	}
	return &cp, nil
}

// validate checks what a run resumes from, so a damaged checkpoint is
// refused with ErrBadCheckPoint instead of failing the run midway.
func validate(rec *sessionRecord, f *frame) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrBadCheckPoint, fmt.Sprintf(format, args...))
	}
	for i, m := range rec.Input {
		if m == nil {
			return bad("input message %d is null", i)
		}
	}
	for i, h := range rec.History {
		if h.Message == nil {
			return bad("history entry %d has no message", i)
		}
	}
	for k, v := range rec.Values {
		if v == nil {
			return bad("session value %q is null", k)
		}
	}
	var walk func(f *frame, where string) error
	walk = func(f *frame, where string) error {
		if f == nil {
			return bad("%s: no frame", where)
		}
		kinds := 0
		for _, set := range []bool{f.Flow != nil, f.Chat != nil, f.Steps != nil, f.Parallel != nil, f.Custom != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			return bad("%s: a frame must be of exactly one kind", where)
		}
		mark := func(m int) error {
			if m < 0 || m > len(rec.History) {
				return bad("%s: history mark %d outside 0..%d", where, m, len(rec.History))
			}
			return nil
		}
		switch {
		case f.Flow != nil:
			if (f.Flow.Inner == nil) == (f.Flow.Target == nil) || f.Flow.Target != nil && f.Flow.TransferTo == "" {
				return bad("%s: a flow frame needs either its agent's frame or a transfer target and its frame", where)
			}
			if f.Flow.Target != nil {
				return walk(f.Flow.Target, where+">"+f.Flow.TransferTo)
			}
			return walk(f.Flow.Inner, where)
		case f.Chat != nil:
			c := f.Chat
			if len(c.Messages) == 0 {
				return bad("%s: a chat frame without messages", where)
			}
			for i, m := range c.Messages {
				if m == nil {
					return bad("%s: chat message %d is null", where, i)
				}
			}
			last := c.Messages[len(c.Messages)-1]
			if last.Role != schema.Assistant || len(last.ToolCalls) != len(c.Calls) || c.Iteration < 0 {
				return bad("%s: a chat frame must end with the assistant message whose tool calls it lists", where)
			}
			open := false
			for i, call := range c.Calls {
				if (call.Result == nil) != call.Interrupted {
					return bad("%s: tool call %d must be either finished or interrupted", where, i)
				}
				open = open || call.Interrupted
			}
			if !open {
				return bad("%s: a chat frame with no interrupted call", where)
			}
		case f.Steps != nil:
			if f.Steps.Pass < 0 || f.Steps.Step < 0 {
				return bad("%s: negative step", where)
			}
			if err := mark(f.Steps.Mark); err != nil {
				return err
			}
			return walk(f.Steps.Inner, where)
		case f.Parallel != nil:
			if err := mark(f.Parallel.Mark); err != nil {
				return err
			}
			open := false
			for _, b := range f.Parallel.Branches {
				if b != nil {
					open = true
					if err := walk(b, where); err != nil {
						return err
					}
				}
			}
			if !open {
				return bad("%s: a parallel frame with no interrupted branch", where)
			}
		}
		return nil
	}
	return walk(f, "frame")
}

// MemoryCheckPointStore keeps checkpoints in memory, for tests and for
// runs that need not outlive their process. The zero value is ready to use.
type MemoryCheckPointStore struct {
	mu    sync.Mutex
	data  map[string][]byte
	locks ProcessLocks
}

// Get returns a copy of the checkpoint saved under id.
func (m *MemoryCheckPointStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.data[id]
	if !ok {
		return nil, false, nil
	}
	return append([]byte(nil), d...), true, nil
}

// Set saves a copy of data under id.
func (m *MemoryCheckPointStore) Set(_ context.Context, id string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.data == nil {
		m.data = map[string][]byte{}
	}
	m.data[id] = append([]byte(nil), data...)
	return nil
}

// Delete removes the checkpoint saved under id.
func (m *MemoryCheckPointStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.data, id)
	return nil
}

// Lock claims id for one run.
func (m *MemoryCheckPointStore) Lock(ctx context.Context, id string) (func(), error) {
	return m.locks.Lock(ctx, id)
}

// ProcessLocks is a CheckPointLocker whose claims hold within this process
// only: for stores that cannot keep runs apart across processes (a
// MemoryCheckPointStore uses one, and so does a Runner whose store is not
// a CheckPointLocker). The zero value is ready to use.
type ProcessLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

// Lock claims id, or fails with ErrCheckPointBusy while another claim holds
// it.
func (l *ProcessLocks) Lock(_ context.Context, id string) (func(), error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[id] {
		return nil, fmt.Errorf("%w: %s", ErrCheckPointBusy, id)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[id] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, id)
			l.mu.Unlock()
		})
	}, nil
}
