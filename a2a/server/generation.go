package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// The generation extension (a2a.GenerationExtension; docs/protocol.md,
// "Task generations"). A task's generation is the number of the last
// event of its log that what the server shows reflects: Entry.Seq for a
// snapshot, the event's own number for an event. The log numbers every
// event the task ever had, on whichever replica, so the generation is the
// same everywhere; and it is what SSE ids and the gRPC binding's event ids
// already say. Nothing is stored for it: the fields are set on copies of
// what a call with the extension active is answered with, and agents'
// events are stripped of any they carry (normalize, run.create).

// generations reports whether the call of ctx has the extension active:
// the card declares it, and the call, in A2A 1.0, names it.
func (h *Handler) generations(ctx context.Context) bool {
	if !h.generationsOffered {
		return false
	}
	call := CallInfoFrom(ctx)
	return call.ProtocolVersion == a2a.Version && slices.Contains(call.Extensions, a2a.GenerationExtension)
}

// offersGenerations reports whether a card declares the extension.
func offersGenerations(card *a2a.AgentCard) bool {
	return slices.ContainsFunc(card.Capabilities.Extensions, func(e a2a.AgentExtension) bool {
		return e.URI == a2a.GenerationExtension
	})
}

// ActiveExtensions returns the extensions the Handler activates for the
// call of ctx, of those it names (CallInfo.Extensions): those it serves
// and its card declares. A binding lists them in its answer's
// A2A-Extensions header (gRPC: metadata a2a-extensions), as the
// specification's extension activation asks, so that the client knows.
func (h *Handler) ActiveExtensions(ctx context.Context) []string {
	if h.generations(ctx) {
		return []string{a2a.GenerationExtension}
	}
	return nil
}

// withGeneration returns t carrying generation seq: a copy, since t may
// be a shared snapshot.
func withGeneration(t *a2a.Task, seq uint64) *a2a.Task {
	c := *t
	c.Generation = a2a.Generation(seq)
	return &c
}

// withEventGeneration returns ev, the event numbered seq, carrying its
// generation: a copy, since logged events are shared. A message has none.
func withEventGeneration(ev a2a.Event, seq uint64) a2a.Event {
	switch e := ev.(type) {
	case *a2a.Task:
		return withGeneration(e, seq)
	case *a2a.TaskStatusUpdateEvent:
		c := *e
		c.Generation = a2a.Generation(seq)
		return &c
	case *a2a.TaskArtifactUpdateEvent:
		c := *e
		c.Generation = a2a.Generation(seq)
		return &c
	}
	return ev
}

// numbered passes a stream's events on to yield each carrying its
// generation.
func numbered(yield func(eventlog.Entry, error) bool) func(eventlog.Entry, error) bool {
	return func(e eventlog.Entry, err error) bool {
		if err == nil && e.Seq > 0 {
			e.Event = withEventGeneration(e.Event, e.Seq)
		}
		return yield(e, err)
	}
}

// settledSeq returns the number of the last event of r.final: r.cur holds
// the task r settled with from when it settles (settleLocked, finish) on,
// and the run commits nothing after it. Call it once r.settled is closed.
func (r *run) settledSeq() uint64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.cur.Seq
}

// awaitGeneration waits until the task e is a snapshot of is past
// generation g, which its log tells on any replica, and returns the task
// as it then is; or as it is once generationWait has passed, the server
// is going away (EndStreams, Close), or the task has ended, after which
// its generation never rises. It fails when ctx ends (the client has gone)
// or the stores fail.
func (h *Handler) awaitGeneration(ctx context.Context, e taskstore.Entry, g a2a.Generation) (taskstore.Entry, error) {
	if g < 0 || e.Seq > uint64(g) || e.Task.Status.State.Terminal() {
		return e, nil
	}
	id := e.Task.ID
	wait, cancel := context.WithTimeout(ctx, h.generationWait)
	defer cancel()
	defer context.AfterFunc(h.drain.streams, cancel)()
	defer context.AfterFunc(h.base, cancel)()
	for le, err := range h.events.Subscribe(wait, id, e.Seq) {
		if err != nil {
			if wait.Err() != nil || errors.Is(err, eventlog.ErrNotFound) {
				break // the wait is over, or the log has expired: the task is as it is
			}
			return e, fmt.Errorf("wait for task %s past generation %d: %w", id, g, err)
		}
		if le.Seq > uint64(g) {
			break
		}
	}
	if err := ctx.Err(); err != nil {
		return e, err
	}
	return h.getTask(ctx, id)
}

// ifGenerationMatch returns the generation a send is conditional on: its
// configuration's ifGenerationMatch, honoured with the extension active.
func (h *Handler) ifGenerationMatch(ctx context.Context, req *a2a.SendMessageRequest) *a2a.Generation {
	if c := req.Configuration; c != nil && c.IfGenerationMatch != nil && h.generations(ctx) {
		return c.IfGenerationMatch
	}
	return nil
}

// checkGeneration refuses a follow-up conditional on generation want (nil:
// none) to the task e is a snapshot of, if the task is at another.
func checkGeneration(e taskstore.Entry, want *a2a.Generation) error {
	if want == nil || uint64(*want) == e.Seq {
		return nil
	}
	return generationMismatch(e.Task.ID, *want, strconv.FormatUint(e.Seq, 10))
}

// generationMismatch is the error of a follow-up conditional on generation
// want to a task at generation current ("" when not known), with the
// ErrorInfo metadata of the 1.1 draft's example.
func generationMismatch(taskID string, want a2a.Generation, current string) *a2a.Error {
	msg := fmt.Sprintf("task generation mismatch: expected %d but task %q", want, taskID)
	if current != "" {
		msg += " is at generation " + current
	} else {
		msg += " has changed"
	}
	e := a2a.Errorf(a2a.CodeTaskGenerationMismatch, "%s; get the task again before deciding whether to send", msg)
	e.Metadata = map[string]string{"taskId": taskID, "expectedGeneration": strconv.FormatInt(int64(want), 10)}
	if current != "" {
		e.Metadata["currentGeneration"] = current
	}
	return e
}

// commitExactly commits ev, a follow-up's first event, as the event after
// exactly those of *cur, under s.mu: a writer elsewhere (another replica)
// that got there first makes it fail with a mismatch of generation want,
// where commitLocked would fold ev into that writer's task. writeLocked
// without rebase reports that writer as the log's conflict (or seal), or,
// when one write commits the events and the snapshot
// (taskstore.Committer), as the snapshot's version conflict.
func (h *Handler) commitExactly(ctx context.Context, s *slot, cur *taskstore.Entry, ev a2a.Event, want a2a.Generation) (uint64, error) {
	next, err := foldAll(cur.Task, []a2a.Event{ev})
	if err != nil {
		return 0, err
	}
	seq, err := h.writeLocked(ctx, s, cur, next, []a2a.Event{ev}, false)
	lost := errors.Is(err, eventlog.ErrConflict) || errors.Is(err, eventlog.ErrSealed) ||
		h.journal != nil && errors.Is(err, taskstore.ErrConflict)
	if lost {
		current := ""
		if fresh, lerr := h.load(ctx, cur.Task.ID); lerr == nil {
			current = strconv.FormatUint(fresh.Seq, 10)
		}
		return 0, generationMismatch(cur.Task.ID, want, current)
	}
	return seq, err
}
