package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
)

// Replicas connects the replicas of an agent that share its task store and
// event log. A replica that is asked to cancel a task it is not running
// asks the replica that is; a transport (natsstore.Replicas) carries the
// question and calls StopRun on the other side.
type Replicas interface {
	// Cancel asks the replica running the task to stop its run and
	// reports whether one did. false with no error means no live replica
	// runs it: its run ended, or its replica died.
	Cancel(ctx context.Context, taskID string) (bool, error)
}

// StopRun stops this replica's run of the task, if it has one, and waits
// until it has ended (or CancelTimeout, after which the task is marked
// canceled anyway). It reports whether there was a run. A Replicas
// transport calls it when another replica is asked to cancel the task.
func (h *Handler) StopRun(ctx context.Context, taskID string) (bool, error) {
	s := h.slotRef(taskID)
	defer h.slotUnref(s)
	s.mu.Lock()
	r := s.run
	s.mu.Unlock()
	if r == nil {
		return false, nil
	}
	if _, err := h.stopRun(ctx, s, r); err != nil {
		return true, err
	}
	return true, nil
}

// FailOrphan ends a task that a replica that has died was running: if no
// run of it is going on here and it is still submitted or working, it
// fails with reason. Interrupted tasks are left alone, since any replica
// resumes them from their checkpoint. A Replicas transport calls it when
// a replica stops renewing its lease.
func (h *Handler) FailOrphan(ctx context.Context, taskID, reason string) error {
	s := h.slotRef(taskID)
	defer h.slotUnref(s)
	s.mu.Lock()
	busy := s.busy
	s.mu.Unlock()
	if busy {
		return nil
	}
	stored, err := h.tasks.Get(ctx, taskID)
	if err != nil {
		return fmt.Errorf("fail orphaned task %s: %w", taskID, err)
	}
	e, err := h.catchUp(ctx, stored)
	if err != nil {
		return fmt.Errorf("fail orphaned task %s: %w", taskID, err)
	}
	if st := e.Task.Status.State; st != a2a.TaskStateSubmitted && st != a2a.TaskStateWorking {
		if e.Seq > stored.Seq {
			// The replica died between logging the task's last event and
			// storing its snapshot: store the snapshot, or every sweep
			// would find the task running.
			if _, err := h.restore(ctx, taskID, e.Seq); err != nil {
				return fmt.Errorf("repair the snapshot of task %s: %w", taskID, err)
			}
		}
		return nil
	}
	ev := a2a.NewStatusUpdate(taskID, e.Task.ContextID, a2a.TaskStateFailed, a2a.NewTextMessage(a2a.RoleAgent, reason))
	s.mu.Lock()
	_, err = h.commitLocked(ctx, s, &e, ev)
	s.mu.Unlock()
	if err != nil && !errors.Is(err, errTaskEnded) {
		return fmt.Errorf("fail orphaned task %s: %w", taskID, err)
	}
	return nil
}
