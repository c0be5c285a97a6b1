package server_test

import (
	"context"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// crashed sets up what a replica leaves when it dies between logging a
// task's events and storing its snapshot: the store has the task at event
// stored, the log has every event of logged.
func crashed(t *testing.T, stored int, logged ...a2a.TaskState) (*taskstore.Memory, *eventlog.Memory) {
	t.Helper()
	ctx := context.Background()
	tasks, events := new(taskstore.Memory), new(eventlog.Memory)
	snapshot := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: logged[0]}}
	if err := events.Append(ctx, "t", 1, snapshot); err != nil {
		t.Fatal(err)
	}
	for i, s := range logged[1:] {
		ev := a2a.NewStatusUpdate("t", "c", s, a2a.NewTextMessage(a2a.RoleAgent, string(s)))
		if err := events.Append(ctx, "t", uint64(i+2), ev); err != nil {
			t.Fatal(err)
		}
		if i+2 <= stored {
			snapshot = &a2a.Task{ID: "t", ContextID: "c", Status: ev.Status}
		}
	}
	if _, err := tasks.Create(ctx, snapshot, uint64(stored)); err != nil {
		t.Fatal(err)
	}
	return tasks, events
}

func storedState(t *testing.T, tasks taskstore.Store) (a2a.TaskState, uint64) {
	t.Helper()
	e, err := tasks.Get(context.Background(), "t")
	if err != nil {
		t.Fatal(err)
	}
	return e.Task.Status.State, e.Seq
}

// A snapshot behind its log: readers see the log's state, and the next
// writer appends after the log's last event and stores the snapshot.
func TestSnapshotBehindItsLog(t *testing.T) {
	ctx := context.Background()
	tasks, events := crashed(t, 1, a2a.TaskStateSubmitted, a2a.TaskStateWorking)
	h := newHandler(t, &script{}, func(c *server.Config) { c.Tasks, c.Events = tasks, events })

	task, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: "t"})
	if err != nil || task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("GetTask = %v, %v; want the log's state, working", task, err)
	}
	if err := h.FailOrphan(ctx, "t", "replica gone"); err != nil {
		t.Fatal(err)
	}
	if st, seq := storedState(t, tasks); st != a2a.TaskStateFailed || seq != 3 {
		t.Fatalf("stored %s at event %d, want failed at 3", st, seq)
	}
	task, err = h.GetTask(ctx, &a2a.GetTaskRequest{ID: "t"})
	if err != nil || len(task.History) != 1 || task.History[0].Parts[0].Text != string(a2a.TaskStateWorking) {
		t.Fatalf("GetTask = %+v, %v; want the working message in history", task, err)
	}
}

// A replica that died after logging its task's terminal event but before
// storing it: the sweep stores the terminal snapshot instead of failing a
// task that has ended.
func TestSweepRepairsAnEndedTask(t *testing.T) {
	tasks, events := crashed(t, 2, a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted)
	h := newHandler(t, &script{}, func(c *server.Config) { c.Tasks, c.Events = tasks, events })
	if err := h.FailOrphan(context.Background(), "t", "replica gone"); err != nil {
		t.Fatal(err)
	}
	if st, seq := storedState(t, tasks); st != a2a.TaskStateCompleted || seq != 3 {
		t.Fatalf("stored %s at event %d, want completed at 3", st, seq)
	}
}

// racingStore stores another writer's snapshot just before the first
// Update it is asked for, as a replica whose store write was in flight.
type racingStore struct {
	*taskstore.Memory
	other func()
}

func (s *racingStore) Update(ctx context.Context, task *a2a.Task, seq, prev uint64) (uint64, error) {
	if s.other != nil {
		s.other()
		s.other = nil
	}
	return s.Memory.Update(ctx, task, seq, prev)
}

// A commit whose snapshot write loses to another replica's (which stored
// an older event): the event is logged, so the commit stores the snapshot
// of the whole log rather than failing or leaving the store behind.
func TestCommitAfterALostSnapshotRace(t *testing.T) {
	ctx := context.Background()
	mem, events := crashed(t, 1, a2a.TaskStateSubmitted, a2a.TaskStateWorking)
	tasks := &racingStore{Memory: mem}
	tasks.other = func() {
		working := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		if _, err := mem.Update(ctx, working, 2, 1); err != nil {
			t.Error(err)
		}
	}
	h := newHandler(t, &script{}, func(c *server.Config) { c.Tasks, c.Events = tasks, events })
	if err := h.FailOrphan(ctx, "t", "replica gone"); err != nil {
		t.Fatal(err)
	}
	if st, seq := storedState(t, tasks); st != a2a.TaskStateFailed || seq != 3 {
		t.Fatalf("stored %s at event %d, want failed at 3", st, seq)
	}
}
