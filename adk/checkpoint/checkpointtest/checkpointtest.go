// Package checkpointtest is the test suite every adk.CheckPointStore must
// pass: the in-memory and file stores here, the NATS one elsewhere.
package checkpointtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
)

// Run tests the store newStore returns; each subtest gets a new store.
func Run(t *testing.T, newStore func(t *testing.T) adk.CheckPointStore) {
	ctx := context.Background()
	t.Run("GetSetDelete", func(t *testing.T) {
		s := newStore(t)
		if _, ok, err := s.Get(ctx, "missing"); ok || err != nil {
			t.Fatalf("missing checkpoint: ok %v, err %v", ok, err)
		}
		data := []byte(`{"version":1}`)
		if err := s.Set(ctx, "task-1", data); err != nil {
			t.Fatal(err)
		}
		data[0] = 'X' // the store keeps its own copy
		got, ok, err := s.Get(ctx, "task-1")
		if !ok || err != nil || string(got) != `{"version":1}` {
			t.Fatalf("got %q, %v, %v", got, ok, err)
		}
		if err := s.Set(ctx, "task-1", []byte("second")); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := s.Get(ctx, "task-1"); string(got) != "second" {
			t.Fatalf("after overwrite: %q", got)
		}
		if err := s.Delete(ctx, "task-1"); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.Get(ctx, "task-1"); ok {
			t.Fatal("deleted checkpoint still there")
		}
		if err := s.Delete(ctx, "task-1"); err != nil {
			t.Fatalf("deleting a missing checkpoint: %v", err)
		}
	})
	t.Run("Ids", func(t *testing.T) {
		s := newStore(t)
		ids := []string{"a", "A", "a/b", "../x", ".", "with space", "ü", "0b4f8a2e-6f8e-4c1b-9d57-1b2c3d4e5f60"}
		for i, id := range ids {
			if err := s.Set(ctx, id, fmt.Appendf(nil, "%d", i)); err != nil {
				t.Fatalf("%q: %v", id, err)
			}
		}
		for i, id := range ids {
			got, ok, err := s.Get(ctx, id)
			if !ok || err != nil || string(got) != fmt.Sprint(i) {
				t.Fatalf("%q: got %q, %v, %v", id, got, ok, err)
			}
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id := fmt.Sprint("cp-", i%2)
				for j := range 20 {
					if err := s.Set(ctx, id, fmt.Appendf(nil, "%d-%d", i, j)); err != nil {
						t.Error(err)
						return
					}
					if _, ok, err := s.Get(ctx, id); !ok || err != nil {
						t.Errorf("get after set: %v %v", ok, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	})
	t.Run("Lock", func(t *testing.T) {
		l, ok := newStore(t).(adk.CheckPointLocker)
		if !ok {
			t.Skip("the store keeps no locks")
		}
		unlock, err := l.Lock(ctx, "cp")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Lock(ctx, "cp"); !errors.Is(err, adk.ErrCheckPointBusy) {
			t.Fatalf("second lock: %v", err)
		}
		other, err := l.Lock(ctx, "other")
		if err != nil {
			t.Fatalf("a lock on another id: %v", err)
		}
		other()
		unlock()
		unlock() // twice is harmless
		again, err := l.Lock(ctx, "cp")
		if err != nil {
			t.Fatalf("lock after unlock: %v", err)
		}
		again()
	})
}
