package eventlog_test

import (
	"slices"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/eventlog/logtest"
)

func TestMemory(t *testing.T) {
	logtest.Run(t, func(*testing.T) eventlog.Log { return new(eventlog.Memory) })
}

// TestMemoryMore checks the batching hint: entries already stored when a
// subscription reads them say that more follow, except the last.
func TestMemoryMore(t *testing.T) {
	ctx := t.Context()
	m := new(eventlog.Memory)
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := m.Append(ctx, "t", 1, task); err != nil {
		t.Fatal(err)
	}
	for seq := uint64(2); seq <= 3; seq++ {
		state := a2a.TaskStateWorking
		if seq == 3 {
			state = a2a.TaskStateCompleted
		}
		if err := m.Append(ctx, "t", seq, a2a.NewStatusUpdate("t", "c", state, nil)); err != nil {
			t.Fatal(err)
		}
	}
	var more []bool
	for e, err := range m.Subscribe(ctx, "t", 0) {
		if err != nil {
			t.Fatal(err)
		}
		more = append(more, e.More)
	}
	if want := []bool{true, true, false}; !slices.Equal(more, want) {
		t.Fatalf("More = %v, want %v", more, want)
	}
}
