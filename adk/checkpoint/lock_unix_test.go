//go:build unix

package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
