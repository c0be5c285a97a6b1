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
	if _, err := tasks.Create(ctx, taskstore.Entry{Task: snapshot, Seq: uint64(stored)}); err != nil {
		t.Fatal(err)
	}
	return tasks, events
}

func storedState(t *testing.T, tasks taskstore.Store, id string) (a2a.TaskState, uint64) {
	t.Helper()
	e, err := tasks.Get(context.Background(), id)
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
	if st, seq := storedState(t, tasks, "t"); st != a2a.TaskStateFailed || seq != 3 {
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
	if st, seq := storedState(t, tasks, "t"); st != a2a.TaskStateCompleted || seq != 3 {
		t.Fatalf("stored %s at event %d, want completed at 3", st, seq)
	}
}

// racingStore stores another writer's snapshot just before the first
// Update it is asked for, as a replica whose store write was in flight.
type racingStore struct {
	*taskstore.Memory
	other func()
}

func (s *racingStore) Update(ctx context.Context, e taskstore.Entry) (uint64, error) {
	if s.other != nil {
		s.other()
		s.other = nil
	}
	return s.Memory.Update(ctx, e)
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
		if _, err := mem.Update(ctx, taskstore.Entry{Task: working, Seq: 2, Version: 1}); err != nil {
			t.Error(err)
		}
	}
	h := newHandler(t, &script{}, func(c *server.Config) { c.Tasks, c.Events = tasks, events })
	if err := h.FailOrphan(ctx, "t", "replica gone"); err != nil {
		t.Fatal(err)
	}
	if st, seq := storedState(t, tasks, "t"); st != a2a.TaskStateFailed || seq != 3 {
		t.Fatalf("stored %s at event %d, want failed at 3", st, seq)
	}
}

// flakyLog fails appends with eventlog.ErrUnavailable: the first down
// ones before trying, then lost ones after storing the event (their
// answers lost). As eventlog.ErrUnavailable requires, the retry of an
// append whose answer was lost succeeds.
type flakyLog struct {
	*eventlog.Memory
	down, lost int
	stored     map[uint64]bool // appends whose answers were lost
}

func (l *flakyLog) Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	if l.stored[seq] {
		delete(l.stored, seq)
		return nil
	}
	if seq > 1 && l.down > 0 {
		l.down--
		return eventlog.ErrUnavailable
	}
	if err := l.Memory.Append(ctx, taskID, seq, events...); err != nil {
		return err
	}
	if seq > 1 && l.lost > 0 {
		l.lost--
		l.stored[seq] = true
		return eventlog.ErrUnavailable
	}
	return nil
}

// flakyStore stores updates but reports the first lost of them as
// unreachable, as a store whose answer was lost.
type flakyStore struct {
	*taskstore.Memory
	lost int
}

func (s *flakyStore) Update(ctx context.Context, e taskstore.Entry) (uint64, error) {
	v, err := s.Memory.Update(ctx, e)
	if err == nil && s.lost > 0 {
		s.lost--
		return 0, taskstore.ErrUnavailable
	}
	return v, err
}

// A run whose stores cannot be reached for a while waits for them: its
// commits are retried, and each event is logged and stored once.
func TestCommitOutlastsUnreachableStores(t *testing.T) {
	ctx := context.Background()
	events := &flakyLog{Memory: new(eventlog.Memory), down: 3, lost: 1, stored: map[uint64]bool{}}
	tasks := &flakyStore{Memory: new(taskstore.Memory), lost: 2}
	exec := &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		_ = yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) &&
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, a2a.NewTextMessage(a2a.RoleAgent, "done")), nil)
	}}
	h := newHandler(t, exec, func(c *server.Config) { c.Tasks, c.Events = tasks, events })
	task := sendTask(t, h, send("hi"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("the run ended %s", task.Status.State)
	}
	var seqs []uint64
	for e, err := range events.Subscribe(ctx, task.ID, 0) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	if len(seqs) != 3 {
		t.Fatalf("logged events %v, want 1 2 3", seqs)
	}
	if st, seq := storedState(t, tasks, task.ID); st != a2a.TaskStateCompleted || seq != 3 {
		t.Fatalf("stored %s at event %d, want completed at 3", st, seq)
	}
}
