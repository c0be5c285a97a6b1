//go:build unix

package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
)

func TestFileLockShared(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s1, err := checkpoint.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := checkpoint.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Two stores on one directory (two processes, as far as the lock is
	// concerned: each opens its own lock file) share the lock.
	unlock, err := s1.Lock(ctx, "task/1.x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Lock(ctx, "task/1.x"); err == nil {
		t.Fatal("two stores on one directory both locked a checkpoint")
	}
	if _, err := os.Stat(filepath.Join(dir, ".locks", "task%2F1%2Ex")); err != nil {
		t.Fatal(err)
	}
	unlock()
	again, err := s2.Lock(ctx, "task/1.x")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	again()
}

// A lock file lives as long as its lock: many runs (lock, save, maybe
// finish and delete, unlock) leave the live checkpoints and nothing else.
func TestFileLockFilesGo(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s, err := checkpoint.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	const runs = 1000
	live := 0
	for i := range runs {
		id := fmt.Sprint("task-", i)
		unlock, err := s.Lock(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, id, []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 { // interrupted: the checkpoint stays
			live++
		} else if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
		unlock()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != live+1 { // the checkpoints and .locks
		t.Errorf("%d runs, %d live checkpoints: the directory holds %d entries", runs, live, len(entries))
	}
	locks, err := os.ReadDir(filepath.Join(dir, ".locks"))
	if err != nil {
		t.Fatal(err)
	}
	if len(locks) != 0 {
		t.Errorf("%d runs left %d lock files behind (the first: %s)", runs, len(locks), locks[0].Name())
	}
}

// Removing lock files must not let two claims hold one id: stores of their
// own (each opens its own lock file, as another process would) race for
// one id, and never two hold it at once.
func TestFileLockExclusiveWhileFilesGo(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	const stores, rounds = 8, 400
	var holders, claims atomic.Int64
	var wg sync.WaitGroup
	for range stores {
		s, err := checkpoint.NewFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				unlock, err := s.Lock(ctx, "task")
				if errors.Is(err, adk.ErrCheckPointBusy) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				claims.Add(1)
				if n := holders.Add(1); n > 1 {
					t.Errorf("%d claims hold one checkpoint", n)
				}
				runtime.Gosched()
				holders.Add(-1)
				unlock()
			}
		}()
	}
	wg.Wait()
	if claims.Load() == 0 {
		t.Fatal("no claim succeeded")
	}
	if locks, _ := os.ReadDir(filepath.Join(dir, ".locks")); len(locks) != 0 {
		t.Errorf("%d lock files left behind", len(locks))
	}
}
