package eventlog_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
)

// A writer appends a task's events with the next sequence number; a
// reader replays them from any point. The terminal event seals the log,
// so the subscription ends after it instead of waiting for more.
func ExampleMemory() {
	ctx := context.Background()
	var events eventlog.Memory

	err := events.Append(ctx, "t1", 1,
		a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateWorking, nil),
		a2a.NewArtifactUpdate("t1", "c1", a2a.Artifact{
			ArtifactID: "a1", Parts: []a2a.Part{a2a.TextPart("done")},
		}, false, true),
	)
	if err != nil {
		log.Fatal(err)
	}
	// A second writer at a number already taken loses.
	err = events.Append(ctx, "t1", 2, a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateFailed, nil))
	fmt.Println(errors.Is(err, eventlog.ErrConflict))

	if err := events.Append(ctx, "t1", 3, a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateCompleted, nil)); err != nil {
		log.Fatal(err)
	}

	// Resume after event 1, as a client that saw it reconnects.
	for e, err := range events.Subscribe(ctx, "t1", 1) {
		if err != nil {
			log.Fatal(err)
		}
		switch ev := e.Event.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Println(e.Seq, "artifact", ev.Artifact.Text())
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println(e.Seq, "status", ev.Status.State)
		}
	}

	// Nothing follows the terminal event.
	err = events.Append(ctx, "t1", 4, a2a.NewStatusUpdate("t1", "c1", a2a.TaskStateWorking, nil))
	fmt.Println(errors.Is(err, eventlog.ErrSealed))
	// Output:
	// true
	// 2 artifact done
	// 3 status TASK_STATE_COMPLETED
	// true
}
