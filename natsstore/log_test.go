package natsstore_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/eventlog/logtest"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

func newLog(t *testing.T, js jetstream.JetStream, ns string) *natsstore.Log {
	t.Helper()
	l, err := natsstore.NewLog(context.Background(), js, natsstore.LogConfig{Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLogConformance(t *testing.T) {
	e := natsServer(t)
	n := 0
	logtest.Run(t, func(t *testing.T) eventlog.Log {
		// A namespace per subtest keeps their task "t" apart on one server.
		n++
		js := replica(t, e)
		return newLog(t, js, "agent"+string(rune('a'+n)))
	})
}

func status(task string, s a2a.TaskState) a2a.Event {
	return &a2a.TaskStatusUpdateEvent{TaskID: task, ContextID: "c", Status: a2a.TaskStatus{State: s}}
}

// Two replicas share a task's log: one follows what the other writes, the
// second writer of an event loses, and a run resumed on the other replica
// continues the numbering.
func TestLogReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	jsA := replica(t, e)
	jsB := replica(t, e)
	a, b := newLog(t, jsA, "weather"), newLog(t, jsB, "weather")
	other := newLog(t, jsB, "chat")

	if err := a.Append(ctx, "t1", 1, &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "t1", 2, status("t1", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	// B follows from event 1 on while A goes on.
	got := make(chan []uint64, 1)
	go func() {
		var seqs []uint64
		for e, err := range b.Subscribe(ctx, "t1", 1) {
			if err != nil {
				t.Error(err)
				break
			}
			seqs = append(seqs, e.Seq)
		}
		got <- seqs
	}()
	// B cannot write event 3 behind A's back once A has: the stream decides.
	if err := a.Append(ctx, "t1", 3, status("t1", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, "t1", 3, status("t1", a2a.TaskStateWorking)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("second writer of event 3: %v, want ErrConflict", err)
	}
	// The run stops for input on A; the next message lands on B.
	if err := a.Append(ctx, "t1", 4, status("t1", a2a.TaskStateInputRequired)); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(ctx, "t1", 5, status("t1", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "t1", 5, status("t1", a2a.TaskStateWorking)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("A writing event 5 after B did: %v, want ErrConflict", err)
	}
	if err := b.Append(ctx, "t1", 6, status("t1", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "t1", 7, status("t1", a2a.TaskStateWorking)); !errors.Is(err, eventlog.ErrSealed) {
		t.Fatalf("append after the end: %v, want ErrSealed", err)
	}
	var seqs []uint64
	select {
	case seqs = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("B's subscription has not ended 10 s after the task did")
	}
	if want := []uint64{2, 3, 4, 5, 6}; !equal(seqs, want) {
		t.Fatalf("B followed %v, want %v", seqs, want)
	}
	// Another agent's namespace does not see the task.
	for _, err := range other.Subscribe(ctx, "t1", 0) {
		if !errors.Is(err, eventlog.ErrNotFound) {
			t.Fatalf("another namespace: %v, want ErrNotFound", err)
		}
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Replicas starting at once all get the stream.
func TestNewLogConcurrently(t *testing.T) {
	e := natsServer(t)
	var wg sync.WaitGroup
	for range 8 {
		js := replica(t, e)
		wg.Go(func() {
			if _, err := natsstore.NewLog(context.Background(), js, natsstore.LogConfig{Namespace: "weather"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

// Task ids that are not subject tokens keep their own logs.
func TestLogTaskIDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	l := newLog(t, js, "a.b c")
	ids := []string{"a.b", "a_b", "a b", "*", ">", "ü", "a/b"}
	for i, id := range ids {
		for seq := uint64(1); seq <= uint64(i+1); seq++ {
			if err := l.Append(ctx, id, seq, status(id, a2a.TaskStateWorking)); err != nil {
				t.Fatalf("%q: %v", id, err)
			}
		}
	}
	for i, id := range ids {
		n := 0
		sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		for e, err := range l.Subscribe(sctx, id, 0) {
			if err != nil {
				break // the log is not sealed: the wait ends with the context
			}
			if tid, _ := e.Event.TaskIDs(); tid != id {
				t.Fatalf("%q's log holds an event of %q", id, tid)
			}
			n++
		}
		cancel()
		if n != i+1 {
			t.Fatalf("%q: %d events, want %d", id, n, i+1)
		}
	}
}

// A NATS server restarted while a task runs and a subscriber follows it:
// the writer and the subscriber reconnect, and the subscriber receives
// every event once, in order.
func TestLogSurvivesANATSRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	e, err := embedded.Start(embedded.Config{Dir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	port := e.Port()
	nc, js, err := natsstore.Connect(ctx, e.URL(), natsstore.ConnConfig{Name: "writer"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	jsB := replica(t, e)
	w, r := newLog(t, js, "weather"), newLog(t, jsB, "weather")

	const before, after = 20, 20
	for seq := uint64(1); seq <= before; seq++ {
		if err := w.Append(ctx, "t", seq, status("t", a2a.TaskStateWorking)); err != nil {
			t.Fatal(err)
		}
	}
	got := make(chan []uint64, 1)
	caughtUp := make(chan struct{})
	go func() {
		var seqs []uint64
		for e, err := range r.Subscribe(ctx, "t", 0) {
			if err != nil {
				t.Error(err)
				break
			}
			seqs = append(seqs, e.Seq)
			if e.Seq == before {
				close(caughtUp)
			}
		}
		got <- seqs
	}()
	select {
	case <-caughtUp:
	case seqs := <-got:
		t.Fatalf("the subscriber ended after events %v", seqs)
	case <-time.After(10 * time.Second):
		t.Fatal("the subscriber has not caught up after 10 s")
	}

	e.Close()
	// Once the connection knows the server is gone, an append fails at
	// once, saying why (one in flight when it went waits for CallTimeout).
	waitFor(t, 5*time.Second, "the connection to notice the server stopped", func() bool { return !nc.IsConnected() })
	start := time.Now()
	if err := w.Append(ctx, "t", before+1, status("t", a2a.TaskStateWorking)); !errors.Is(err, natsstore.ErrUnavailable) {
		t.Fatalf("append while NATS is down: %v, want ErrUnavailable", err)
	}
	t.Logf("an append failed %v after NATS stopped", time.Since(start))
	e2, err := embedded.Start(embedded.Config{Dir: dir, Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()

	for seq := uint64(before + 1); seq <= before+after; seq++ {
		ev := status("t", a2a.TaskStateWorking)
		if seq == before+after {
			ev = status("t", a2a.TaskStateCompleted)
		}
		// Until the writer has reconnected an append fails; the server
		// retries it, as a run's commit does.
		for {
			err := w.Append(ctx, "t", seq, ev)
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("event %d: %v", seq, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var seqs []uint64
	select {
	case seqs = <-got:
	case <-time.After(30 * time.Second):
		t.Fatal("the subscriber has not ended 30 s after the last event")
	}
	if len(seqs) != before+after {
		t.Fatalf("subscriber got %d events: %v", len(seqs), seqs)
	}
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("subscriber got %v", seqs)
		}
	}
}

// With a per-task limit the stream keeps a task's newest events: a
// subscriber from a kept event gets the rest, one from a dropped event an
// error that says so, never a silent gap.
func TestLogPerTaskLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := replica(t, natsServer(t))
	l, err := natsstore.NewLog(ctx, js, natsstore.LogConfig{Namespace: "weather", Events: natsstore.EventsConfig{MaxPerTask: 5}})
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 8; seq++ {
		ev := status("t", a2a.TaskStateWorking)
		if seq == 8 {
			ev = status("t", a2a.TaskStateCompleted)
		}
		if err := l.Append(ctx, "t", seq, ev); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := l.Last(ctx, "t"); n != 8 || err != nil {
		t.Fatalf("Last = %d, %v", n, err)
	}
	var seqs []uint64
	for e, err := range l.Subscribe(ctx, "t", 3) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	if !equal(seqs, []uint64{4, 5, 6, 7, 8}) {
		t.Fatalf("from 3: %v", seqs)
	}
	for _, tt := range []struct {
		after uint64
		want  string
	}{
		{1, "events 2 to 3 are no longer kept"},
		{2, "events 3 to 3 are no longer kept"}, // a gap of one event is a gap too
	} {
		got := 0
		for e, err := range l.Subscribe(ctx, "t", tt.after) {
			if got++; err == nil {
				t.Fatalf("from %d: got event %d, want an error (event 3 is dropped)", tt.after, e.Seq)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("from %d: %v", tt.after, err)
			}
		}
		if got == 0 {
			t.Fatalf("from %d: no error, no event", tt.after)
		}
	}
	if _, err := natsstore.NewLog(ctx, js, natsstore.LogConfig{Namespace: "weather", Events: natsstore.EventsConfig{MaxPerTask: -1}}); err == nil {
		t.Fatal("a negative limit was accepted")
	}
}
