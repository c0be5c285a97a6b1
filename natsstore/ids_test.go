package natsstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
)

// hostileIDs are ids whose plain or base64 key token would be far longer
// than a NATS control line (4 KiB), with and without bytes that are not
// key characters; the last two differ only in their last byte.
var hostileIDs = map[string]string{
	"plain":       strings.Repeat("a", 5000),
	"odd bytes":   strings.Repeat("é.* >\t\r\n\x00/=", 400),
	"twin 1":      strings.Repeat("x", 4500) + "1",
	"twin 2":      strings.Repeat("x", 4500) + "2",
	"dots":        strings.Repeat(".", 4100),
	"token chars": strings.Repeat("=", 4100),
}

// An id of any length, passed to any method of any store, is an id like
// another: the call does what it does for a short id, and the connection
// stays up for the next call. (A key or subject longer than the server's
// control line made the server answer -ERR and nats.go close the
// connection for good.)
func TestHostileIDs(t *testing.T) {
	e := natsServer(t)
	js := replica(t, e)
	nc := js.Conn()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tasks := newTaskStore(t, js, "weather", natsstore.TaskStoreConfig{})
	pushes := newPushStore(t, js, "weather")
	cps := newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "weather"})
	// The log alone has a namespace of its own: its events carry no
	// snapshot, and the store's tasks are in their own subjects.
	log := newLog(t, js, "weather-log")
	pub := natsstore.NewPublisher(js, "weather-pub", &eventlog.Memory{}, nil)
	defer pub.Close()
	replicas, err := natsstore.NewReplicas(ctx, js, natsstore.ReplicasConfig{Namespace: "weather", Replica: "r1", Log: log, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tasks.Create(ctx, taskstore.Entry{Task: testTask("normal", "c", a2a.TaskStateWorking), Seq: 1}); err != nil {
		t.Fatal(err)
	}
	// stillUp is the normal call after each step: it fails once the
	// connection has closed.
	stillUp := func(t *testing.T) {
		t.Helper()
		if _, err := tasks.Get(ctx, "normal"); err != nil {
			t.Fatalf("a normal call after it: %v (connection %v, last error %v)", err, nc.Status(), nc.LastError())
		}
	}

	names := slices.Sorted(func(yield func(string) bool) {
		for k := range hostileIDs {
			if !yield(k) {
				return
			}
		}
	})
	for _, name := range names {
		id := hostileIDs[name]
		t.Run(name, func(t *testing.T) {
			steps := []struct {
				name string
				call func() error
			}{
				{"TaskStore.Create", func() error {
					_, err := tasks.Create(ctx, taskstore.Entry{Task: testTask(id, "c", a2a.TaskStateWorking), Seq: 1})
					return err
				}},
				{"TaskStore.Get", func() error {
					got, err := tasks.Get(ctx, id)
					if err == nil && got.Task.ID != id {
						return errors.New("got another task")
					}
					return err
				}},
				{"TaskStore.Update", func() error {
					got, err := tasks.Get(ctx, id)
					if err != nil {
						return err
					}
					_, err = tasks.Update(ctx, taskstore.Entry{Task: testTask(id, "c", a2a.TaskStateCompleted), Seq: 2, Version: got.Version})
					return err
				}},
				{"TaskStore.List", func() error {
					p, err := tasks.List(ctx, taskstore.Query{PageSize: 100})
					if err == nil && !slices.ContainsFunc(p.Tasks, func(tk *a2a.Task) bool { return tk.ID == id }) {
						return errors.New("the task is not listed")
					}
					return err
				}},
				{"TaskStore.Delete", func() error { return tasks.Delete(ctx, id) }},
				{"TaskStore.Get after Delete", func() error {
					if _, err := tasks.Get(ctx, id); !errors.Is(err, taskstore.ErrNotFound) {
						return err
					}
					return nil
				}},
				{"Log.Append", func() error {
					if err := log.Append(ctx, id, 1, status(id, a2a.TaskStateWorking)); err != nil {
						return err
					}
					return log.Append(ctx, id, 2, status(id, a2a.TaskStateCompleted))
				}},
				{"Log.Last", func() error {
					n, err := log.Last(ctx, id)
					if err == nil && n != 2 {
						return errors.New("wrong last event")
					}
					return err
				}},
				{"Log.LastWriter", func() error { _, err := log.LastWriter(ctx, id); return err }},
				{"Log.Subscribe", func() error {
					var n int
					for e, err := range log.Subscribe(ctx, id, 0) {
						if err != nil {
							return err
						}
						if tid, _ := e.Event.TaskIDs(); tid != id {
							return errors.New("another task's event")
						}
						n++
					}
					if n != 2 {
						return errors.New("wrong number of events")
					}
					return nil
				}},
				{"Log.Delete", func() error { return log.Delete(ctx, id) }},
				{"Publisher.Append", func() error {
					if err := pub.Append(ctx, id, 1, status(id, a2a.TaskStateWorking)); err != nil {
						return err
					}
					return pub.Flush(ctx)
				}},
				{"Replicas.Cancel", func() error { _, err := replicas.Cancel(ctx, id); return err }},
				{"PushStore.Save", func() error {
					if err := pushes.Save(ctx, pushConfig(id, id)); err != nil {
						return err
					}
					return pushes.Save(ctx, pushConfig(id, "p"))
				}},
				{"PushStore.Get", func() error {
					c, err := pushes.Get(ctx, id, id)
					if err == nil && (c.TaskID != id || c.ID != id) {
						return errors.New("got another config")
					}
					return err
				}},
				{"PushStore.List", func() error {
					cs, err := pushes.List(ctx, id)
					if err == nil && len(cs) != 2 {
						return errors.New("wrong number of configs")
					}
					return err
				}},
				{"PushStore.Delete", func() error { return pushes.Delete(ctx, id, id) }},
				{"PushStore.DeleteTask", func() error {
					if err := pushes.DeleteTask(ctx, id); err != nil {
						return err
					}
					if _, err := pushes.Get(ctx, id, "p"); !errors.Is(err, push.ErrNotFound) {
						return errors.New("a config outlived DeleteTask")
					}
					return nil
				}},
				{"CheckPointStore.Set", func() error { return cps.Set(ctx, id, []byte(id)) }},
				{"CheckPointStore.Get", func() error {
					got, ok, err := cps.Get(ctx, id)
					if err == nil && (!ok || string(got) != id) {
						return errors.New("got another checkpoint")
					}
					return err
				}},
				{"CheckPointStore.Lock", func() error {
					unlock, err := cps.Lock(ctx, id)
					if err != nil {
						return err
					}
					unlock()
					return nil
				}},
				{"CheckPointStore.Delete", func() error { return cps.Delete(ctx, id) }},
			}
			for _, s := range steps {
				if err := s.call(); err != nil {
					t.Errorf("%s: %v", s.name, err)
				}
				stillUp(t)
			}
		})
	}
	// Ids that differ only past the point a key would be cut keep their
	// own tasks.
	for _, name := range []string{"twin 1", "twin 2"} {
		id := hostileIDs[name]
		if _, err := tasks.Create(ctx, taskstore.Entry{Task: testTask(id, name, a2a.TaskStateWorking), Seq: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"twin 1", "twin 2"} {
		if got, err := tasks.Get(ctx, hostileIDs[name]); err != nil || got.Task.ContextID != name {
			t.Fatalf("%s: %+v, %v", name, got, err)
		}
	}
}

// An agent (namespace) and replica name of any length is as safe: every
// store opens, writes and reads under it, and the replica's heartbeat and
// cancel subject work.
func TestHostileNames(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := natsServer(t)
	name := hostileIDs["odd bytes"]
	// A replica's name is also a header's value: no control characters.
	if _, err := natsstore.Open(ctx, replica(t, e), natsstore.StoresConfig{Namespace: "weather", Replica: "a\r\nb"}); err == nil {
		t.Fatal("a replica name with a line break was taken")
	}
	replicaName := strings.Repeat("é.* >/=", 700)
	var stores [2]*natsstore.Stores
	for i := range stores {
		a, err := natsstore.Open(ctx, replica(t, e), natsstore.StoresConfig{Namespace: name, Replica: replicaName + string(rune('a'+i)), HeartbeatTTL: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = a
	}
	a, b := stores[0], stores[1]
	if _, err := a.Tasks.Commit(ctx, taskstore.Entry{Task: testTask("t", "c", a2a.TaskStateWorking), Seq: 1}, status("t", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Tasks.Get(ctx, "t"); err != nil || got.Task.ID != "t" {
		t.Fatalf("Get: %+v, %v", got, err)
	}
	if err := a.Push.Save(ctx, pushConfig("t", "p")); err != nil {
		t.Fatal(err)
	}
	if cs, err := b.Push.List(ctx, "t"); err != nil || len(cs) != 1 {
		t.Fatalf("List: %v, %v", cs, err)
	}
	if err := a.CheckPoints.Set(ctx, "cp", []byte("x")); err != nil {
		t.Fatal(err)
	}
	unlock, err := b.CheckPoints.Lock(ctx, "cp")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	h := &recorder{stop: func(string) (bool, error) { return true, nil }}
	stop := a.Replicas.Start(ctx, h)
	defer stop()
	waitFor(t, 5*time.Second, "the cancel to reach the writer", func() bool {
		stopped, err := b.Replicas.Cancel(ctx, "t")
		return err == nil && stopped
	})
	pub := natsstore.NewPublisher(replica(t, e), name, &eventlog.Memory{}, nil)
	defer pub.Close()
	if err := pub.Append(ctx, "t", 1, status("t", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}
