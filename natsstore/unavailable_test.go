package natsstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// While the NATS server is down, every store call fails at once with
// ErrUnavailable instead of waiting for its context: a request to an agent
// whose state is unreachable gets an answer that says so.
func TestStoresFailFastWhileNATSIsDown(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := embedded.Start(embedded.Config{Dir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	js := replica(t, e)
	tasks := newTaskStore(t, js, "weather", natsstore.TaskStoreConfig{})
	pushes, err := natsstore.NewPushStore(ctx, js, natsstore.PushStoreConfig{Namespace: "weather"})
	if err != nil {
		t.Fatal(err)
	}
	cps, err := natsstore.NewCheckPointStore(ctx, js, natsstore.CheckPointStoreConfig{Namespace: "weather"})
	if err != nil {
		t.Fatal(err)
	}
	log := newLog(t, js, "weather")
	task := testTask("t1", "c1", a2a.TaskStateWorking)
	if _, err := tasks.Create(ctx, taskstore.Entry{Task: task, Seq: 1}); err != nil {
		t.Fatal(err)
	}

	e.Close()
	waitFor(t, 5*time.Second, "the connection to notice the server stopped", func() bool { return !js.Conn().IsConnected() })
	calls := []struct {
		name string
		call func(context.Context) error
	}{
		{"TaskStore.Create", func(ctx context.Context) error {
			_, err := tasks.Create(ctx, taskstore.Entry{Task: testTask("t2", "c1", a2a.TaskStateSubmitted), Seq: 1})
			return err
		}},
		{"TaskStore.Get", func(ctx context.Context) error { _, err := tasks.Get(ctx, "t1"); return err }},
		{"TaskStore.Update", func(ctx context.Context) error {
			_, err := tasks.Update(ctx, taskstore.Entry{Task: task, Seq: 2, Version: 1})
			return err
		}},
		{"TaskStore.List", func(ctx context.Context) error { _, err := tasks.List(ctx, taskstore.Query{}); return err }},
		{"TaskStore.Delete", func(ctx context.Context) error { return tasks.Delete(ctx, "t1") }},
		{"PushStore.Save", func(ctx context.Context) error {
			return pushes.Save(ctx, push.Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{TaskID: "t1", ID: "p", URL: "https://example.com/hook"}})
		}},
		{"PushStore.Get", func(ctx context.Context) error { _, err := pushes.Get(ctx, "t1", "p"); return err }},
		{"PushStore.List", func(ctx context.Context) error { _, err := pushes.List(ctx, "t1"); return err }},
		{"PushStore.Delete", func(ctx context.Context) error { return pushes.Delete(ctx, "t1", "p") }},
		{"PushStore.DeleteTask", func(ctx context.Context) error { return pushes.DeleteTask(ctx, "t1") }},
		{"CheckPointStore.Get", func(ctx context.Context) error { _, _, err := cps.Get(ctx, "t1"); return err }},
		{"CheckPointStore.Set", func(ctx context.Context) error { return cps.Set(ctx, "t1", []byte("x")) }},
		{"CheckPointStore.Delete", func(ctx context.Context) error { return cps.Delete(ctx, "t1") }},
		{"CheckPointStore.Lock", func(ctx context.Context) error { _, err := cps.Lock(ctx, "t1"); return err }},
		{"Log.Append", func(ctx context.Context) error { return log.Append(ctx, "t1", 2, status("t1", a2a.TaskStateWorking)) }},
		{"Log.Delete", func(ctx context.Context) error { return log.Delete(ctx, "t1") }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			// The context would let a waiting call hang for the whole test.
			err := c.call(ctx)
			if !errors.Is(err, natsstore.ErrUnavailable) {
				t.Fatalf("%v, want ErrUnavailable", err)
			}
			// The stores' own contracts say so too, for the server and
			// the ADK runner that retry on them.
			if !errors.Is(err, taskstore.ErrUnavailable) || !errors.Is(err, eventlog.ErrUnavailable) || !errors.Is(err, adk.ErrCheckPointUnavailable) {
				t.Fatalf("%v does not match the store interfaces' ErrUnavailable", err)
			}
		})
	}
}
