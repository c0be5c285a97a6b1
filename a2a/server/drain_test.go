package server_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// A draining Handler refuses every message, new task or follow-up, queued
// or not, with a retryable error, and serves everything else; its runs go
// on to their end, and Drain's channel closes when the last has ended.
func TestDrain(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	h := newHandler(t, blocker(release), func(c *server.Config) {
		c.Limits.MaxRuns, c.Limits.QueueTimeout = 1, time.Minute
	})
	async := func(r *a2a.SendMessageRequest) *a2a.SendMessageRequest {
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		return r
	}
	running := sendTask(t, h, async(send("x")))
	waiting := make(chan error, 1)
	go func() {
		_, err := h.SendMessage(ctx, async(send("y"))) // waits for the one run
		waiting <- err
	}()
	// The stream that follows the run, under way before the drain (its
	// first event read: the sequence subscribes when first pulled).
	type result struct {
		got []eventlog.Entry
		err error
	}
	follow := make(chan result, 1)
	next, stop := iter.Pull2(h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: running.ID}, ""))
	defer stop()
	first, err, ok := next()
	if !ok || err != nil {
		t.Fatalf("the stream of the running task: no first event (%v)", err)
	}
	go func() {
		got := []eventlog.Entry{first}
		for {
			e, err, ok := next()
			if !ok || err != nil {
				follow <- result{got, err}
				return
			}
			got = append(got, e)
		}
	}()

	idle := h.Drain()
	if !h.Draining() {
		t.Fatal("Draining() = false after Drain")
	}
	select {
	case err := <-waiting:
		wantBusy(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the message waiting for a run was not refused by the drain")
	}
	refused := []struct {
		name string
		call func() error
	}{
		{"new task", func() error { _, err := h.SendMessage(ctx, send("z")); return err }},
		{"follow-up", func() error { _, err := h.SendMessage(ctx, followUp(running.ID, "more")); return err }},
		{"stream", func() error { _, err := collect(t, h.SendStreamingMessage(ctx, send("z"))); return err }},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) { wantBusy(t, tt.call()) })
	}
	if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: running.ID}); err != nil {
		t.Fatalf("GetTask while draining: %v", err)
	}
	select {
	case <-idle:
		t.Fatal("Drain's channel closed while a run is going on")
	default:
	}
	close(release)
	select {
	case <-idle:
	case <-time.After(10 * time.Second):
		t.Fatal("Drain's channel did not close after the last run ended")
	}
	res := <-follow
	if got := res.got; res.err != nil || len(got) == 0 || state(got[len(got)-1].Event) != a2a.TaskStateCompleted {
		t.Fatalf("the stream of the running task ended with %v (%v), want it completed", got, res.err)
	}
	if idle2 := h.Drain(); idle2 != idle {
		t.Fatal("a second Drain returned another channel")
	}
}

// EndStreams ends open streams without an error, after the events sent so
// far (a client resumes after the last), and refuses later ones with a
// retryable error; the tasks go on.
func TestEndStreams(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	h := newHandler(t, blocker(release), nil)
	defer close(release) // before the cleanup's Close
	req := send("x")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := sendTask(t, h, req)
	streams := []struct {
		name string
		seq  iter.Seq2[eventlog.Entry, error]
	}{
		{"subscription", h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "")},
		{"resumption", h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "1")},
		{"send", h.SendStreamingMessage(ctx, send("y"))},
	}
	open := make([]func() (eventlog.Entry, error, bool), len(streams))
	for i, s := range streams {
		next, stop := iter.Pull2(s.seq)
		defer stop()
		// Each stream is under way before the end.
		if _, err, ok := next(); !ok || err != nil {
			t.Fatalf("%s: no first event (%v)", s.name, err)
		}
		open[i] = next
	}
	h.EndStreams()
	for i, s := range streams {
		for {
			e, err, ok := open[i]()
			if !ok {
				break
			}
			if err != nil {
				t.Fatalf("%s ended with %v, want no error", s.name, err)
			}
			if st, ok := a2a.StateOf(e.Event); ok && st.Settled() {
				t.Fatalf("%s got the task settled: %v", s.name, e)
			}
		}
	}
	_, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, ""))
	wantBusy(t, err)
	got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the task after EndStreams: %v, %v; want it still working", got, err)
	}
}
