package taskstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

var at = time.Date(2026, 11, 27, 14, 11, 9, 980_000_000, time.UTC)

// echoTask is a task as the echo agent leaves it: finished, with the
// message and its echo.
func echoTask(id, ctx string) *a2a.Task {
	msg := a2a.Message{MessageID: "m-1", ContextID: ctx, TaskID: id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hello")}}
	return &a2a.Task{
		ID: id, ContextID: ctx,
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: at},
		Artifacts: []a2a.Artifact{{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart("hello")}}},
		History:   []a2a.Message{msg},
	}
}

// A finished task is held packed, and reads back (Get, List) equal to the
// task stored: its metadata as JSON decodes it, in JSON's own types.
func TestPackedTaskRoundTrip(t *testing.T) {
	full := echoTask("t-full", "c-full")
	full.Status.Message = &a2a.Message{MessageID: "s", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("done \"quoted\" \\ é ✓ \n")}}
	full.Metadata = map[string]any{
		"n": 1.5, "big": 1e300, "s": "x", "t": true, "null": nil,
		"list":   []any{"a", 2.0, map[string]any{"deep": []any{}}},
		"nested": map[string]any{"TASK_STATE_COMPLETED": "id", "id": map[string]any{}},
	}
	full.Artifacts = append(full.Artifacts, a2a.Artifact{
		ArtifactID: "all-parts", Name: "parts", Description: "one of each",
		Parts: []a2a.Part{
			{Raw: []byte{0, 1, 2, 0xff}, Filename: "b.bin", MediaType: "application/octet-stream"},
			{URL: "https://example.com/x?y=1&z=2", Filename: "x"},
			{Data: json.RawMessage(`{"k":[1,2,{"v":null}]}`), MediaType: "application/json"},
			{Text: "with metadata", Metadata: map[string]any{"sentAt": "2026-11-27T14:11:09.98Z"}},
		},
		Metadata:   map[string]any{"chunk": 3.0},
		Extensions: []string{"https://example.com/ext/v1"},
	})
	full.History = append(full.History, a2a.Message{
		MessageID: "m-2", ContextID: "c-full", TaskID: "t-full", Role: a2a.RoleAgent,
		Parts: []a2a.Part{a2a.TextPart("")}, Extensions: []string{"e"}, ReferenceTaskIDs: []string{"t-0", "t-full"},
		Metadata: map[string]any{"adk": map[string]any{"runPath": []any{"root", "echo"}}},
	})
	local := echoTask("t-zone", "c-zone")
	local.Status.Timestamp = at.Add(123456789 * time.Nanosecond)

	tests := []struct {
		name string
		task *a2a.Task
	}{
		{"the echo agent's", echoTask("01a21d58-841b-7eef-9333-fa58cb24c610", "01a21d58-841b-7ef1-8ffb-6e92a5cf339a")},
		{"artifacts, history, metadata, every part", full},
		{"nanoseconds", local},
		{"failed, bare", &a2a.Task{ID: "t-f", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateFailed, Timestamp: at}}},
		{"canceled", &a2a.Task{ID: "t-c", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled, Timestamp: at}}},
		{"rejected, no time", &a2a.Task{ID: "t-r", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateRejected}}},
		{"ids that JSON escapes", &a2a.Task{ID: `t"\é`, ContextID: "c\n", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: at}}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, how := range []string{"created finished", "updated to finished"} {
				m := new(Memory)
				if how == "created finished" {
					if _, err := m.Create(ctx, Entry{Task: tt.task, Seq: 3, Owner: "o"}); err != nil {
						t.Fatal(err)
					}
				} else {
					working := *tt.task
					working.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at.Add(-time.Second)}
					v, err := m.Create(ctx, Entry{Task: &working, Seq: 1, Owner: "o"})
					if err == nil {
						_, err = m.Update(ctx, Entry{Task: tt.task, Seq: 3, Version: v, Owner: "o"})
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if m.done.Len() != 1 || len(m.tasks) != 0 {
					t.Fatalf("%s: %d tasks held packed, %d as they are; want it packed", how, m.done.Len(), len(m.tasks))
				}
				e, err := m.Get(ctx, tt.task.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(e.Task, tt.task) || e.Seq != 3 || e.Owner != "o" {
					g, _ := json.Marshal(e.Task)
					w, _ := json.Marshal(tt.task)
					t.Fatalf("%s: Get = %s (seq %d, owner %q)\nwant %s", how, g, e.Seq, e.Owner, w)
				}
				p, err := m.List(ctx, Query{PageSize: 10, Owner: "o", ContextID: tt.task.ContextID, State: tt.task.Status.State})
				if err != nil || len(p.Tasks) != 1 || !reflect.DeepEqual(p.Tasks[0], tt.task) {
					t.Fatalf("%s: List = %d tasks, %v", how, len(p.Tasks), err)
				}
			}
		})
	}
}

// A finished task that cannot be encoded is held as it is.
func TestUnencodableTaskHeldAsItIs(t *testing.T) {
	ctx := context.Background()
	m := new(Memory)
	task := echoTask("t", "c")
	task.Metadata = map[string]any{"nan": math.NaN()}
	if _, err := m.Create(ctx, Entry{Task: task, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	if e, err := m.Get(ctx, "t"); err != nil || e.Task != task {
		t.Fatalf("Get = %v, %v; want the task stored", e.Task, err)
	}
}

// Finished tasks cost the store little: a few index entries on the Go
// heap, their packed bytes outside it, where their snapshots and index
// entries took about a kilobyte of heap each. The bounds are loose, to hold on any platform;
// the measurement that matters is the server's resident memory (a2aload
// retain, docs/benchmarks.md).
func TestFinishedTasksAreCompact(t *testing.T) {
	const n = 5000
	ctx := context.Background()
	m := new(Memory)
	before := heapAlloc()
	for i := range n {
		// Each snapshot goes once stored; the ids stay, as the indexes'
		// keys.
		task := echoTask(fmt.Sprintf("01a21d58-841b-7eef-9333-%012d", i), fmt.Sprintf("01a21d58-841b-7ef1-8ffb-%012d", i))
		task.Status.Timestamp = at.Add(time.Duration(i) * time.Millisecond)
		if _, err := m.Create(ctx, Entry{Task: task, Seq: 3}); err != nil {
			t.Fatal(err)
		}
	}
	heap := (int64(heapAlloc()) - int64(before)) / n
	packed := int64(m.done.Held()) / n
	t.Logf("per finished task: %d bytes of Go heap, %d packed", heap, packed)
	if heap > 256 || heap+packed > 640 {
		t.Fatalf("a finished task takes %d bytes of Go heap and %d packed, want at most 256 and 640 in all", heap, packed)
	}
	runtime.KeepAlive(m)
}

func heapAlloc() uint64 {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}
