package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/push/pushtest"
	"github.com/a2amesh/a2amesh/natsstore"
)

func newPushStore(t *testing.T, js jetstream.JetStream, namespace string) *natsstore.PushStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := natsstore.NewPushStore(ctx, js, natsstore.PushStoreConfig{Namespace: namespace})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func pushConfig(taskID, id string) push.Config {
	return push.Config{
		TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{
			ID: id, TaskID: taskID, URL: "https://hooks.example.com/hook", Token: "tok",
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
		},
		ProtocolVersion: "1.0",
	}
}

func TestPushStoreConformance(t *testing.T) {
	pushtest.Run(t, func(t *testing.T) push.ConfigStore {
		return newPushStore(t, replica(t, natsServer(t)), "agent")
	})
}

func TestPushStoreReplicasShare(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	a := newPushStore(t, replica(t, e), "weather.agent")
	b := newPushStore(t, replica(t, e), "weather.agent")
	other := newPushStore(t, replica(t, e), "news-agent")

	for _, c := range []struct {
		s  *natsstore.PushStore
		id string
	}{{a, "c1"}, {b, "c2"}, {a, "c3"}} {
		if err := c.s.Save(ctx, pushConfig("t1", c.id)); err != nil {
			t.Fatal(err)
		}
	}
	// b replaces a's config: it keeps its place, for both.
	c1 := pushConfig("t1", "c1")
	c1.URL = "https://hooks.example.com/replaced"
	if err := b.Save(ctx, c1); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]*natsstore.PushStore{"a": a, "b": b} {
		cs, err := s.List(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		want := []push.Config{c1, pushConfig("t1", "c2"), pushConfig("t1", "c3")}
		if !reflect.DeepEqual(cs, want) {
			t.Fatalf("replica %s: List = %+v, want %+v", name, cs, want)
		}
	}

	// Another namespace sees none of it, and its own config of the same
	// task and id is apart.
	if cs, err := other.List(ctx, "t1"); err != nil || cs != nil {
		t.Fatalf("other namespace: List = %+v, %v; want none", cs, err)
	}
	if _, err := other.Get(ctx, "t1", "c1"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("other namespace: Get = %v, want ErrNotFound", err)
	}
	mine := pushConfig("t1", "c1")
	mine.URL = "https://news.example.com/hook"
	if err := other.Save(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := other.DeleteTask(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Get(ctx, "t1", "c1"); err != nil || !reflect.DeepEqual(got, c1) {
		t.Fatalf("after the other namespace saved and deleted: Get = %+v, %v; want %+v", got, err, c1)
	}

	// A delete by one replica is seen by the other.
	if err := b.Delete(ctx, "t1", "c2"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Get(ctx, "t1", "c2"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("after b deleted c2: a.Get = %v, want ErrNotFound", err)
	}
	if err := a.DeleteTask(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if cs, err := b.List(ctx, "t1"); err != nil || cs != nil {
		t.Fatalf("after a deleted the task: b.List = %+v, %v; want none", cs, err)
	}
}

func TestNewPushStoreConcurrent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	const n = 8
	stores := make([]*natsstore.PushStore, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		js := replica(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			stores[i], errs[i] = natsstore.NewPushStore(ctx, js, natsstore.PushStoreConfig{Namespace: "agent"})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("NewPushStore #%d: %v", i, err)
		}
	}
	if err := stores[0].Save(ctx, pushConfig("t1", "c1")); err != nil {
		t.Fatal(err)
	}
	if _, err := stores[n-1].Get(ctx, "t1", "c1"); err != nil {
		t.Fatal(err)
	}
}

func TestPushStoreOddIDs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := newPushStore(t, replica(t, natsServer(t)), "ägent. */")
	tasks := []string{"t.1", "t 1", "*", ">", "t/1", "ü", "=dA"}
	ids := []string{"c.1", "c 1", "*", ">", "a/b", "ü", "..", "=YQ"}
	for _, task := range tasks {
		for _, id := range ids {
			if err := s.Save(ctx, pushConfig(task, id)); err != nil {
				t.Fatalf("Save(%q, %q): %v", task, id, err)
			}
		}
	}
	for _, task := range tasks {
		want := make([]push.Config, len(ids))
		for i, id := range ids {
			want[i] = pushConfig(task, id)
		}
		cs, err := s.List(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cs, want) {
			t.Fatalf("List(%q) = %+v, want %+v", task, cs, want)
		}
		for _, c := range want {
			if got, err := s.Get(ctx, task, c.ID); err != nil || !reflect.DeepEqual(got, c) {
				t.Fatalf("Get(%q, %q) = %+v, %v", task, c.ID, got, err)
			}
		}
	}
	// Tasks whose ids differ only in characters a key cannot hold stay
	// apart: deleting one leaves the others.
	if err := s.DeleteTask(ctx, "t.1"); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.List(ctx, "t.1"); err != nil || cs != nil {
		t.Fatalf("List after DeleteTask = %+v, %v", cs, err)
	}
	if cs, err := s.List(ctx, "t 1"); err != nil || len(cs) != len(ids) {
		t.Fatalf("List(%q) after deleting %q = %d configs, %v", "t 1", "t.1", len(cs), err)
	}
	if err := s.Delete(ctx, "t/1", "a/b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "t/1", "a/b"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
}

func TestNewPushStoreNeedsNamespace(t *testing.T) {
	js := replica(t, natsServer(t))
	if _, err := natsstore.NewPushStore(context.Background(), js, natsstore.PushStoreConfig{}); err == nil {
		t.Fatal("NewPushStore without a namespace succeeded")
	}
}

// Replicas that save a deleted config at once all succeed (nats.go reports
// the conflict of creating over a deletion marker differently from that of
// creating over a config), and it goes last.
func TestPushStoreConcurrentRecreate(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	const n = 8
	stores := make([]*natsstore.PushStore, n)
	for i := range stores {
		stores[i] = newPushStore(t, replica(t, e), "agent")
	}
	for round := range 5 {
		for _, id := range []string{"shared", "other"} {
			if err := stores[0].Save(ctx, pushConfig("t1", id)); err != nil {
				t.Fatal(err)
			}
		}
		if err := stores[0].Delete(ctx, "t1", "shared"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for _, s := range stores {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Save(ctx, pushConfig("t1", "shared")); err != nil {
					t.Errorf("round %d: Save: %v", round, err)
				}
			}()
		}
		wg.Wait()
		cs, err := stores[n-1].List(ctx, "t1")
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 2 || cs[0].ID != "other" || cs[1].ID != "shared" {
			t.Fatalf("round %d: List = %+v, want other, shared", round, cs)
		}
		if err := stores[0].DeleteTask(ctx, "t1"); err != nil {
			t.Fatal(err)
		}
	}
}

// A task with more configs than a KV watcher buffers (256) lists whole.
func TestPushStoreManyConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := newPushStore(t, replica(t, natsServer(t)), "agent")
	const n = 600
	for i := range n {
		if err := s.Save(ctx, pushConfig("t1", fmt.Sprintf("c%03d", n-i))); err != nil {
			t.Fatal(err)
		}
	}
	cs, err := s.List(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != n {
		t.Fatalf("List has %d configs, want %d", len(cs), n)
	}
	for i, c := range cs {
		if want := fmt.Sprintf("c%03d", n-i); c.ID != want {
			t.Fatalf("List[%d] = %s, want %s", i, c.ID, want)
		}
	}
	if err := s.DeleteTask(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if cs, err := s.List(ctx, "t1"); err != nil || cs != nil {
		t.Fatalf("List after DeleteTask = %d configs, %v", len(cs), err)
	}
}
