package checkpoint_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/checkpoint/checkpointtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemory(t *testing.T) {
	checkpointtest.Run(t, func(*testing.T) adk.CheckPointStore { return &adk.MemoryCheckPointStore{} })
}

func TestFile(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) adk.CheckPointStore {
		s, err := checkpoint.NewFile(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestFileLayout(t *testing.T) {
	dir := t.TempDir()
	s, err := checkpoint.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Set(ctx, "task/1.x", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// One file per checkpoint, no temporary files left, the id escaped.
	if strings.Join(names, ",") != ".locks,task%2F1%2Ex.json" {
		t.Fatalf("directory holds %v", names)
	}
	if err := s.Set(ctx, strings.Repeat("x", 201), nil); err == nil {
		t.Fatal("an id too long for a file name accepted")
	}
	// Another store on the same directory (another process, after a
	// restart) sees the checkpoint.
	s2, err := checkpoint.NewFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s2.Get(ctx, "task/1.x"); !ok || string(got) != "{}" {
		t.Fatal("a second store does not see the checkpoint")
	}
}
