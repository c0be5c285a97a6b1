package taskstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// A store holds each task's latest snapshot. A writer updates it from the
// version it read, so of two writers racing from the same version only
// one wins; the loser reads again and retries.
func ExampleMemory() {
	ctx := context.Background()
	var store taskstore.Memory

	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	v1, err := store.Create(ctx, taskstore.Entry{Task: task, Seq: 1})
	if err != nil {
		log.Fatal(err)
	}

	// Stored tasks are shared snapshots: change a copy.
	working := *task
	working.Status = a2a.TaskStatus{State: a2a.TaskStateWorking}
	if _, err := store.Update(ctx, taskstore.Entry{Task: &working, Seq: 2, Version: v1}); err != nil {
		log.Fatal(err)
	}
	_, err = store.Update(ctx, taskstore.Entry{Task: &working, Seq: 2, Version: v1})
	fmt.Println(errors.Is(err, taskstore.ErrConflict))

	e, err := store.Get(ctx, "t1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(e.Task.Status.State, e.Seq)
	// Output:
	// true
	// TASK_STATE_WORKING 2
}

// List returns the matching tasks newest first, a page at a time.
func ExampleMemory_List() {
	ctx := context.Background()
	var store taskstore.Memory
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for i, ctxID := range []string{"c1", "c2", "c1", "c1"} {
		task := &a2a.Task{
			ID:        fmt.Sprintf("t%d", i+1),
			ContextID: ctxID,
			Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: start.Add(time.Duration(i) * time.Minute)},
		}
		if _, err := store.Create(ctx, taskstore.Entry{Task: task, Seq: 1}); err != nil {
			log.Fatal(err)
		}
	}

	q := taskstore.Query{ContextID: "c1", PageSize: 2}
	for range 10 { // a bound on the pages, which a real caller keeps too
		page, err := store.List(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		for _, t := range page.Tasks {
			fmt.Println(t.ID, t.Status.Timestamp.Format(time.Kitchen))
		}
		fmt.Println("of", page.Total)
		if page.NextPageToken == "" {
			break
		}
		q.PageToken = page.NextPageToken
	}
	// Output:
	// t4 12:03PM
	// t3 12:02PM
	// of 3
	// t1 12:00PM
	// of 3
}
