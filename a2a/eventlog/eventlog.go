// Package eventlog keeps each task's events in order, numbered from 1, so
// that any stream can be replayed from any point and then followed live:
// the Log interface, and Memory, the in-process implementation. A durable
// implementation (a JetStream stream) satisfies the same interface and the
// same conformance suite (package logtest).
//
// A task's log is sealed by its terminal event: nothing can be appended
// after it and every subscription ends after delivering it.
//
// A log may hold events encoded, as a durable one does and as Memory does
// a sealed log's: each replay of them is then new events, equal to those
// appended as their 1.0 JSON decodes (metadata in JSON's own types), not
// the pointers appended.
package eventlog

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/a2amesh/a2amesh/a2a"
)

// Errors a Log returns; test with errors.Is.
var (
	ErrNotFound = errors.New("eventlog: no events for task")
	// ErrConflict means the appended sequence number is not the next one:
	// another writer got there first.
	ErrConflict = errors.New("eventlog: sequence conflict")
	ErrSealed   = errors.New("eventlog: task log is sealed by a terminal event")
	// ErrUnavailable means a log kept elsewhere cannot be reached at the
	// moment: the call was not made, or its outcome is unknown, and the
	// same call may succeed later. An Append that failed so may have
	// stored its event; the same Append retried then succeeds, and the
	// event is stored once.
	ErrUnavailable = errors.New("eventlog: the log cannot be reached")
)

// Entry is one event of a task's log.
type Entry struct {
	// Seq numbers the task's events: 1 for the first, rising by one.
	Seq   uint64
	Event a2a.Event
}

// Log stores and replays task events. Implementations are safe for
// concurrent use; events stored are shared and must not be modified.
type Log interface {
	// Append stores events as the task's events numbered seq, seq+1, …:
	// all of them or, on error, none. seq must be one more than the last
	// (1 starts a task's log); otherwise it fails with ErrConflict. A
	// terminal status seals the log, so it may only be the last of events
	// (ErrSealed). Appending no events does nothing. A writer appends
	// several at once to pay for one write instead of one per event.
	Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error
	// Subscribe yields the task's events numbered above after, in order,
	// then waits for and yields new ones as they are appended. It ends
	// after the sealing event, when ctx is done (yielding ctx.Err()), or
	// when the consumer stops; a task with no log yields ErrNotFound.
	Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[Entry, error]
	// Last returns the number of the task's last event; a task with no
	// log fails with ErrNotFound. It lets a reader of a task snapshot,
	// which is written after its event, tell whether the log is ahead.
	Last(ctx context.Context, taskID string) (uint64, error)
	// Delete drops the task's log; deleting a missing log is not an error.
	Delete(ctx context.Context, taskID string) error
}

// Seals reports whether ev ends its task's log: a terminal state.
func Seals(ev a2a.Event) bool {
	s, ok := a2a.StateOf(ev)
	return ok && s.Terminal()
}

// CheckBatch refuses, with ErrSealed, events to be appended from seq on
// that hold a sealing event before their last; Log implementations call it.
func CheckBatch(taskID string, seq uint64, events []a2a.Event) error {
	for i, ev := range events[:len(events)-1] {
		if Seals(ev) {
			return fmt.Errorf("%w: task %s: event %d ends the task, %d more follow it", ErrSealed, taskID, seq+uint64(i), len(events)-1-i)
		}
	}
	return nil
}
