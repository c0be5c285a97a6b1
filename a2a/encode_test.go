package a2a

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func richTask() *Task {
	ts := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	msg := Message{MessageID: "m", ContextID: "c", TaskID: "t", Role: RoleUser,
		Parts:      []Part{TextPart("a \"quoted\" <tag> & \u2028 \x01 \t é \xff"), RawPart([]byte{0, 1, 2}, "x/y", "f.bin"), URLPart("https://h/p?q=1&r=2", "", ""), {Data: json.RawMessage(` { "k" : [1, 2.50, null] } `)}},
		Metadata:   map[string]any{"z": 1, "a": []any{"x", true}, "html": "<b>"},
		Extensions: []string{"https://ext/1"}, ReferenceTaskIDs: []string{"t0"}}
	return &Task{
		ID: "t", ContextID: "c",
		Status:    TaskStatus{State: TaskStateInputRequired, Message: &msg, Timestamp: ts},
		Artifacts: []Artifact{{ArtifactID: "a", Name: "n", Description: "d", Parts: []Part{TextPart("")}, Metadata: map[string]any{"m": 1.5}, Extensions: []string{"e"}}},
		History:   []Message{msg, {MessageID: "m2", Role: RoleAgent}},
		Metadata:  map[string]any{"k": "v"},
	}
}

// TestAppendJSONMatchesEncodingJSON checks the fast encoder against
// encoding/json byte for byte on every type and field it handles.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	task := richTask()
	values := []any{
		task, &Task{}, &task.History[0], &task.History[1], &task.Artifacts[0], &Artifact{},
		&TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: task.Status, Metadata: map[string]any{"x": nil}},
		&TaskStatusUpdateEvent{},
		&TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: task.Artifacts[0], Append: true, LastChunk: true},
		&TaskArtifactUpdateEvent{},
		StreamResponse{Task: task}, StreamResponse{}, &StreamResponse{Message: &task.History[0]},
		StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{}, ArtifactUpdate: &TaskArtifactUpdateEvent{}},
		&Task{ID: "t", Generation: 7}, &Task{Generation: -1},
		&TaskStatusUpdateEvent{TaskID: "t", Metadata: map[string]any{"k": 1}, Generation: 1 << 53},
		&TaskArtifactUpdateEvent{TaskID: "t", LastChunk: true, Generation: 3},
		&SendMessageRequest{Message: &task.History[0], Configuration: &SendMessageConfiguration{IfGenerationMatch: new(Generation(4))}},
	}
	for _, v := range values {
		want := stdJSON(t, v)
		got, err := AppendJSON([]byte("prefix"), v)
		if err != nil {
			t.Fatalf("%T: %v", v, err)
		}
		if !bytes.Equal(got[len("prefix"):], want) {
			t.Fatalf("%T:\n fast %s\n  std %s", v, got[len("prefix"):], want)
		}
	}
}

func TestAppendJSONErrors(t *testing.T) {
	for name, v := range map[string]any{
		"bad data":   &Message{Parts: []Part{{Data: json.RawMessage("{")}}},
		"empty data": &Message{Parts: []Part{{Data: json.RawMessage{}}}},
		"year":       &Task{Status: TaskStatus{Timestamp: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}},
		"metadata":   &Task{Metadata: map[string]any{"f": func() {}}},
	} {
		if _, err := AppendJSON(nil, v); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := json.Marshal(v); err == nil {
			t.Errorf("%s: encoding/json has no error either", name)
		}
	}
}

func BenchmarkAppendJSONTask(b *testing.B) {
	task := richTask()
	task.Metadata, task.Status.Message.Metadata, task.Artifacts[0].Metadata = nil, nil, nil
	for i := range task.History {
		task.History[i].Metadata = nil
	}
	buf := make([]byte, 0, 4096)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = AppendJSON(buf[:0], task)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(task); err != nil {
				b.Fatal(err)
			}
		}
	})
}
