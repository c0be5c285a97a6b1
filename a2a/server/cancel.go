package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/telemetry"
)

// CancelTask cancels a task: the agent's Cancel hook is asked first, then
// a running agent is stopped and the task becomes CANCELED. Canceling a
// canceled task returns it unchanged; other terminal tasks cannot be
// canceled. With the generation extension active the task carries its
// generation.
func (h *Handler) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	e, err := h.cancelTask(ctx, req)
	if err != nil {
		return nil, err
	}
	if h.generations(ctx) {
		return withGeneration(e.Task, e.Seq), nil
	}
	return e.Task, nil
}

// cancelTask is CancelTask, returning the canceled task's entry.
func (h *Handler) cancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (taskstore.Entry, error) {
	var none taskstore.Entry
	if err := h.checkID("tenant", req.Tenant); err != nil {
		return none, err
	}
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return none, err
	}
	e, err := h.getTask(ctx, req.ID)
	if err != nil {
		return none, err
	}
	if done, err := canceledOrRefused(e.Task); done {
		return e, err
	}
	if err := h.askAgent(ctx, e.Task); err != nil {
		return none, err
	}
	s := h.slotRef(req.ID)
	defer h.slotUnref(s)
	for {
		s.mu.Lock()
		r, busy, free := s.run, s.busy, s.free
		if !busy {
			s.busy, s.free = true, make(chan struct{})
		}
		s.mu.Unlock()
		switch {
		case r != nil:
			// Stop the run, then look again: it may have settled in an
			// interrupted state just before it was stopped, and a
			// follow-up may have started another.
			forced, err := h.stopRun(ctx, s, r)
			if err != nil {
				return none, err
			}
			if forced {
				return h.canceledTask(ctx, req.ID)
			}
			continue
		case !busy:
			defer s.release()
			if h.replicas != nil {
				// The run may be another replica's: stop it there first,
				// so it does not go on behind the cancellation.
				if _, err := h.replicas.Cancel(ctx, req.ID); err != nil {
					return none, fmt.Errorf("cancel task %s on the replica running it: %w", req.ID, err)
				}
			}
			return h.cancelIdle(ctx, s)
		}
		select { // another cancellation holds the task
		case <-free:
		case <-ctx.Done():
			return none, ctx.Err()
		}
	}
}

// expire cancels a task that has waited for input for longer than
// InputTimeout, if it still has when it is taken: a message that resumed
// it meanwhile wins. It reports whether it canceled the task.
func (h *Handler) expire(ctx context.Context, id string) (bool, error) {
	s := h.slotRef(id)
	defer h.slotUnref(s)
	s.mu.Lock()
	if s.busy { // a run or a cancellation has it: it is not waiting
		s.mu.Unlock()
		return false, nil
	}
	s.busy, s.free = true, make(chan struct{})
	s.mu.Unlock()
	defer s.release()
	e, err := h.load(ctx, id)
	if err != nil {
		return false, err
	}
	st := e.Task.Status
	if !st.State.Interrupted() || time.Since(st.Timestamp) < h.limits.InputTimeout {
		return false, nil
	}
	if err := h.askAgent(ctx, e.Task); err != nil {
		return false, err
	}
	ev := a2a.NewStatusUpdate(id, e.Task.ContextID, a2a.TaskStateCanceled, a2a.NewTextMessage(a2a.RoleAgent,
		fmt.Sprintf("the task waited for input for longer than %v, this agent's limit, and was canceled", h.limits.InputTimeout)))
	s.mu.Lock()
	next, err := foldAll(e.Task, []a2a.Event{ev})
	if err == nil {
		// Exactly on the task as read: a replica that resumed it since
		// makes this write conflict, and the task is left to that run.
		_, err = h.writeLocked(context.WithoutCancel(ctx), s, &e, next, []a2a.Event{ev}, false)
	}
	s.mu.Unlock()
	switch {
	case errors.Is(err, eventlog.ErrConflict), errors.Is(err, eventlog.ErrSealed):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("cancel task %s: %w", id, err)
	}
	return true, nil
}

// canceledOrRefused settles a cancel of a terminal task.
func canceledOrRefused(t *a2a.Task) (bool, error) {
	switch s := t.Status.State; {
	case s == a2a.TaskStateCanceled:
		return true, nil
	case s.Terminal():
		return true, a2a.Errorf(a2a.CodeTaskNotCancelable, "task %q is already %s and cannot be canceled", t.ID, s)
	}
	return false, nil
}

// stopRun cancels a run of the task in this process and waits for it to
// end. An agent that ignores its context past CancelTimeout has the task
// marked canceled anyway (forced), and its later events are refused; it
// keeps the task's slot until it ends, so nobody waits for it.
func (h *Handler) stopRun(ctx context.Context, s *slot, r *run) (forced bool, err error) {
	r.cancel()
	timer := time.NewTimer(h.cancelTimeout)
	defer timer.Stop()
	select {
	case <-r.done:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-timer.C:
	}
	h.log.WarnContext(ctx, "a2a: agent did not stop after cancellation; marking the task canceled", "task", r.req.TaskID, "waited", h.cancelTimeout)
	e, err := h.load(ctx, r.req.TaskID)
	if err != nil {
		return false, fmt.Errorf("cancel task %s: %w", r.req.TaskID, err)
	}
	if !e.Task.Status.State.Terminal() {
		if err := h.commitCancel(ctx, s, &e); err != nil {
			return false, err
		}
	}
	return true, nil
}

// cancelIdle cancels a task that no agent is running here; the caller
// holds the task.
func (h *Handler) cancelIdle(ctx context.Context, s *slot) (taskstore.Entry, error) {
	e, err := h.getTask(ctx, s.id)
	if err != nil {
		return e, err
	}
	if done, err := canceledOrRefused(e.Task); done {
		return e, err
	}
	if err := h.commitCancel(ctx, s, &e); err != nil {
		return taskstore.Entry{}, err
	}
	return h.canceledTask(ctx, s.id)
}

// askAgent calls the executor's Cancel hook; only an ErrTaskNotCancelable
// refusal stops the cancellation.
func (h *Handler) askAgent(ctx context.Context, task *a2a.Task) error {
	err := h.exec.Cancel(ctx, task)
	if errors.Is(err, a2a.ErrTaskNotCancelable) {
		return a2a.AsError(err)
	}
	if err != nil {
		h.log.WarnContext(telemetry.WithTask(ctx, task.ID, task.ContextID), "a2a: the agent's cancel hook failed; canceling anyway", "task", task.ID, "err", err)
	}
	return nil
}

func (h *Handler) commitCancel(ctx context.Context, s *slot, e *taskstore.Entry) error {
	ev := a2a.NewStatusUpdate(e.Task.ID, e.Task.ContextID, a2a.TaskStateCanceled, a2a.NewTextMessage(a2a.RoleAgent, "the task was canceled"))
	s.mu.Lock()
	_, err := h.commitLocked(context.WithoutCancel(ctx), s, e, ev)
	s.mu.Unlock()
	if err != nil && !errors.Is(err, errTaskEnded) {
		return fmt.Errorf("cancel task %s: %w", e.Task.ID, err)
	}
	return nil
}

// canceledTask returns the task after a cancellation: canceled, or an
// error if it reached another final state first.
func (h *Handler) canceledTask(ctx context.Context, id string) (taskstore.Entry, error) {
	e, err := h.getTask(ctx, id)
	if err != nil {
		return e, err
	}
	if s := e.Task.Status.State; s != a2a.TaskStateCanceled {
		return taskstore.Entry{}, a2a.Errorf(a2a.CodeTaskNotCancelable, "task %q became %s before it could be canceled", id, s)
	}
	return e, nil
}
