// Package pushtest is the conformance suite every push.ConfigStore
// implementation runs: in-memory and durable stores behave the same. It
// also has fixtures for tests of delivery: a webhook that never answers
// (Stalled) and a log handler that counts records (Logs).
package pushtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/push"
)

// Run runs the suite against stores made by newStore, one per subtest.
func Run(t *testing.T, newStore func(t *testing.T) push.ConfigStore) {
	t.Run("SaveGet", func(t *testing.T) { testSaveGet(t, newStore(t)) })
	t.Run("Copies", func(t *testing.T) { testCopies(t, newStore(t)) })
	t.Run("UpsertKeepsOrder", func(t *testing.T) { testUpsert(t, newStore(t)) })
	t.Run("ListOrder", func(t *testing.T) { testListOrder(t, newStore(t)) })
	t.Run("GetMissing", func(t *testing.T) { testGetMissing(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) { testDelete(t, newStore(t)) })
	t.Run("DeleteTask", func(t *testing.T) { testDeleteTask(t, newStore(t)) })
	t.Run("Validation", func(t *testing.T) { testValidation(t, newStore(t)) })
	t.Run("TaskIsolation", func(t *testing.T) { testIsolation(t, newStore(t)) })
	t.Run("ConcurrentSaves", func(t *testing.T) { testConcurrent(t, newStore(t)) })
}

func config(taskID, id string) push.Config {
	return push.Config{
		TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{
			ID: id, TaskID: taskID, URL: "https://hooks.example.com/" + taskID + "/" + id,
			Token:          "token-" + id,
			Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret-" + id},
		},
		ProtocolVersion: "1.0",
	}
}

func mustSave(t *testing.T, s push.ConfigStore, c push.Config) {
	t.Helper()
	if err := s.Save(context.Background(), c); err != nil {
		t.Fatalf("Save(%s, %s): %v", c.TaskID, c.ID, err)
	}
}

func list(t *testing.T, s push.ConfigStore, taskID string) []push.Config {
	t.Helper()
	cs, err := s.List(context.Background(), taskID)
	if err != nil {
		t.Fatalf("List(%s): %v", taskID, err)
	}
	return cs
}

func ids(cs []push.Config) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return fmt.Sprint(out)
}

func testSaveGet(t *testing.T, s push.ConfigStore) {
	want := config("t1", "c1")
	want.Tenant = "tenant"
	want.ProtocolVersion = "0.3"
	mustSave(t, s, want)
	got, err := s.Get(context.Background(), "t1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Get = %+v (auth %+v), want %+v (auth %+v)", got, got.Authentication, want, want.Authentication)
	}
	// A config without authentication stays without.
	bare := config("t1", "c2")
	bare.Authentication = nil
	mustSave(t, s, bare)
	if got, err := s.Get(context.Background(), "t1", "c2"); err != nil || !reflect.DeepEqual(got, bare) {
		t.Fatalf("Get(bare) = %+v, %v; want %+v", got, err, bare)
	}
}

func testCopies(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	c := config("t1", "c1")
	mustSave(t, s, c)
	c.URL = "https://changed.example.com/"
	c.Authentication.Credentials = "changed after save"
	got, err := s.Get(ctx, "t1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got.URL == c.URL || got.Authentication.Credentials == c.Authentication.Credentials {
		t.Fatalf("changing the saved value changed the store: %+v (auth %+v)", got, got.Authentication)
	}
	got.Authentication.Credentials = "changed after get"
	listed := list(t, s, "t1")
	listed[0].Authentication.Credentials = "changed after list"
	again, err := s.Get(ctx, "t1", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if want := config("t1", "c1"); !reflect.DeepEqual(again, want) {
		t.Fatalf("changing returned configs changed the store: %+v (auth %+v)", again, again.Authentication)
	}
}

func testUpsert(t *testing.T, s push.ConfigStore) {
	for _, id := range []string{"a", "b", "c"} {
		mustSave(t, s, config("t1", id))
	}
	b := config("t1", "b")
	b.URL = "https://new.example.com/hook"
	b.Authentication = nil
	mustSave(t, s, b)
	cs := list(t, s, "t1")
	if ids(cs) != "[a b c]" {
		t.Fatalf("after re-saving b: List = %s, want [a b c]", ids(cs))
	}
	if !reflect.DeepEqual(cs[1], b) {
		t.Fatalf("re-saved config = %+v, want %+v", cs[1], b)
	}
}

func testListOrder(t *testing.T, s push.ConfigStore) {
	if cs := list(t, s, "none"); len(cs) != 0 {
		t.Fatalf("List(unknown task) = %s, want none", ids(cs))
	}
	// Not alphabetical, so a store that sorts by id fails.
	order := []string{"m", "z", "a", "q", "b"}
	for _, id := range order {
		mustSave(t, s, config("t1", id))
	}
	if got := ids(list(t, s, "t1")); got != fmt.Sprint(order) {
		t.Fatalf("List = %s, want %v", got, order)
	}
	for i, c := range list(t, s, "t1") {
		if want := config("t1", order[i]); !reflect.DeepEqual(c, want) {
			t.Fatalf("List[%d] = %+v, want %+v", i, c, want)
		}
	}
}

func testGetMissing(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "t1", "c1"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("Get(unknown task) = %v, want ErrNotFound", err)
	}
	mustSave(t, s, config("t1", "c1"))
	if _, err := s.Get(ctx, "t1", "c2"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("Get(unknown config) = %v, want ErrNotFound", err)
	}
}

func testDelete(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustSave(t, s, config("t1", id))
	}
	if err := s.Delete(ctx, "t1", "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "t1", "b"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if got := ids(list(t, s, "t1")); got != "[a c]" {
		t.Fatalf("List after Delete(b) = %s, want [a c]", got)
	}
	for _, k := range [][2]string{{"t1", "b"}, {"t1", "nope"}, {"nope", "b"}} {
		if err := s.Delete(ctx, k[0], k[1]); err != nil {
			t.Fatalf("Delete(%s, %s) of a missing config = %v, want nil", k[0], k[1], err)
		}
	}
	// A config saved again after deletion is new: it goes last.
	mustSave(t, s, config("t1", "b"))
	if got := ids(list(t, s, "t1")); got != "[a c b]" {
		t.Fatalf("List after saving b again = %s, want [a c b]", got)
	}
	for _, id := range []string{"a", "c", "b"} {
		if err := s.Delete(ctx, "t1", id); err != nil {
			t.Fatal(err)
		}
	}
	if cs := list(t, s, "t1"); len(cs) != 0 {
		t.Fatalf("List after deleting all = %s, want none", ids(cs))
	}
}

func testDeleteTask(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		mustSave(t, s, config("t1", id))
		mustSave(t, s, config("t2", id))
	}
	if err := s.DeleteTask(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	if cs := list(t, s, "t1"); len(cs) != 0 {
		t.Fatalf("List after DeleteTask = %s, want none", ids(cs))
	}
	if _, err := s.Get(ctx, "t1", "a"); !errors.Is(err, push.ErrNotFound) {
		t.Fatalf("Get after DeleteTask = %v, want ErrNotFound", err)
	}
	if got := ids(list(t, s, "t2")); got != "[a b]" {
		t.Fatalf("other task after DeleteTask = %s, want [a b]", got)
	}
	for _, task := range []string{"t1", "nope"} {
		if err := s.DeleteTask(ctx, task); err != nil {
			t.Fatalf("DeleteTask(%s) with no configs = %v, want nil", task, err)
		}
	}
}

func testValidation(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	for _, c := range []push.Config{config("", "c1"), config("t1", ""), config("", "")} {
		err := s.Save(ctx, c)
		if err == nil {
			t.Fatalf("Save(task %q, id %q) = nil, want an error", c.TaskID, c.ID)
		}
		if errors.Is(err, push.ErrNotFound) {
			t.Fatalf("Save(task %q, id %q) = %v, want a validation error, not ErrNotFound", c.TaskID, c.ID, err)
		}
	}
	for _, task := range []string{"", "t1"} {
		if cs := list(t, s, task); len(cs) != 0 {
			t.Fatalf("invalid saves stored %s under task %q", ids(cs), task)
		}
	}
}

func testIsolation(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	c1, c2 := config("t1", "same"), config("t2", "same")
	mustSave(t, s, c1)
	mustSave(t, s, c2)
	for _, want := range []push.Config{c1, c2} {
		got, err := s.Get(ctx, want.TaskID, "same")
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Get(%s, same) = %+v, %v; want %+v", want.TaskID, got, err, want)
		}
	}
	if err := s.Delete(ctx, "t1", "same"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "t2", "same"); err != nil || !reflect.DeepEqual(got, c2) {
		t.Fatalf("deleting t1's config touched t2's: %+v, %v", got, err)
	}
}

func testConcurrent(t *testing.T, s push.ConfigStore) {
	ctx := context.Background()
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			task := fmt.Sprintf("t%d", w%2)
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := s.Save(ctx, config(task, id)); err != nil {
					t.Errorf("Save(%s, %s): %v", task, id, err)
					return
				}
				// Everyone also rewrites one shared config and reads.
				if err := s.Save(ctx, config(task, "shared")); err != nil {
					t.Errorf("Save(%s, shared): %v", task, err)
					return
				}
				if _, err := s.Get(ctx, task, id); err != nil {
					t.Errorf("Get(%s, %s): %v", task, id, err)
					return
				}
				if _, err := s.List(ctx, task); err != nil {
					t.Errorf("List(%s): %v", task, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for task, want := range map[string]int{"t0": writers / 2 * each, "t1": writers / 2 * each} {
		cs := list(t, s, task)
		if len(cs) != want+1 {
			t.Fatalf("List(%s) has %d configs, want %d", task, len(cs), want+1)
		}
		seen := make(map[string]bool, len(cs))
		for _, c := range cs {
			if seen[c.ID] {
				t.Fatalf("List(%s) has %s twice", task, c.ID)
			}
			seen[c.ID] = true
		}
	}
}
