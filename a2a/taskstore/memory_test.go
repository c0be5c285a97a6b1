package taskstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"

	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/a2a/taskstore/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(*testing.T) taskstore.Store { return new(taskstore.Memory) })
}

// TestMemoryListMatchesScan checks the indexed List against sorting every
// matching task (Paginate), over random creates, updates that move tasks
// between contexts, states and times, deletes, and every kind of query,
// paged to the end.
func TestMemoryListMatchesScan(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { testListMatchesScan(t, seed) })
	}
}

func testListMatchesScan(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 2))
	m := new(taskstore.Memory)
	live := map[string]taskstore.Entry{}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// A few shared contexts, and one of each task's own (whose indexes
	// empty and fill again as the task moves).
	contexts := []string{"a", "b", "c", "own"}
	states := []a2a.TaskState{a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateInputRequired}
	owners := []string{"x", "y"}
	random := func(id string) *a2a.Task {
		ctx := contexts[rng.IntN(len(contexts))]
		if ctx == "own" {
			ctx += id[1:]
		}
		return &a2a.Task{ID: id, ContextID: ctx, Status: a2a.TaskStatus{
			State: states[rng.IntN(len(states))], Timestamp: base.Add(time.Duration(rng.IntN(50)) * time.Second)}}
	}
	for step := range 3000 {
		id := fmt.Sprintf("t%03d", rng.IntN(50))
		e, exists := live[id]
		switch op := rng.IntN(10); {
		case !exists:
			task := random(id)
			owner := owners[rng.IntN(len(owners))]
			v, err := m.Create(ctx, taskstore.Entry{Task: task, Seq: 1, Owner: owner})
			if err != nil {
				t.Fatal(err)
			}
			live[id] = taskstore.Entry{Task: task, Version: v, Owner: owner}
		case op < 6:
			task := random(id)
			if op < 3 { // only the snapshot changes
				c := *e.Task
				c.Metadata = map[string]any{"step": step}
				task = &c
			}
			v, err := m.Update(ctx, taskstore.Entry{Task: task, Seq: 1, Version: e.Version, Owner: e.Owner})
			if err != nil {
				t.Fatal(err)
			}
			live[id] = taskstore.Entry{Task: task, Version: v, Owner: e.Owner}
		default:
			if err := m.Delete(ctx, id); err != nil {
				t.Fatal(err)
			}
			delete(live, id)
		}
		if step%100 != 99 {
			continue
		}
		queries := []taskstore.Query{
			{PageSize: 7},
			{PageSize: 7, ContextID: "a"},
			{PageSize: 7, State: a2a.TaskStateWorking},
			{PageSize: 7, ContextID: "b", State: a2a.TaskStateCompleted},
			{PageSize: 7, UpdatedAfter: base.Add(25 * time.Second)},
			{PageSize: 3, ContextID: "c", UpdatedAfter: base.Add(10 * time.Second)},
			{PageSize: 5, ContextID: "none"},
			{PageSize: 5, ContextID: "own003"},
			{PageSize: 5, ContextID: "own004", State: a2a.TaskStateWorking},
			{PageSize: 5, ContextID: "own005", State: a2a.TaskStateCompleted},
		}
		for _, q := range queries {
			// The same queries of one owner's tasks.
			q.Owner = owners[step%len(owners)]
			queries = append(queries, q)
		}
		for _, q := range queries {
			var want []*a2a.Task
			for _, e := range live {
				if q.Matches(e) {
					want = append(want, e.Task)
				}
			}
			all := taskstore.Paginate(want, nil, len(want)+1).Tasks
			var got []*a2a.Task
			for pages := 0; ; pages++ {
				p, err := m.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if p.Total != len(all) {
					t.Fatalf("step %d, %+v: total %d, want %d", step, q, p.Total, len(all))
				}
				got = append(got, p.Tasks...)
				if p.NextPageToken == "" || pages > 200 {
					break
				}
				q.PageToken = p.NextPageToken
			}
			if len(got) != len(all) {
				t.Fatalf("step %d, %+v: %d tasks over the pages, want %d", step, q, len(got), len(all))
			}
			for i := range got {
				// A finished task is held packed, and read back as a new
				// snapshot of the same task.
				g, _ := a2a.AppendJSON(nil, got[i])
				w, _ := a2a.AppendJSON(nil, all[i])
				if got[i].ID != all[i].ID || string(g) != string(w) {
					t.Fatalf("step %d, %+v: task %d is %s, want %s", step, q, i, g, w)
				}
			}
		}
	}
}

// BenchmarkMemoryList lists the first page of a store of 200,000 tasks,
// unfiltered and by state; an indexed List costs about the same at any
// size (a scan and sort cost about a second per call at 700,000).
func BenchmarkMemoryList(b *testing.B) {
	ctx := context.Background()
	m := new(taskstore.Memory)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200_000 {
		state := a2a.TaskStateCompleted
		if i%100 == 0 {
			state = a2a.TaskStateWorking
		}
		task := &a2a.Task{ID: fmt.Sprintf("t%06d", i), ContextID: fmt.Sprint("c", i%1000), Status: a2a.TaskStatus{State: state, Timestamp: base.Add(time.Duration(i) * time.Millisecond)}}
		if _, err := m.Create(ctx, taskstore.Entry{Task: task, Seq: 1}); err != nil {
			b.Fatal(err)
		}
	}
	for _, q := range []taskstore.Query{{PageSize: 100}, {PageSize: 100, State: a2a.TaskStateWorking}} {
		b.Run(fmt.Sprintf("state=%s", q.State), func(b *testing.B) {
			for b.Loop() {
				p, err := m.List(ctx, q)
				if err != nil || len(p.Tasks) != 100 {
					b.Fatal(len(p.Tasks), err)
				}
			}
		})
	}
}

// BenchmarkMemoryLifecycle is what a task costs the store over its life
// (created, working, an artifact, completed, deleted), with 20,000 others
// kept: what an A2A server does per task.
func BenchmarkMemoryLifecycle(b *testing.B) {
	ctx := context.Background()
	m := new(taskstore.Memory)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) }
	task := func(id string, i int, s a2a.TaskState) *a2a.Task {
		return &a2a.Task{ID: id, ContextID: "c" + id, Status: a2a.TaskStatus{State: s, Timestamp: at(i)}}
	}
	for i := range 20_000 {
		if _, err := m.Create(ctx, taskstore.Entry{Task: task(fmt.Sprint("old", i), i, a2a.TaskStateCompleted), Seq: 1}); err != nil {
			b.Fatal(err)
		}
	}
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = fmt.Sprint("t", i)
	}
	i := 20_000
	for b.Loop() {
		id := ids[i%len(ids)]
		i++
		v, err := m.Create(ctx, taskstore.Entry{Task: task(id, i, a2a.TaskStateSubmitted), Seq: 1})
		if err == nil {
			v, err = m.Update(ctx, taskstore.Entry{Task: task(id, i+1, a2a.TaskStateWorking), Seq: 2, Version: v})
		}
		if err == nil {
			v, err = m.Update(ctx, taskstore.Entry{Task: task(id, i+1, a2a.TaskStateWorking), Seq: 3, Version: v}) // an artifact
		}
		if err == nil {
			_, err = m.Update(ctx, taskstore.Entry{Task: task(id, i+2, a2a.TaskStateCompleted), Seq: 4, Version: v})
		}
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Delete(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}
