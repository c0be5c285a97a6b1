package natsstore_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// Open opens the stores of one replica of an agent: what one replica
// writes, every other replica of the agent reads, through its own
// connection. Here an embedded NATS server stands in for the mesh's, and
// two connections for two replicas.
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "nats")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	srv, err := embedded.Start(embedded.Config{Dir: dir, Port: -1}) // a free port
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// Each replica has a connection of its own, and opens the agent's
	// stores on it; the connection is closed when the replica is done.
	replica := func(name string) (*natsstore.Stores, *natsstore.Conn) {
		nc, js, err := natsstore.Connect(ctx, srv.URL(), natsstore.ConnConfig{Name: name})
		if err != nil {
			log.Fatal(err)
		}
		stores, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: "WeatherAgent", Replica: name})
		if err != nil {
			log.Fatal(err)
		}
		return stores, nc
	}
	a, ncA := replica("replica-a")
	defer ncA.Close()
	b, ncB := replica("replica-b")
	defer ncB.Close()

	// Replica a runs a task: it commits the task's events to the log, with
	// the task's snapshot as of its last event, in one write.
	events := []a2a.Event{
		&a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}},
		a2a.NewStatusUpdate("task-1", "ctx-1", a2a.TaskStateWorking, nil),
		a2a.NewArtifactUpdate("task-1", "ctx-1", a2a.Artifact{ArtifactID: "answer", Parts: []a2a.Part{a2a.TextPart("sunny, 24°C")}}, false, true),
		a2a.NewStatusUpdate("task-1", "ctx-1", a2a.TaskStateCompleted, nil),
	}
	done := &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
		Artifacts: []a2a.Artifact{{ArtifactID: "answer", Parts: []a2a.Part{a2a.TextPart("sunny, 24°C")}}}}
	if _, err := a.Tasks.Commit(ctx, taskstore.Entry{Task: done, Seq: uint64(len(events))}, events...); err != nil {
		log.Fatal(err)
	}

	// Replica b reads the task, and replays its events.
	entry, err := b.Tasks.Get(ctx, "task-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("task: %s after event %d: %s\n", entry.Task.Status.State, entry.Seq, entry.Task.Artifacts[0].Text())
	for e, err := range b.Log.Subscribe(ctx, "task-1", 0) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev := e.Event.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Printf("event %d: artifact %s\n", e.Seq, ev.Artifact.Text())
		default:
			state, _ := a2a.StateOf(ev)
			fmt.Printf("event %d: %s\n", e.Seq, state)
		}
	}
	// Output:
	// task: TASK_STATE_COMPLETED after event 4: sunny, 24°C
	// event 1: TASK_STATE_SUBMITTED
	// event 2: TASK_STATE_WORKING
	// event 3: artifact sunny, 24°C
	// event 4: TASK_STATE_COMPLETED
}
