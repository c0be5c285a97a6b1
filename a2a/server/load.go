package server

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// load reads a task as its log has it: the stored snapshot with the events
// the log holds past it folded in. A commit logs an event before it stores
// the snapshot, so the snapshot trails the log while a write is under way on
// any replica, and for good when its writer died between the two. The entry
// keeps the stored Version: the next commit's compare-and-swap then both
// detects other writers and stores the caught-up snapshot.
func (h *Handler) load(ctx context.Context, id string) (taskstore.Entry, error) {
	e, err := h.tasks.Get(ctx, id)
	if err != nil {
		return e, err
	}
	return h.catchUp(ctx, e)
}

// catchUp folds into e the events of its task's log numbered above e.Seq.
func (h *Handler) catchUp(ctx context.Context, e taskstore.Entry) (taskstore.Entry, error) {
	id := e.Task.ID
	last, err := h.events.Last(ctx, id)
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		// The log was deleted or has expired; the snapshot is all there is.
		return e, nil
	case err != nil:
		return e, fmt.Errorf("read the log of task %s: %w", id, err)
	case last <= e.Seq:
		return e, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cur, seq := private(e.Task), e.Seq
	for le, err := range h.events.Subscribe(ctx, id, e.Seq) {
		if err != nil {
			return e, fmt.Errorf("read the log of task %s past event %d: %w", id, seq, err)
		}
		if le.Seq != seq+1 {
			return e, fmt.Errorf("the log of task %s has event %d after %d: events are missing (retention?)", id, le.Seq, seq)
		}
		if cur, err = apply(cur, le.Event); err != nil {
			return e, fmt.Errorf("event %d of task %s: %w", le.Seq, id, err)
		}
		if seq = le.Seq; seq >= last {
			break
		}
	}
	return taskstore.Entry{Task: cur, Seq: seq, Version: e.Version, Owner: e.Owner}, nil
}

// restore stores the snapshot of the task's log, which holds event seq,
// after a commit's compare-and-swap lost to another replica's store: the
// event is logged, and the snapshot must not stay behind it. It returns the
// entry stored, which may be past seq.
func (h *Handler) restore(ctx context.Context, id string, seq uint64) (taskstore.Entry, error) {
	var err error
	for range 3 {
		var stored, e taskstore.Entry
		if stored, err = h.tasks.Get(ctx, id); err != nil {
			return stored, err
		}
		if stored.Seq >= seq {
			return stored, nil
		}
		if e, err = h.catchUp(ctx, stored); err != nil {
			return e, err
		}
		if e.Version, err = h.tasks.Update(ctx, e); !errors.Is(err, taskstore.ErrConflict) {
			return e, err
		}
	}
	return taskstore.Entry{}, err
}

// private returns a copy of t that apply may extend in place without
// touching t's slices, which readers of t share.
func private(t *a2a.Task) *a2a.Task {
	c := *t
	c.History = slices.Clip(c.History)
	c.Artifacts = slices.Clone(c.Artifacts)
	for i := range c.Artifacts {
		c.Artifacts[i].Parts = slices.Clip(c.Artifacts[i].Parts)
	}
	return &c
}
