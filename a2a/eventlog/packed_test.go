package eventlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

var at = time.Date(2026, 11, 27, 14, 11, 9, 980_000_000, time.UTC)

// echoEvents are the events of the echo agent's blocking send.
func echoEvents(id, ctx string) []a2a.Event {
	msg := a2a.Message{MessageID: "m-1", ContextID: ctx, TaskID: id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hello")}}
	return []a2a.Event{
		&a2a.Task{ID: id, ContextID: ctx, Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: at}, History: []a2a.Message{msg}},
		&a2a.TaskArtifactUpdateEvent{TaskID: id, ContextID: ctx, Artifact: a2a.Artifact{ArtifactID: "echo", Name: "echo", Parts: []a2a.Part{a2a.TextPart("hello")}}, LastChunk: true},
		&a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctx, Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: at}},
	}
}

// A sealed log is held packed, and replays, from any event, events equal
// to those appended: their metadata as JSON decodes it, in JSON's own
// types.
func TestPackedLogRoundTrip(t *testing.T) {
	chunk := func(text string, appendParts, last bool) a2a.Event {
		return &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Append: appendParts, LastChunk: last,
			Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(text)}, Metadata: map[string]any{"sentAt": at.Format(time.RFC3339Nano)}},
			Metadata: map[string]any{"n": 2.0}}
	}
	tests := []struct {
		name   string
		events []a2a.Event
	}{
		{"the echo agent's", echoEvents("01a21d58-841b-7eef-9333-fa58cb24c610", "01a21d58-841b-7ef1-8ffb-6e92a5cf339a")},
		{"chunks, messages, metadata", []a2a.Event{
			&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: at}, Metadata: map[string]any{"list": []any{"x", nil, true}}},
			&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: at,
				Message: &a2a.Message{MessageID: "w", Role: a2a.RoleAgent, Parts: []a2a.Part{{Data: json.RawMessage(`{"step":1}`)}, {Raw: []byte("raw"), Filename: "f"}}}}},
			chunk("hel", false, false), chunk("lo \"é\"", true, false), chunk("", true, true),
			&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateFailed, Timestamp: at.Add(time.Nanosecond)},
				Metadata: map[string]any{"why": map[string]any{"code": -32603.0}}},
		}},
		{"canceled at once", []a2a.Event{&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}}}},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, _ := tt.events[0].TaskIDs()
			for _, batch := range []int{1, len(tt.events)} { // one event an append, or all in one
				var m Memory
				for i := 0; i < len(tt.events); i += batch {
					if err := m.Append(ctx, id, uint64(i+1), tt.events[i:min(i+batch, len(tt.events))]...); err != nil {
						t.Fatal(err)
					}
				}
				if m.sealed.Len() != 1 || len(m.tasks) != 0 {
					t.Fatalf("%d logs held packed, %d as they are; want it packed", m.sealed.Len(), len(m.tasks))
				}
				if n, err := m.Last(ctx, id); n != uint64(len(tt.events)) || err != nil {
					t.Fatalf("Last = %d, %v; want %d", n, err, len(tt.events))
				}
				for after := range uint64(len(tt.events) + 1) {
					var got []a2a.Event
					for e, err := range m.Subscribe(ctx, id, after) {
						if err != nil {
							t.Fatal(err)
						}
						if e.Seq != after+uint64(len(got))+1 {
							t.Fatalf("after %d: event %d numbered %d", after, len(got), e.Seq)
						}
						got = append(got, e.Event)
					}
					if want := tt.events[after:]; !reflect.DeepEqual(got, want) && !(len(got) == 0 && len(want) == 0) {
						g, _ := json.Marshal(got)
						w, _ := json.Marshal(want)
						t.Fatalf("after %d:\n got %s\nwant %s", after, g, w)
					}
				}
				if err := m.Append(ctx, id, uint64(len(tt.events)+1), tt.events[0]); !errors.Is(err, ErrSealed) {
					t.Fatalf("append to the packed log = %v, want ErrSealed", err)
				}
				// Deleted, the log may begin again.
				if err := m.Delete(ctx, id); err != nil {
					t.Fatal(err)
				}
				if _, err := m.Last(ctx, id); !errors.Is(err, ErrNotFound) {
					t.Fatalf("Last after Delete = %v, want ErrNotFound", err)
				}
				if err := m.Append(ctx, id, 1, tt.events[0]); err != nil {
					t.Fatalf("append after Delete = %v", err)
				}
			}
		})
	}
}

// A sealed log whose events cannot be encoded is held as it is.
func TestUnencodableLogHeldAsItIs(t *testing.T) {
	ctx := context.Background()
	var m Memory
	events := echoEvents("t", "c")
	events[2].(*a2a.TaskStatusUpdateEvent).Metadata = map[string]any{"nan": math.NaN()}
	if err := m.Append(ctx, "t", 1, events...); err != nil {
		t.Fatal(err)
	}
	i := 0
	for e, err := range m.Subscribe(ctx, "t", 0) {
		if err != nil || e.Event != events[i] {
			t.Fatalf("event %d = %v, %v; want the event appended", i+1, e.Event, err)
		}
		i++
	}
}

// Sealed logs cost nothing on the Go heap, and a few hundred bytes
// outside it, where their events took about half a kilobyte of heap. The bounds
// are loose, to hold on any platform; the measurement that matters is the
// server's resident memory (a2aload retain, docs/benchmarks.md).
func TestSealedLogsAreCompact(t *testing.T) {
	const n = 5000
	ctx := context.Background()
	var m Memory
	before := heapAlloc()
	for i := range n {
		id := fmt.Sprintf("01a21d58-841b-7eef-9333-%012d", i)
		if err := m.Append(ctx, id, 1, echoEvents(id, fmt.Sprintf("01a21d58-841b-7ef1-8ffb-%012d", i))...); err != nil {
			t.Fatal(err)
		}
	}
	heap := (int64(heapAlloc()) - int64(before)) / n
	packed := int64(m.sealed.Held()) / n
	t.Logf("per sealed log: %d bytes of Go heap, %d packed", heap, packed)
	if heap > 64 || heap+packed > 512 {
		t.Fatalf("a sealed log takes %d bytes of Go heap and %d packed, want at most 64 and 512 in all", heap, packed)
	}
	runtime.KeepAlive(&m)
}

func heapAlloc() uint64 {
	var s runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&s)
	return s.HeapAlloc
}
