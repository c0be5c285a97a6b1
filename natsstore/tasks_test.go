package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/a2a/taskstore/storetest"
	"github.com/a2amesh/a2amesh/natsstore"
)

func newTaskStore(t *testing.T, js jetstream.JetStream, ns string, cfg natsstore.TaskStoreConfig) *natsstore.TaskStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg.Log = newLog(t, js, ns)
	s, err := natsstore.NewTaskStore(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func testTask(id, ctxID string, state a2a.TaskState) *a2a.Task {
	return &a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: state, Timestamp: time.Now().UTC()}}
}

func listIDs(t *testing.T, s taskstore.Store) []string {
	t.Helper()
	p, err := s.List(context.Background(), taskstore.Query{PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, tk := range p.Tasks {
		ids = append(ids, tk.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestTaskStoreConformance(t *testing.T) {
	e := natsServer(t)
	js := replica(t, e)
	n := 0
	// Ended tasks written with a TTL (KeepEnded) take another write path.
	for _, keep := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("KeepEnded=", keep), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) taskstore.Store {
				n++
				return newTaskStore(t, js, fmt.Sprint("agent", n), natsstore.TaskStoreConfig{
					Bucket:    natsstore.BucketConfig{Name: fmt.Sprintf("TASKS_%d", n)},
					KeepEnded: keep,
				})
			})
		})
	}
}

// TestEndedTasksExpire: with KeepEnded, a task is dropped that long after
// it ends, created ended or updated to its end; running tasks stay.
func TestEndedTasksExpire(t *testing.T) {
	const keep = time.Second
	js := replica(t, natsServer(t))
	s := newTaskStore(t, js, "agent", natsstore.TaskStoreConfig{KeepEnded: keep})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ended := time.Now()
	if _, err := s.Create(ctx, taskstore.Entry{Task: testTask("born-ended", "c", a2a.TaskStateRejected), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	v, err := s.Create(ctx, taskstore.Entry{Task: testTask("ends", "c", a2a.TaskStateWorking), Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, taskstore.Entry{Task: testTask("ends", "c", a2a.TaskStateCompleted), Seq: 2, Version: v}); err != nil {
		t.Fatal(err)
	}
	// JetStream drops a message within milliseconds of its TTL: three
	// times it, from the first task's end, is plenty.
	deadline := ended.Add(3 * keep)
	if _, err := s.Create(ctx, taskstore.Entry{Task: testTask("runs", "c", a2a.TaskStateWorking), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"born-ended", "ends"} {
		for ; ; time.Sleep(20 * time.Millisecond) {
			_, err := s.Get(ctx, id)
			if errors.Is(err, taskstore.ErrNotFound) {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("task %s still there %v after it ended, with a TTL of %v (err %v)", id, time.Since(ended).Round(time.Millisecond), keep, err)
			}
		}
	}
	if e, err := s.Get(ctx, "runs"); err != nil || e.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the running task: %+v, %v", e, err)
	}
	if ids := listIDs(t, s); !slices.Equal(ids, []string{"runs"}) {
		t.Fatalf("List = %v, want only the running task", ids)
	}
}

func TestTaskStoreReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	a := newTaskStore(t, replica(t, e), "weather", natsstore.TaskStoreConfig{})
	b := newTaskStore(t, replica(t, e), "weather", natsstore.TaskStoreConfig{})

	v1, err := a.Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateSubmitted), Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "t1")
	if err != nil || got.Version != v1 || got.Seq != 1 || got.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("replica b Get = %+v, %v; want a's version %d", got, err, v1)
	}
	if _, err := b.Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateSubmitted), Seq: 1}); !errors.Is(err, taskstore.ErrExists) {
		t.Fatalf("replica b Create of a's task = %v, want ErrExists", err)
	}
	v2, err := b.Update(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateWorking), Seq: 2, Version: v1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Update(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateFailed), Seq: 2, Version: v1}); !errors.Is(err, taskstore.ErrConflict) {
		t.Fatalf("replica a Update from stale version = %v, want ErrConflict", err)
	}
	got, err = a.Get(ctx, "t1")
	if err != nil || got.Version != v2 || got.Seq != 2 || got.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("replica a Get = %+v, %v; want b's update (version %d)", got, err, v2)
	}
	if ids := listIDs(t, a); !slices.Equal(ids, []string{"t1"}) {
		t.Fatalf("replica a List = %v", ids)
	}
	if err := a.Delete(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "t1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("replica b Get after a's Delete = %v, want ErrNotFound", err)
	}
	if _, err := b.Update(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateCompleted), Seq: 3, Version: v2}); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("replica b Update after a's Delete = %v, want ErrNotFound", err)
	}
	if ids := listIDs(t, b); len(ids) != 0 {
		t.Fatalf("replica b List after Delete = %v", ids)
	}
	// The id is free again, though the delete marker is still there.
	if _, err := b.Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateSubmitted), Seq: 1}); err != nil {
		t.Fatalf("Create after Delete: %v", err)
	}
}

func TestTaskStoreNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	// "agent.x" must not fall under "agent"'s keys.
	a := newTaskStore(t, js, "agent", natsstore.TaskStoreConfig{})
	b := newTaskStore(t, js, "agent.x", natsstore.TaskStoreConfig{})
	if _, err := a.Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateWorking), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "t1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("other namespace Get = %v, want ErrNotFound", err)
	}
	if p, err := b.List(ctx, taskstore.Query{PageSize: 10}); err != nil || len(p.Tasks) != 0 || p.Total != 0 {
		t.Fatalf("other namespace List = %+v, %v; want empty", p, err)
	}
	// The same id is another task there.
	if _, err := b.Create(ctx, taskstore.Entry{Task: testTask("t1", "c2", a2a.TaskStateCompleted), Seq: 7}); err != nil {
		t.Fatal(err)
	}
	got, err := a.Get(ctx, "t1")
	if err != nil || got.Task.ContextID != "c1" || got.Seq != 1 {
		t.Fatalf("Get = %+v, %v; want the first namespace's task", got, err)
	}
	if ids := listIDs(t, a); !slices.Equal(ids, []string{"t1"}) {
		t.Fatalf("List = %v", ids)
	}
	if _, err := natsstore.NewTaskStore(ctx, js, natsstore.TaskStoreConfig{}); err == nil {
		t.Fatal("NewTaskStore without a log succeeded")
	}
}

func TestTaskStoreConcurrentCreation(t *testing.T) {
	e := natsServer(t)
	const n = 8
	jss := make([]jetstream.JetStream, n)
	for i := range jss {
		jss[i] = replica(t, e)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stores := make([]*natsstore.TaskStore, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			l, err := natsstore.NewLog(ctx, jss[i], natsstore.LogConfig{Namespace: "agent"})
			if err != nil {
				t.Errorf("NewLog %d: %v", i, err)
				return
			}
			s, err := natsstore.NewTaskStore(ctx, jss[i], natsstore.TaskStoreConfig{Log: l})
			if err != nil {
				t.Errorf("NewTaskStore %d: %v", i, err)
			}
			stores[i] = s
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if _, err := stores[0].Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateWorking), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[n-1].Get(ctx, "t1"); err != nil {
		t.Fatalf("the stores do not share a bucket: %v", err)
	}
}

func TestTaskStoreOddIDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	s := newTaskStore(t, replica(t, e), "ünï code/agent", natsstore.TaskStoreConfig{})
	ids := []string{"a.b c/ü", "*", ">", "a.>", "=x", "x", "YQ", "tab\tnew\nline", "0192f3c4-7d1e-7a00-8000-1234567890ab"}
	for i, id := range ids {
		if _, err := s.Create(ctx, taskstore.Entry{Task: testTask(id, "ctx "+id, a2a.TaskStateWorking), Seq: uint64(i + 1)}); err != nil {
			t.Fatalf("Create(%q): %v", id, err)
		}
	}
	for i, id := range ids {
		got, err := s.Get(ctx, id)
		if err != nil || got.Task.ID != id || got.Task.ContextID != "ctx "+id || got.Seq != uint64(i+1) {
			t.Fatalf("Get(%q) = %+v, %v", id, got, err)
		}
		if _, err := s.Update(ctx, taskstore.Entry{Task: testTask(id, "ctx "+id, a2a.TaskStateCompleted), Seq: 100, Version: got.Version}); err != nil {
			t.Fatalf("Update(%q): %v", id, err)
		}
	}
	want := slices.Sorted(slices.Values(ids))
	if got := listIDs(t, s); !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	if err := s.Delete(ctx, "a.b c/ü"); err != nil {
		t.Fatal(err)
	}
	if got := listIDs(t, s); len(got) != len(ids)-1 || slices.Contains(got, "a.b c/ü") {
		t.Fatalf("List after Delete = %q", got)
	}
}

// TestTaskStoreListMany lists more tasks than the watcher buffers (256),
// paging through them, and checks a returned task is the caller's own.
func TestTaskStoreListMany(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	s := newTaskStore(t, replica(t, e), "agent", natsstore.TaskStoreConfig{Bucket: natsstore.BucketConfig{Memory: true}})
	const n = 600
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		tk := testTask(fmt.Sprintf("t%03d", i), "c", a2a.TaskStateCompleted)
		tk.Status.Timestamp = base.Add(time.Duration(i) * time.Second)
		if _, err := s.Create(ctx, taskstore.Entry{Task: tk, Seq: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 3 {
		if err := s.Delete(ctx, fmt.Sprintf("t%03d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	token := ""
	for {
		p, err := s.List(ctx, taskstore.Query{PageSize: 97, PageToken: token, UpdatedAfter: base.Add(100 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != 334 {
			t.Fatalf("Total = %d, want 334", p.Total)
		}
		for _, tk := range p.Tasks {
			got = append(got, tk.ID)
		}
		if p.NextPageToken == "" {
			break
		}
		token = p.NextPageToken
	}
	if len(got) != 334 || got[0] != "t599" || got[len(got)-1] != "t100" {
		t.Fatalf("paged through %d tasks, %v … %v", len(got), got[:1], got[len(got)-1:])
	}

	e1, err := s.Get(ctx, "t001")
	if err != nil {
		t.Fatal(err)
	}
	e1.Task.Status.State = a2a.TaskStateFailed
	if e2, _ := s.Get(ctx, "t001"); e2.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatal("changing a returned task changed the stored one")
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.List(canceled, taskstore.Query{PageSize: 10}); err == nil {
		t.Fatal("List with a canceled context succeeded")
	}
	// Lists cut short while the watcher's buffer is full must not leave
	// its goroutine blocked (goleak checks after the tests).
	for i := range 40 {
		short, cancel := context.WithTimeout(ctx, time.Duration(i)*500*time.Microsecond)
		_, _ = s.List(short, taskstore.Query{PageSize: 10})
		cancel()
	}
}

func TestTaskStoreTTL(t *testing.T) {
	const ttl = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	s := newTaskStore(t, replica(t, e), "agent", natsstore.TaskStoreConfig{
		Bucket: natsstore.BucketConfig{Name: "TASKS_TTL", TTL: ttl, Memory: true},
	})
	written := time.Now()
	if _, err := s.Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateWorking), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	deadline := written.Add(3 * ttl)
	for {
		_, err := s.Get(ctx, "t1")
		if errors.Is(err, taskstore.ErrNotFound) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task is still there %v after it was written, with a TTL of %v", time.Since(written).Round(time.Millisecond), ttl)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ids := listIDs(t, s); len(ids) != 0 {
		t.Fatalf("List after the TTL = %v", ids)
	}
	if _, err := s.Create(ctx, taskstore.Entry{Task: testTask("t1", "c1", a2a.TaskStateWorking), Seq: 1}); err != nil {
		t.Fatalf("Create after the TTL: %v", err)
	}
}
