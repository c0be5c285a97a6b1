package natsstore_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
)

// A write larger than the NATS server's max_payload is refused before it
// is sent with ErrTooLarge, saying what, how large and the limit; nothing
// is stored, and the stores go on.
func TestTooLarge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	a, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: "weather", Replica: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	limit := a.MaxPayload()
	if limit != js.Conn().MaxPayload() || limit <= 0 {
		t.Fatalf("MaxPayload = %d, want the server's %d", limit, js.Conn().MaxPayload())
	}
	huge := strings.Repeat("x", int(limit))
	big := func(id string) *a2a.Task {
		tk := testTask(id, "c", a2a.TaskStateWorking)
		tk.Status.Message = a2a.NewTextMessage(a2a.RoleAgent, huge)
		return tk
	}
	small, err := a.Tasks.Commit(ctx, taskstore.Entry{Task: testTask("small", "c", a2a.TaskStateWorking), Seq: 1}, testTask("small", "c", a2a.TaskStateWorking))
	if err != nil {
		t.Fatal(err)
	}
	bigConfig := pushConfig("small", "p")
	bigConfig.URL = "https://example.com/" + huge
	for _, c := range []struct {
		name, what string
		call       func() error
		stored     func() bool // whether anything of it was stored
	}{
		{"TaskStore.Create", "task big", func() error { _, err := a.Tasks.Create(ctx, taskstore.Entry{Task: big("big"), Seq: 1}); return err },
			func() bool { _, err := a.Tasks.Get(ctx, "big"); return !errors.Is(err, taskstore.ErrNotFound) }},
		{"TaskStore.Update", "task small", func() error {
			_, err := a.Tasks.Update(ctx, taskstore.Entry{Task: big("small"), Seq: 2, Version: small})
			return err
		},
			func() bool { e, err := a.Tasks.Get(ctx, "small"); return err != nil || e.Version != small }},
		{"Log.Append", "events 2 to 2 of task small", func() error {
			return a.Log.Append(ctx, "small", 2, a2a.NewStatusUpdate("small", "c", a2a.TaskStateWorking, a2a.NewTextMessage(a2a.RoleAgent, huge)))
		}, func() bool { n, err := a.Log.Last(ctx, "small"); return err != nil || n != 1 }},
		{"PushStore.Save", "push config small/p", func() error { return a.Push.Save(ctx, bigConfig) },
			func() bool { _, err := a.Push.Get(ctx, "small", "p"); return !errors.Is(err, push.ErrNotFound) }},
		{"CheckPointStore.Set", "checkpoint cp", func() error { return a.CheckPoints.Set(ctx, "cp", []byte(huge+"x")) },
			func() bool { _, ok, err := a.CheckPoints.Get(ctx, "cp"); return ok || err != nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			var tl *natsstore.TooLargeError
			if !errors.Is(err, natsstore.ErrTooLarge) || !errors.As(err, &tl) {
				t.Fatalf("%v, want ErrTooLarge", err)
			}
			if tl.What != c.what || tl.Size <= limit || tl.Limit != limit {
				t.Fatalf("%+v, want what %q, a size over the limit, limit %d", tl, c.what, limit)
			}
			if msg := err.Error(); !strings.Contains(msg, c.what) || !strings.Contains(msg, "max_payload") {
				t.Fatalf("the message does not say what and why: %s", msg)
			}
			if c.stored() {
				t.Fatal("something of it was stored")
			}
			if !js.Conn().IsConnected() {
				t.Fatalf("the connection is %v", js.Conn().Status())
			}
		})
	}
	// What fits is taken: a checkpoint of exactly max_payload bytes (a put
	// has no headers).
	if err := a.CheckPoints.Set(ctx, "cp", []byte(huge)); err != nil {
		t.Fatalf("a checkpoint of max_payload bytes: %v", err)
	}
	if got, ok, err := a.CheckPoints.Get(ctx, "cp"); !ok || err != nil || !bytes.Equal(got, []byte(huge)) {
		t.Fatalf("reading it back: %d bytes, %v, %v", len(got), ok, err)
	}
	// A refusal for size is no outage, which a server would wait out.
	if errors.Is(&natsstore.TooLargeError{}, eventlog.ErrUnavailable) {
		t.Fatal("ErrTooLarge matches ErrUnavailable")
	}
}

// A task as large as MaxTaskBytes allows commits, though its message holds
// its content twice: in the task event that starts it and in the snapshot.
func TestLargestTaskCommits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := replica(t, natsServer(t))
	a, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: "weather", Replica: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	// Room for the task's other fields and JSON escapes, as a server's
	// estimate leaves.
	text := strings.Repeat("x", a.MaxTaskBytes()-1024)
	task := testTask("large", "c", a2a.TaskStateCompleted)
	task.History = []a2a.Message{*a2a.NewTextMessage(a2a.RoleUser, text)}
	if _, err := a.Tasks.Commit(ctx, taskstore.Entry{Task: task, Seq: 1}, task); err != nil {
		t.Fatalf("a task of %d bytes, MaxTaskBytes %d: %v", len(text), a.MaxTaskBytes(), err)
	}
	got, err := a.Tasks.Get(ctx, "large")
	if err != nil || len(got.Task.History) != 1 {
		t.Fatalf("Get: %+v, %v", got, err)
	}
}
