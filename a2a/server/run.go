package server

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/internal/outage"
)

// run is one execution of the agent for one message on one task. Its
// goroutine is the only writer of the task while it holds the slot, except
// for a cancellation that gives up waiting for it.
//
// A run commits its events in groups (Config.CommitDelay): each event is
// folded into head at once, so bad events are refused where they occur
// and a settling one is seen, and joins pending; the group is written
// when an event settles the task, when a caller needs the task stored, or
// when the delay is up (a timer). Only committed events are seen by
// anyone: cur, feed and the stores.
type run struct {
	h      *Handler
	s      *slot
	req    *ExecRequest
	ctx    context.Context
	cancel context.CancelFunc
	// eager commits the task as soon as it exists: the caller returns it
	// at once (returnImmediately) and may read it anywhere.
	eager bool

	started chan struct{} // closed when the reply is decided
	settled chan struct{} // closed at the first terminal or interrupted state
	done    chan struct{} // closed when the run has released the task

	// Set before started is closed.
	reply    *a2a.Message // a direct reply; no task was created
	err      error        // the run failed before creating a task
	first    *a2a.Task    // the snapshot when the run started
	firstSeq uint64       // the sequence number of the run's first event

	// Set before settled is closed.
	final    *a2a.Task
	unstored error // why the task was never stored; final is nil

	// Guarded by s.mu, which the commit timer takes too.
	cur      taskstore.Entry // the task as last committed; no Task before its first commit
	head     *a2a.Task       // cur.Task with pending applied
	pending  []a2a.Event     // events folded into head, not yet committed
	flushErr error           // a group's commit failed: the run ends with it
	timer    *time.Timer     // commits the pending group CommitDelay after it began
	armed    bool            // timer is set, and counted in h.wg

	// feed passes committed events to the streams following this run.
	feed feed

	// Owned by the run goroutine.
	pushCfg   *push.Config // registered with the send, saved once the task exists
	isStarted bool
	isSettled bool
	permit    bool       // the run holds one of Limits.MaxRuns, returned when it ends
	counted   bool       // the run is counted as going on (enterRun), until it ends
	size      int        // the task's estimated size with the events folded so far
	span      trace.Span // the run's, when spans are recorded (observeRun)
}

// errTaskEnded means the task reached a terminal state through another
// writer (a forced cancellation, another replica): the run stops quietly.
var errTaskEnded = errors.New("task already ended")

// storeError wraps a failure to write a task's events or snapshot.
type storeError struct{ err error }

func (e storeError) Error() string { return e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

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
	r.end()
	if !r.isStarted {
		r.err = a2a.Errorf(a2a.CodeInternal, "the server is shutting down")
		r.markStarted()
		r.markSettled(nil)
	}
	r.endSpan(r.err)
	r.feed.end(nil)
	close(r.done)
}

// end gives back the run's permit and ends its count.
func (r *run) end() {
	if r.permit {
		r.permit = false
		r.h.releaseRun()
	}
	if r.counted {
		r.counted = false
		r.h.exitRun()
	}
}

// execute runs the agent and applies its events until the task settles.
func (r *run) execute() {
	h := r.h
	defer h.wg.Done()
	defer func() {
		r.s.mu.Lock()
		r.disarmLocked()
		r.s.mu.Unlock()
		r.feed.end(r.unstored)
		r.s.release()
		h.slotUnref(r.s)
		r.cancel()
		r.end()
		close(r.done)
	}()
	var outcome error
	func() {
		defer func() {
			if p := recover(); p != nil {
				h.log.ErrorContext(r.ctx, "a2a: agent panicked", "task", r.req.TaskID, "panic", p, "stack", string(debug.Stack()))
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
	r.endSpan(outcome)
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
		if stop, err := r.create(initial, ok); err != nil || ok {
			return stop, err
		}
	}
	if err := r.commit(ev); err != nil {
		return false, err
	}
	return r.isSettled, nil
}

// create starts a new task from the agent's first event; the task itself
// when event is set, else a submitted task the event then updates.
func (r *run) create(t *a2a.Task, event bool) (stop bool, err error) {
	h, req := r.h, r.req
	if err := checkIDs(&a2a.Task{ID: req.TaskID, ContextID: req.ContextID}, t.ID, t.ContextID); err != nil {
		return false, invalidEvent{err}
	}
	if !t.Status.State.Valid() {
		return false, invalidEvent{fmt.Errorf("initial task state %q is not a task state", t.Status.State)}
	}
	t.ID, t.ContextID, t.Generation = req.TaskID, req.ContextID, 0 // the server numbers events (generation.go)
	fillStatus(&t.Status, t.ID, t.ContextID)
	if len(t.History) == 0 {
		t.History = []a2a.Message{*req.Message}
	}
	if err := checkArtifacts(t.Artifacts); err != nil {
		return false, invalidEvent{err}
	}
	if r.size = sizeOfTask(t); r.size > h.limits.MaxTaskBytes {
		return false, r.tooLarge()
	}
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.firstSeq, r.first = 1, t
	// A webhook's deliveries read the task's log, so it must be there.
	if err := r.addLocked(t, t, r.eager || r.pushCfg != nil); err != nil {
		return false, err
	}
	if r.pushCfg != nil {
		r.pushCfg.TaskID = t.ID
		if err := h.pushCfgs.Save(context.WithoutCancel(r.ctx), *r.pushCfg); err != nil {
			h.log.WarnContext(r.ctx, "a2a: saving the push notification config of a new task failed", "task", t.ID, "err", err)
		} else {
			h.ensurePushLocked(r.s, 0)
		}
	}
	r.markStarted()
	r.settleLocked()
	return event && r.isSettled, nil
}

// commit folds ev into the run's task and commits it, with the events
// pending before it, when it must (see run).
func (r *run) commit(ev a2a.Event) error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.flushErr != nil {
		return r.flushErr
	}
	n := sizeOfEvent(ev)
	if r.size+n > r.h.limits.MaxTaskBytes && !eventlog.Seals(ev) {
		// A final status is let through so the task can end saying why.
		return r.tooLarge()
	}
	next, logged, err := fold(r.head, ev)
	if err != nil {
		if r.head.Status.State.Terminal() {
			return errTaskEnded
		}
		return invalidEvent{err}
	}
	r.size += n
	if err := r.addLocked(next, logged, false); err != nil {
		return err
	}
	r.settleLocked()
	return nil
}

// addLocked makes next, which logged led to, the run's head, and commits
// the pending group now when asked to, when there is no delay, or when
// next settles the task; otherwise it sets the timer.
func (r *run) addLocked(next *a2a.Task, logged a2a.Event, now bool) error {
	r.head = next
	r.pending = append(r.pending, logged)
	if now || r.h.commitDelay <= 0 || next.Status.State.Settled() {
		return r.flushLocked()
	}
	if !r.armed {
		r.armed = true
		r.h.wg.Add(1) // the run holds a count, so Close is not done waiting
		if r.timer == nil {
			r.timer = time.AfterFunc(r.h.commitDelay, r.flushLater)
		} else {
			r.timer.Reset(r.h.commitDelay)
		}
	}
	return nil
}

// flushLater commits the pending group when the timer fires; a failure
// ends the run at its next event (or at its end).
func (r *run) flushLater() {
	defer r.h.wg.Done()
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.armed {
		r.armed = false
		if err := r.flushLocked(); err != nil && r.cur.Task == nil {
			// The task could not be created: stop the agent, and the
			// run ends with the error (kept in r.flushErr).
			r.cancel()
		}
	}
}

// disarmLocked stops the timer if it has not fired; a timer already firing
// finds nothing to do, or commits what is pending.
func (r *run) disarmLocked() {
	if r.armed && r.timer.Stop() {
		r.armed = false
		r.h.wg.Done()
	}
}

// flushLocked commits the pending group and passes it to the feed. A
// failed commit drops the group: the run ends with the error.
func (r *run) flushLocked() error {
	if r.flushErr != nil || len(r.pending) == 0 {
		return r.flushErr
	}
	r.disarmLocked()
	evs := r.pending
	r.pending = nil
	first, err := r.h.writeLocked(context.WithoutCancel(r.ctx), r.s, &r.cur, r.head, evs, true)
	r.head = r.cur.Task
	if err != nil {
		r.flushErr = err
		return err
	}
	r.feed.add(first, evs)
	return nil
}

// tooLarge is why a run ends whose agent would make its task larger than
// Limits.MaxTaskBytes.
func (r *run) tooLarge() error {
	return a2a.Errorf(a2a.CodeInternal, "the agent's output would take the task past %d bytes, the most this agent keeps per task", r.h.limits.MaxTaskBytes)
}

// settleLocked marks the run settled once its task is, as committed.
func (r *run) settleLocked() {
	if t := r.cur.Task; t != nil && len(r.pending) == 0 && t.Status.State.Settled() {
		r.markSettled(t)
	}
}

// commitLocked applies evs to *cur and commits them under s.mu, returning
// the number of the first. The caller is not a run of the task: the run
// holding it, if any, has given up (see stopRun).
func (h *Handler) commitLocked(ctx context.Context, s *slot, cur *taskstore.Entry, evs ...a2a.Event) (uint64, error) {
	next, err := foldAll(cur.Task, evs)
	if err != nil {
		return 0, err
	}
	return h.writeLocked(ctx, s, cur, next, evs, true)
}

// foldAll folds evs into a private copy of t (a run that gave up may
// still extend t's slices in place).
func foldAll(t *a2a.Task, evs []a2a.Event) (*a2a.Task, error) {
	next := private(t)
	for _, ev := range evs {
		var err error
		if next, _, err = fold(next, ev); err != nil {
			if t.Status.State.Terminal() {
				return nil, errTaskEnded
			}
			return nil, invalidEvent{err}
		}
	}
	return next, nil
}

// writeLocked logs evs, already folded into next, as the events after
// *cur (the first when cur has no Task) and stores next as the snapshot,
// under s.mu: in one write when the task store holds the log too
// (taskstore.Committer), whose version check catches a writer elsewhere.
// Otherwise the log is written first: it is the record of what happened,
// and its sequence check catches a writer elsewhere that got there first,
// after which evs are folded into that writer's task instead; the store
// then follows the log. It returns the number evs got.
//
// A writer elsewhere that got there first makes the log refuse evs; with
// rebase, evs are then folded into that writer's task and written again,
// else the write fails with the log's conflict.
func (h *Handler) writeLocked(ctx context.Context, s *slot, cur *taskstore.Entry, next *a2a.Task, evs []a2a.Event, rebase bool) (uint64, error) {
	id := next.ID
	// A task not yet stored is a request still being answered: when the
	// stores cannot be reached it fails at once rather than wait for them.
	retry := h.outlast
	if cur.Task == nil {
		retry = func(op func() error) error { return op() }
	}
	for attempt := 0; ; attempt++ {
		seq := cur.Seq + 1
		last := seq + uint64(len(evs)) - 1
		stored := taskstore.Entry{Task: next, Seq: last, Owner: cur.Owner}
		var err error
		if h.journal != nil {
			// One write: the events and the snapshot they lead to.
			err = retry(func() (err error) {
				stored.Version, err = h.journal.Commit(ctx, taskstore.Entry{Task: next, Seq: last, Version: cur.Version, Owner: cur.Owner}, evs...)
				return err
			})
			if errors.Is(err, taskstore.ErrConflict) && attempt == 0 && cur.Task != nil && rebase {
				if next, err = h.rebase(ctx, cur, evs); err != nil {
					return 0, err
				}
				continue
			}
			if err != nil {
				return 0, storeError{fmt.Errorf("commit event %d of task %s: %w", seq, id, err)}
			}
		} else {
			err = retry(func() error { return h.events.Append(ctx, id, seq, evs...) })
			if (errors.Is(err, eventlog.ErrConflict) || errors.Is(err, eventlog.ErrSealed)) && attempt == 0 && cur.Task != nil && rebase {
				if next, err = h.rebase(ctx, cur, evs); err != nil {
					return 0, err
				}
				continue
			}
			if err != nil {
				return 0, storeError{fmt.Errorf("log event %d of task %s: %w", seq, id, err)}
			}
			if cur.Task == nil {
				err = retry(func() (err error) { stored.Version, err = h.tasks.Create(ctx, stored); return err })
			} else {
				err = h.outlast(func() (err error) {
					stored.Version, err = h.tasks.Update(ctx, taskstore.Entry{Task: next, Seq: last, Version: cur.Version, Owner: cur.Owner})
					return err
				})
			}
			if errors.Is(err, taskstore.ErrConflict) || errors.Is(err, taskstore.ErrExists) {
				// Another replica stored the task since it was read, or a
				// write retried after its answer was lost had been stored.
				err = h.outlast(func() (err error) { stored, err = h.restore(ctx, id, last); return err })
			}
			if err != nil {
				return 0, storeError{fmt.Errorf("store task %s at event %d: %w", id, last, err)}
			}
		}
		var wasState a2a.TaskState
		if cur.Task != nil {
			wasState = cur.Task.Status.State
		}
		h.noteCommit(wasState, evs)
		was := stateClass(cur.Task)
		*cur = stored
		s.lastSeq = stored.Seq
		if now := stateClass(stored.Task); now != was {
			size := 0
			if now == classFinished {
				size = sizeOfTask(stored.Task) + int(stored.Seq)*eventMemory
			}
			h.noteState(id, stored.Task.Status.State, size)
		}
		return seq, nil
	}
}

// rebase reloads the task into *cur after someone else wrote it, and
// returns evs folded into it.
func (h *Handler) rebase(ctx context.Context, cur *taskstore.Entry, evs []a2a.Event) (*a2a.Task, error) {
	id := cur.Task.ID
	var fresh taskstore.Entry
	err := h.outlast(func() (err error) { fresh, err = h.load(ctx, id); return err })
	if err != nil {
		return nil, storeError{fmt.Errorf("reload task %s: %w", id, err)}
	}
	*cur = fresh
	return foldAll(fresh.Task, evs)
}

// The classes of task states the Handler's accounting tells apart.
const (
	classNone = iota // no task yet
	classActive
	classWaiting
	classFinished
)

func stateClass(t *a2a.Task) int {
	switch {
	case t == nil:
		return classNone
	case t.Status.State.Terminal():
		return classFinished
	case t.Status.State.Interrupted():
		return classWaiting
	}
	return classActive
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
	// A group the timer failed to commit is lost: the run ends with why.
	r.s.mu.Lock()
	failed := r.flushErr
	r.flushErr = nil
	lost := failed != nil && r.cur.Task == nil
	r.s.mu.Unlock()
	if outcome == nil {
		outcome = failed
	}
	if lost {
		// The task was never stored: the caller gets the error instead.
		h.log.InfoContext(r.ctx, "a2a: a new task could not be stored", "task", r.req.TaskID, "err", outcome)
		r.unstored = outcome
		r.markSettled(nil)
		return
	}
	state, text := a2a.TaskStateFailed, "the agent's run ended before the task reached a final or interrupted state"
	switch {
	case errors.Is(outcome, errTaskEnded):
		state = ""
	case h.base.Err() != nil:
		// Close, not CancelTask: the client should know it may send again.
		state, text = a2a.TaskStateCanceled, "the task was canceled: the agent's server shut down before it finished; send the message again"
	case r.ctx.Err() != nil:
		state, text = a2a.TaskStateCanceled, "the task was canceled"
	case errors.As(outcome, new(storeError)):
		// The stores' text is for the operator, not for every reader of
		// the task.
		text = "the task could not be stored, so its run was stopped; the agent's log says why"
		h.log.ErrorContext(r.ctx, "a2a: task failed: its events could not be stored", "task", r.req.TaskID, "err", outcome)
	case outcome != nil:
		text = outcome.Error()
		h.log.InfoContext(r.ctx, "a2a: task failed", "task", r.req.TaskID, "err", outcome)
	}
	if state != "" {
		ev := a2a.NewStatusUpdate(r.req.TaskID, r.req.ContextID, state, a2a.NewTextMessage(a2a.RoleAgent, text))
		if err := r.commit(ev); err != nil && !errors.Is(err, errTaskEnded) {
			h.log.ErrorContext(r.ctx, "a2a: recording the end of a run failed", "task", r.req.TaskID, "err", err)
		}
	}
	e, err := h.load(context.WithoutCancel(r.ctx), r.req.TaskID)
	r.s.mu.Lock()
	if err == nil {
		r.cur, r.head = e, e.Task
	}
	final := r.cur.Task
	r.s.mu.Unlock()
	r.markSettled(final)
}
