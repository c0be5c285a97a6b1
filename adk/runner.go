package adk

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/internal/outage"
)

// RunnerConfig configures a Runner.
type RunnerConfig struct {
	// Agent is the root of the agent tree the Runner runs.
	Agent Agent
	// EnableStreaming asks the agents for streamed output.
	EnableStreaming bool
	// CheckPointStore keeps the state of runs that interrupt, under the id
	// given with WithCheckPointID, for Resume. Without it runs still
	// interrupt, but cannot be resumed.
	CheckPointStore CheckPointStore
	// StateTypes name the types of session values that checkpoints bring
	// back as themselves; values of other types come back as plain JSON
	// values (SessionValue still decodes them into a type).
	StateTypes []StateType
}

// Runner runs an agent tree: each run gets its own session (values and
// history) that every agent of the run shares. A run that interrupts is
// saved as a checkpoint and continued by Resume, by this Runner or another
// one on the same store, in this process or after a restart.
type Runner struct {
	agent     *flowAgent
	streaming bool
	store     CheckPointStore
	types     *typeRegistry
	typesErr  error
	locks     ProcessLocks
}

// NewRunner returns a Runner for cfg.
func NewRunner(ctx context.Context, cfg RunnerConfig) *Runner {
	types, err := newTypeRegistry(cfg.StateTypes)
	return &Runner{agent: toFlowAgent(ctx, cfg.Agent), streaming: cfg.EnableStreaming, store: cfg.CheckPointStore,
		types: types, typesErr: err}
}

// Run starts a run on messages and returns its events; cancelling ctx ends
// it. With WithCheckPointID, a run that interrupts is saved under that id
// before its interrupt events are delivered.
func (r *Runner) Run(ctx context.Context, messages []*schema.Message, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	o := commonOptions(opts)
	in := &AgentInput{Messages: messages, EnableStreaming: r.streaming}
	s := newSession(nil, in)
	if o.sessionValues != nil {
		s.values.set(o.sessionValues)
	}
	ctx = withState(ctx, &runState{session: s, rootPath: o.runPath, callers: o.callers})
	return spawn(r.agent.name, func(emit emitFunc) {
		if r.typesErr != nil {
			emit(&AgentEvent{AgentName: r.agent.name, Err: r.typesErr})
			return
		}
		if o.checkPointID != "" && r.store != nil {
			unlock, err := r.lock(ctx, o.checkPointID)
			if err != nil {
				emit(&AgentEvent{AgentName: r.agent.name, Err: err})
				return
			}
			defer unlock()
		}
		r.keep(ctx, o.checkPointID, s, emit, func(emit emitFunc) *frame { return r.agent.runInline(ctx, in, opts, emit) })
		if o.onEnd != nil {
			o.onEnd(ctx)
		}
	})
}

// Query runs on a single user message.
func (r *Runner) Query(ctx context.Context, query string, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	return r.Run(ctx, []*schema.Message{schema.UserMessage(query)}, opts...)
}

// Resume continues the run saved under checkPointID; ResumeWith options
// give the interrupted points their input. It fails with
// ErrCheckPointNotFound for a checkpoint that does not exist (its run
// finished, or never interrupted) and with ErrCheckPointBusy while another
// run of it goes on. The checkpoint is replaced if the run interrupts
// again and deleted when it finishes.
func (r *Runner) Resume(ctx context.Context, checkPointID string, opts ...AgentRunOption) (*AsyncIterator[*AgentEvent], error) {
	switch {
	case r.typesErr != nil:
		return nil, r.typesErr
	case r.store == nil:
		return nil, errors.New("adk: the Runner has no CheckPointStore to resume from")
	case checkPointID == "":
		return nil, errors.New("adk: Resume needs a checkpoint id")
	}
	unlock, err := r.lock(ctx, checkPointID)
	if err != nil {
		return nil, err
	}
	cp, s, err := r.load(ctx, checkPointID)
	if err != nil {
		unlock()
		return nil, err
	}
	o := commonOptions(opts)
	if o.sessionValues != nil {
		s.values.set(o.sessionValues)
	}
	ctx = withState(ctx, &runState{session: s, resume: o.resume, rootPath: o.runPath, callers: o.callers})
	return spawn(r.agent.name, func(emit emitFunc) {
		defer unlock()
		r.keep(ctx, checkPointID, s, emit, func(emit emitFunc) *frame { return r.agent.resumeInline(ctx, cp.Frame, opts, emit) })
		if o.onEnd != nil {
			o.onEnd(ctx)
		}
	}), nil
}

func (r *Runner) load(ctx context.Context, id string) (*checkpoint, *session, error) {
	data, ok, err := r.store.Get(ctx, id)
	if err != nil {
		return nil, nil, fmt.Errorf("adk: checkpoint %s: %w", id, err)
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s", ErrCheckPointNotFound, id)
	}
	cp, err := decodeCheckpoint(data)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	s, err := restoreSession(&cp.Session, r.types, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint %s: %w", id, err)
	}
	return cp, s, nil
}

func (r *Runner) lock(ctx context.Context, id string) (func(), error) {
	if l, ok := r.store.(CheckPointLocker); ok {
		return l.Lock(ctx, id)
	}
	return r.locks.Lock(ctx, id)
}

// CheckPointOutage is how long a Runner retries saving or deleting the
// checkpoint of a run that ended while the store fails with
// ErrCheckPointUnavailable (or does not answer in time).
const CheckPointOutage = time.Minute

// outlast retries a checkpoint write through an outage of its store; both
// writes are safe to repeat.
func outlast(op func() error) error {
	return outage.Outlast(context.Background(), CheckPointOutage, func(err error) bool {
		return errors.Is(err, ErrCheckPointUnavailable) || errors.Is(err, context.DeadlineExceeded)
	}, nil, op)
}

// keep runs run and keeps its checkpoint: saved when it interrupts (before
// its interrupt events are delivered, so a caller that reacts to them can
// resume at once), deleted when it finishes.
func (r *Runner) keep(ctx context.Context, id string, s *session, emit emitFunc, run func(emitFunc) *frame) {
	var held []*AgentEvent
	var points []*InterruptPoint
	f := run(func(ev *AgentEvent) {
		if ev.Action != nil && ev.Action.Interrupted != nil {
			held = append(held, ev)
			points = append(points, ev.Action.Interrupted.Points...)
			return
		}
		emit(ev)
	})
	if id != "" && r.store != nil {
		// The run's own context may be cancelled; the checkpoint must
		// still be kept or dropped.
		sctx := context.WithoutCancel(ctx)
		if f == nil {
			if err := outlast(func() error { return r.store.Delete(sctx, id) }); err != nil {
				emit(&AgentEvent{AgentName: r.agent.name, Err: fmt.Errorf("adk: delete checkpoint %s: %w", id, err)})
			}
		} else if data, err := encodeCheckpoint(s, f, points, r.types); err != nil {
			emit(&AgentEvent{AgentName: r.agent.name, Err: fmt.Errorf("adk: checkpoint %s: %w", id, err)})
		} else if err := outlast(func() error { return r.store.Set(sctx, id, data) }); err != nil {
			emit(&AgentEvent{AgentName: r.agent.name, Err: fmt.Errorf("adk: save checkpoint %s: %w", id, err)})
		}
	}
	for _, ev := range held {
		emit(ev)
	}
}
