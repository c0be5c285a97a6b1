package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/internal/outage"
)

// run is one execution of the agent for one message on one task. Its
// goroutine is the only writer of the task while it holds the slot, except
// for a cancellation that gives up waiting for it.
type run struct {
	h      *Handler
	s      *slot
	req    *ExecRequest
	ctx    context.Context
	cancel context.CancelFunc

	started chan struct{} // closed when the reply is decided
	settled chan struct{} // closed at the first terminal or interrupted state
	done    chan struct{} // closed when the run has released the task

	// Set before started is closed.
	reply    *a2a.Message // a direct reply; no task was created
	err      error        // the run failed before creating a task
	first    *a2a.Task    // the snapshot when the run started
	firstSeq uint64       // the sequence number of the run's first event

	// Set before settled is closed.
	final *a2a.Task

	// cur is the task as last committed; it is written under s.mu, where
	// a cancellation reads it.
	cur taskstore.Entry
	// Owned by the run goroutine.
	pushCfg   *push.Config // registered with the send, saved once the task exists
	isStarted bool
	isSettled bool
}

// errTaskEnded means the task reached a terminal state through another
// writer (a forced cancellation, another replica): the run stops quietly.
var errTaskEnded = errors.New("task already ended")

// invalidEvent wraps a violation of the executor contract.
type invalidEvent struct{ err error }

func (e invalidEvent) Error() string { return "the agent produced an invalid event: " + e.err.Error() }
func (e invalidEvent) Unwrap() error { return e.err }

func (h *Handler) newRun(req *ExecRequest) *run {
	ctx, cancel := context.WithCancel(h.base)
	return &run{
		h: h, req: req, ctx: ctx, cancel: cancel,
		started: make(chan struct{}), settled: make(chan struct{}), done: make(chan struct{}),
	}
}

// abandon releases a run that will not execute.
func (r *run) abandon() {
	r.s.release()
	r.h.slotUnref(r.s)
	r.cancel()
	if !r.isStarted {
		r.err = a2a.Errorf(a2a.CodeInternal, "the server is shutting down")
		r.markStarted()
		r.markSettled(nil)
	}
	close(r.done)
}

// execute runs the agent and applies its events until the task settles.
func (r *run) execute() {
	h := r.h
	defer h.wg.Done()
	defer func() {
		r.s.release()
		h.slotUnref(r.s)
		r.cancel()
		close(r.done)
	}()
	var outcome error
	func() {
		defer func() {
			if p := recover(); p != nil {
				h.log.Error("a2a: agent panicked", "task", r.req.TaskID, "panic", p, "stack", string(debug.Stack()))
				outcome = fmt.Errorf("the agent failed: panic: %v", p)
			}
		}()
		for ev, err := range h.exec.Execute(r.ctx, r.req) {
			if err != nil {
				outcome = err
				return
			}
			stop, err := r.handle(ev)
			if err != nil {
				outcome = err
				return
			}
			if stop {
				return
			}
		}
	}()
	r.finish(outcome)
}

// handle applies one event; stop reports that the run is over.
func (r *run) handle(ev a2a.Event) (stop bool, err error) {
	if ev == nil {
		return false, invalidEvent{errors.New("nil event")}
	}
	if !r.isStarted {
		if m, ok := ev.(*a2a.Message); ok {
			fillMessage(m, "", r.req.ContextID, a2a.RoleAgent)
			m.TaskID = ""
			r.reply = m
			r.markStarted()
			r.markSettled(nil)
			return true, nil
		}
		initial, ok := ev.(*a2a.Task)
		if !ok {
			initial = &a2a.Task{ID: r.req.TaskID, ContextID: r.req.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
			// Refuse a bad first event before a task exists, so the client
			// gets the error instead of a failed task.
			id, ctxID := ev.TaskIDs()
			if err := checkIDs(initial, id, ctxID); err != nil {
				return false, invalidEvent{err}
			}
		}
		if err := r.create(initial); err != nil {
			return false, err
		}
		if ok {
			return r.settleIf(), nil
		}
	}
	if err := r.commit(ev); err != nil {
		return false, err
	}
	return r.settleIf(), nil
}

// create stores a new task from the agent's first event.
func (r *run) create(t *a2a.Task) error {
	h, req := r.h, r.req
	if err := checkIDs(&a2a.Task{ID: req.TaskID, ContextID: req.ContextID}, t.ID, t.ContextID); err != nil {
		return invalidEvent{err}
	}
	if !t.Status.State.Valid() {
		return invalidEvent{fmt.Errorf("initial task state %q is not a task state", t.Status.State)}
	}
	t.ID, t.ContextID = req.TaskID, req.ContextID
	fillStatus(&t.Status, t.ID, t.ContextID)
	if len(t.History) == 0 {
		t.History = []a2a.Message{*req.Message}
	}
	if err := checkArtifacts(t.Artifacts); err != nil {
		return invalidEvent{err}
	}
	ctx := context.WithoutCancel(r.ctx)
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if err := h.events.Append(ctx, t.ID, 1, t); err != nil {
		return fmt.Errorf("log task %s: %w", t.ID, err)
	}
	ver, err := h.tasks.Create(ctx, t, 1)
	if err != nil {
		return fmt.Errorf("store task %s: %w", t.ID, err)
	}
	r.cur = taskstore.Entry{Task: t, Seq: 1, Version: ver}
	r.s.lastSeq = 1
	if t.Status.State.Terminal() {
		h.noteEnded(t.ID)
	}
	r.firstSeq, r.first = 1, t
	if r.pushCfg != nil {
		r.pushCfg.TaskID = t.ID
		if err := h.pushCfgs.Save(ctx, *r.pushCfg); err != nil {
			h.log.Warn("a2a: saving the push notification config of a new task failed", "task", t.ID, "err", err)
		} else {
			h.ensurePushLocked(r.s, 0)
		}
	}
	r.markStarted()
	return nil
}

// commit folds ev into the task, logs it and stores the new snapshot.
func (r *run) commit(ev a2a.Event) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.h.commitLocked(context.WithoutCancel(r.ctx), r.s, &r.cur, ev)
}

// commitLocked applies ev to *cur under s.mu. The log is written first: it
// is the record of what happened, and its sequence check catches a writer
// elsewhere that got there first; the store then follows it.
func (h *Handler) commitLocked(ctx context.Context, s *slot, cur *taskstore.Entry, ev a2a.Event) error {
	for attempt := 0; ; attempt++ {
		next, logged, err := fold(cur.Task, ev)
		if err != nil {
			if cur.Task.Status.State.Terminal() {
				return errTaskEnded
			}
			return invalidEvent{err}
		}
		seq := cur.Seq + 1
		err = h.outlast(func() error { return h.events.Append(ctx, cur.Task.ID, seq, logged) })
		if (errors.Is(err, eventlog.ErrConflict) || errors.Is(err, eventlog.ErrSealed)) && attempt == 0 {
			// Someone else wrote the task: start again from its state.
			var fresh taskstore.Entry
			err := h.outlast(func() (err error) { fresh, err = h.load(ctx, cur.Task.ID); return err })
			if err != nil {
				return fmt.Errorf("reload task %s: %w", cur.Task.ID, err)
			}
			*cur = fresh
			continue
		}
		if err != nil {
			return fmt.Errorf("log event %d of task %s: %w", seq, cur.Task.ID, err)
		}
		stored := taskstore.Entry{Task: next, Seq: seq}
		err = h.outlast(func() (err error) { stored.Version, err = h.tasks.Update(ctx, next, seq, cur.Version); return err })
		if errors.Is(err, taskstore.ErrConflict) {
			// Another replica stored the task since it was read, or an
			// update retried after its answer was lost had been stored.
			err = h.outlast(func() (err error) { stored, err = h.restore(ctx, cur.Task.ID, seq); return err })
		}
		if err != nil {
			return fmt.Errorf("store task %s at event %d: %w", cur.Task.ID, seq, err)
		}
		wasTerminal := cur.Task.Status.State.Terminal()
		*cur = stored
		s.lastSeq = stored.Seq
		next = stored.Task
		if !wasTerminal && next.Status.State.Terminal() {
			h.noteEnded(next.ID)
		}
		return nil
	}
}

// outlast calls op until the stores can be reached again, for up to
// storeOutage (see outage.Outlast): a run goes on across a restart of the
// stores' server. Retrying commit writes is safe: a log stores an event
// once, and a snapshot update that landed makes its retry conflict, which
// commitLocked resolves.
func (h *Handler) outlast(op func() error) error {
	return outage.Outlast(h.base, h.storeOutage, unreachable, func(err error) {
		h.log.Warn("a2a: the task stores cannot be reached; the run waits for them", "err", err, "for", h.storeOutage)
	}, op)
}

// unreachable reports whether err says a store could not be reached (or
// did not answer in time), rather than refused the call.
func unreachable(err error) bool {
	return errors.Is(err, eventlog.ErrUnavailable) || errors.Is(err, taskstore.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// settleIf marks the run settled when the task's state ends the run.
func (r *run) settleIf() bool {
	if r.cur.Task.Status.State.Settled() {
		r.markSettled(r.cur.Task)
		return true
	}
	return false
}

func (r *run) markStarted() {
	if !r.isStarted {
		r.isStarted = true
		close(r.started)
	}
}

func (r *run) markSettled(final *a2a.Task) {
	if !r.isSettled {
		r.isSettled = true
		r.final = final
		close(r.settled)
	}
}

// finish ends a run that stopped for a reason other than settling: the
// events ended, the agent failed, or the run was canceled.
func (r *run) finish(outcome error) {
	h := r.h
	if !r.isStarted {
		switch {
		case outcome == nil && h.base.Err() != nil:
			outcome = a2a.Errorf(a2a.CodeInternal, "the server is shutting down")
		case outcome == nil && r.ctx.Err() != nil:
			outcome = a2a.Errorf(a2a.CodeInternal, "the run was canceled before the agent replied")
		case outcome == nil:
			outcome = a2a.Errorf(a2a.CodeInvalidAgentResponse, "the agent ended without producing a task or a message")
		}
		var ie invalidEvent
		if errors.As(outcome, &ie) {
			outcome = a2a.Errorf(a2a.CodeInvalidAgentResponse, "%s", ie.Error())
		}
		r.err = outcome
		r.markStarted()
		r.markSettled(nil)
		return
	}
	if r.isSettled {
		return
	}
	state, text := a2a.TaskStateFailed, "the agent's run ended before the task reached a final or interrupted state"
	switch {
	case errors.Is(outcome, errTaskEnded):
		state = ""
	case r.ctx.Err() != nil:
		state, text = a2a.TaskStateCanceled, "the task was canceled"
	case outcome != nil:
		text = outcome.Error()
		h.log.Info("a2a: task failed", "task", r.req.TaskID, "err", outcome)
	}
	if state != "" {
		ev := a2a.NewStatusUpdate(r.req.TaskID, r.req.ContextID, state, a2a.NewTextMessage(a2a.RoleAgent, text))
		if err := r.commit(ev); err != nil && !errors.Is(err, errTaskEnded) {
			h.log.Error("a2a: recording the end of a run failed", "task", r.req.TaskID, "err", err)
		}
	}
	if e, err := h.load(context.WithoutCancel(r.ctx), r.req.TaskID); err == nil {
		r.s.mu.Lock() // a cancellation may be reading r.cur
		r.cur = e
		r.s.mu.Unlock()
	}
	r.markSettled(r.cur.Task)
}
