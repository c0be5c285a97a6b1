// Package storetest is the conformance suite every taskstore.Store
// implementation runs: in-memory and durable stores behave the same.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// Run runs the suite against stores made by newStore, one per subtest.
func Run(t *testing.T, newStore func(t *testing.T) taskstore.Store) {
	t.Run("CreateGet", func(t *testing.T) { testCreateGet(t, newStore(t)) })
	t.Run("Update", func(t *testing.T) { testUpdate(t, newStore(t)) })
	t.Run("ConcurrentUpdates", func(t *testing.T) { testConcurrentUpdates(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newStore(t)) })
	t.Run("List", func(t *testing.T) { testList(t, newStore(t)) })
	t.Run("Pagination", func(t *testing.T) { testPagination(t, newStore(t)) })
	t.Run("Owners", func(t *testing.T) { testOwners(t, newStore(t)) })
}

var base = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func task(id, ctxID string, state a2a.TaskState, at time.Duration) *a2a.Task {
	return &a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: state, Timestamp: base.Add(at)}}
}

func testCreateGet(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "missing"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("Get(missing) = %v, want ErrNotFound", err)
	}
	v, err := s.Create(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateSubmitted, 0), Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if e.Task.ID != "t1" || e.Task.ContextID != "c1" || e.Seq != 1 || e.Version != v {
		t.Fatalf("Get = %+v (version %d)", e, v)
	}
	if _, err := s.Create(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateSubmitted, 0), Seq: 1}); !errors.Is(err, taskstore.ErrExists) {
		t.Fatalf("second Create = %v, want ErrExists", err)
	}
}

func testUpdate(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	v1, err := s.Create(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateSubmitted, 0), Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := s.Update(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateWorking, time.Second), Seq: 2, Version: v1})
	if err != nil {
		t.Fatal(err)
	}
	if v2 == v1 {
		t.Fatal("version did not change")
	}
	if _, err := s.Update(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateFailed, 2*time.Second), Seq: 3, Version: v1}); !errors.Is(err, taskstore.ErrConflict) {
		t.Fatalf("stale Update = %v, want ErrConflict", err)
	}
	e, _ := s.Get(ctx, "t1")
	if e.Task.Status.State != a2a.TaskStateWorking || e.Seq != 2 || e.Version != v2 {
		t.Fatalf("after updates: %+v", e)
	}
	if _, err := s.Update(ctx, taskstore.Entry{Task: task("nope", "c", a2a.TaskStateWorking, 0), Seq: 2, Version: 1}); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("Update(missing) = %v, want ErrNotFound", err)
	}
}

func testConcurrentUpdates(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	v, err := s.Create(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateWorking, 0), Seq: 1})
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Update(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateWorking, time.Duration(i)), Seq: 2, Version: v})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, taskstore.ErrConflict):
				t.Errorf("Update: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d concurrent updates from one version won, want exactly 1", wins)
	}
}

func testDelete(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	if _, err := s.Create(ctx, taskstore.Entry{Task: task("t1", "c1", a2a.TaskStateCompleted, 0), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "t1"); !errors.Is(err, taskstore.ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	if err := s.Delete(ctx, "t1"); err != nil {
		t.Fatalf("second Delete = %v", err)
	}
}

func ids(p taskstore.Page) []string {
	out := make([]string, len(p.Tasks))
	for i, t := range p.Tasks {
		out[i] = t.ID
	}
	return out
}

func testList(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	for _, tk := range []*a2a.Task{
		task("a", "c1", a2a.TaskStateCompleted, 1*time.Second),
		task("b", "c1", a2a.TaskStateWorking, 3*time.Second),
		task("c", "c2", a2a.TaskStateWorking, 2*time.Second),
		task("d", "c2", a2a.TaskStateFailed, 4*time.Second),
	} {
		if _, err := s.Create(ctx, taskstore.Entry{Task: tk, Seq: 1}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		q    taskstore.Query
		want []string
	}{
		{taskstore.Query{PageSize: 10}, []string{"d", "b", "c", "a"}},
		{taskstore.Query{PageSize: 10, ContextID: "c1"}, []string{"b", "a"}},
		{taskstore.Query{PageSize: 10, State: a2a.TaskStateWorking}, []string{"b", "c"}},
		{taskstore.Query{PageSize: 10, UpdatedAfter: base.Add(2 * time.Second)}, []string{"d", "b", "c"}},
		{taskstore.Query{PageSize: 10, ContextID: "c2", State: a2a.TaskStateCompleted}, []string{}},
	}
	for _, tt := range tests {
		p, err := s.List(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p); fmt.Sprint(got) != fmt.Sprint(tt.want) || p.Total != len(tt.want) || p.NextPageToken != "" {
			t.Errorf("List(%+v) = %v total %d next %q, want %v", tt.q, got, p.Total, p.NextPageToken, tt.want)
		}
	}
}

func testPagination(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	const n = 23
	for i := range n {
		// Pairs share a timestamp, so the id breaks ties.
		if _, err := s.Create(ctx, taskstore.Entry{Task: task(fmt.Sprintf("t%02d", i), "c", a2a.TaskStateCompleted, time.Duration(i/2)*time.Second), Seq: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("pagination does not end")
		}
		p, err := s.List(ctx, taskstore.Query{PageSize: 5, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if p.Total != n {
			t.Fatalf("Total = %d, want %d", p.Total, n)
		}
		got = append(got, ids(p)...)
		if p.NextPageToken == "" {
			break
		}
		token = p.NextPageToken
	}
	if len(got) != n {
		t.Fatalf("paged through %d tasks, want %d: %v", len(got), n, got)
	}
	for i := 1; i < n; i++ {
		if got[i-1] <= got[i] {
			t.Fatalf("order broken at %d: %v", i, got)
		}
	}
	if _, err := s.List(ctx, taskstore.Query{PageSize: 5, PageToken: "not-a-token"}); !errors.Is(err, taskstore.ErrInvalidPageToken) {
		t.Fatalf("bad token: %v", err)
	}
}

// testOwners checks that a task keeps its owner through updates and that
// List keeps one owner's tasks apart from another's, in every kind of
// query, with totals and pages of that owner alone.
func testOwners(t *testing.T, s taskstore.Store) {
	ctx := context.Background()
	for _, e := range []taskstore.Entry{
		{Task: task("a", "c1", a2a.TaskStateCompleted, 1*time.Second), Seq: 1, Owner: "acme/alice"},
		{Task: task("b", "c1", a2a.TaskStateWorking, 3*time.Second), Seq: 1, Owner: "acme/bob"},
		{Task: task("c", "c1", a2a.TaskStateWorking, 2*time.Second), Seq: 1, Owner: "acme/alice"},
		{Task: task("d", "c2", a2a.TaskStateWorking, 4*time.Second), Seq: 1, Owner: "acme/alice"},
		{Task: task("e", "c2", a2a.TaskStateWorking, 5*time.Second), Seq: 1, Owner: "other/alice"},
	} {
		if _, err := s.Create(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	e, err := s.Get(ctx, "c")
	if err != nil || e.Owner != "acme/alice" {
		t.Fatalf("Get(c) = %+v, %v; want owner acme/alice", e, err)
	}
	e.Task = task("c", "c1", a2a.TaskStateCompleted, 6*time.Second)
	e.Seq = 2
	if _, err := s.Update(ctx, e); err != nil {
		t.Fatal(err)
	}
	if e, err = s.Get(ctx, "c"); err != nil || e.Owner != "acme/alice" || e.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("Get(c) after Update = %+v, %v; want it completed, owner acme/alice", e, err)
	}
	tests := []struct {
		q    taskstore.Query
		want []string
	}{
		{taskstore.Query{PageSize: 10, Owner: "acme/alice"}, []string{"c", "d", "a"}},
		{taskstore.Query{PageSize: 10, Owner: "acme/bob"}, []string{"b"}},
		{taskstore.Query{PageSize: 10, Owner: "nobody"}, []string{}},
		{taskstore.Query{PageSize: 10, Owner: "acme/alice", ContextID: "c1"}, []string{"c", "a"}},
		{taskstore.Query{PageSize: 10, Owner: "acme/alice", ContextID: "c2"}, []string{"d"}},
		{taskstore.Query{PageSize: 10, Owner: "acme/bob", ContextID: "c2"}, []string{}},
		{taskstore.Query{PageSize: 10, Owner: "acme/alice", State: a2a.TaskStateWorking}, []string{"d"}},
		{taskstore.Query{PageSize: 10, Owner: "acme/alice", ContextID: "c1", State: a2a.TaskStateCompleted}, []string{"c", "a"}},
		{taskstore.Query{PageSize: 10, Owner: "acme/alice", UpdatedAfter: base.Add(2 * time.Second)}, []string{"c", "d"}},
		{taskstore.Query{PageSize: 10}, []string{"c", "e", "d", "b", "a"}},
		{taskstore.Query{PageSize: 10, State: a2a.TaskStateWorking}, []string{"e", "d", "b"}},
	}
	for _, tt := range tests {
		p, err := s.List(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(p); fmt.Sprint(got) != fmt.Sprint(tt.want) || p.Total != len(tt.want) || p.NextPageToken != "" {
			t.Errorf("List(%+v) = %v total %d next %q, want %v", tt.q, got, p.Total, p.NextPageToken, tt.want)
		}
	}
	p, err := s.List(ctx, taskstore.Query{PageSize: 2, Owner: "acme/alice"})
	if err != nil || fmt.Sprint(ids(p)) != "[c d]" || p.Total != 3 || p.NextPageToken == "" {
		t.Fatalf("first page of 2 = %v total %d next %q, %v", ids(p), p.Total, p.NextPageToken, err)
	}
	if p, err = s.List(ctx, taskstore.Query{PageSize: 2, Owner: "acme/alice", PageToken: p.NextPageToken}); err != nil || fmt.Sprint(ids(p)) != "[a]" || p.NextPageToken != "" {
		t.Fatalf("second page of 2 = %v next %q, %v", ids(p), p.NextPageToken, err)
	}
}
