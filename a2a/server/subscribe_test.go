package server_test

import (
	"context"
	"iter"
	"reflect"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// subscriptionCounter is the in-memory event log, counting its
// subscriptions.
type subscriptionCounter struct {
	eventlog.Memory
	subscribes atomic.Int64
}

func (l *subscriptionCounter) Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[eventlog.Entry, error] {
	l.subscribes.Add(1)
	return l.Memory.Subscribe(ctx, taskID, after)
}

// TestSubscribeFollowsTheLocalRun: a subscription to a task that a run of
// this Handler holds gets its events from the run, not from a
// subscription to the log (on JetStream, a consumer on the NATS server
// per stream); once the run is over, the log replays them alike.
func TestSubscribeFollowsTheLocalRun(t *testing.T) {
	events := new(subscriptionCounter)
	step := make(chan struct{})
	exec := &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
			return
		}
		select {
		case <-step:
		case <-ctx.Done():
			return
		}
		for i := range 3 {
			art := a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i))}}
			if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, i > 0, i == 2), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
	}}
	h := newHandler(t, exec, func(c *server.Config) { c.Events = events })
	// Bounds the wait should the stream never close.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := send("x")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := sendTask(t, h, req)

	var live []eventlog.Entry
	for e, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "") {
		if err != nil {
			t.Fatal(err)
		}
		if live = append(live, e); len(live) == 1 {
			close(step) // the run goes on once the stream follows it
		}
	}
	// The task as it was (after WORKING), 3 chunks, COMPLETED.
	if len(live) != 5 || state(live[len(live)-1].Event) != a2a.TaskStateCompleted {
		t.Fatalf("live stream: %d events ending %T, want 5 ending COMPLETED", len(live), live[len(live)-1].Event)
	}
	for i := 1; i < len(live); i++ {
		if live[i].Seq != live[i-1].Seq+1 {
			t.Fatalf("live stream: event %d then %d", live[i-1].Seq, live[i].Seq)
		}
	}
	if n := events.subscribes.Load(); n != 0 {
		t.Fatalf("the live stream subscribed to the log %d times, want none", n)
	}

	replay, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, strconv.FormatUint(live[0].Seq, 10)))
	if err != nil {
		t.Fatal(err)
	}
	if len(replay) != len(live)-1 || events.subscribes.Load() == 0 {
		t.Fatalf("replay after the run: %d events, %d log subscriptions; want %d events from the log", len(replay), events.subscribes.Load(), len(live)-1)
	}
	for i, e := range replay {
		// A sealed log is held packed: its events read back as copies.
		if e.Seq != live[i+1].Seq || !reflect.DeepEqual(e.Event, live[i+1].Event) {
			t.Fatalf("replay event %d: %d %T, live had %d %T", i, e.Seq, e.Event, live[i+1].Seq, live[i+1].Event)
		}
	}
}
