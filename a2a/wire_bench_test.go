package a2a

import (
	"testing"
	"time"
)

// BenchmarkWire measures the JSON an echo request costs a server (its
// SendMessageRequest read, its task or stream events written) and what a
// client or relay reads back, through AppendJSON and Unmarshal: the
// hand-written fast paths, or the codec a build tag routes them through
// (go test -tags a2amesh_stdjson or a2amesh_sonicjson; docs/benchmarks.md).
func BenchmarkWire(b *testing.B) {
	ts := time.Date(2026, 11, 24, 0, 0, 0, 123_000_000, time.UTC)
	user := Message{MessageID: "m-1", ContextID: "01a1fd2f-fbd1-734d-a240-cb305d4b39d4", TaskID: "01a1fd2f-fbd1-734b-bda2-d85633dff9e0",
		Role: RoleUser, Parts: []Part{TextPart("hello")}}
	task := &Task{ID: user.TaskID, ContextID: user.ContextID, Status: TaskStatus{State: TaskStateCompleted, Timestamp: ts},
		Artifacts: []Artifact{{ArtifactID: "echo", Parts: []Part{TextPart("hello")}}}, History: []Message{user}}
	chunk := StreamResponse{ArtifactUpdate: NewArtifactUpdate(task.ID, task.ContextID, Artifact{ArtifactID: "echo", Parts: []Part{TextPart("hello ")}}, true, false)}
	status := StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: TaskStatus{State: TaskStateWorking, Timestamp: ts}}}
	request := []byte(`{"message":{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"hello"}]}}`)
	result, err := AppendJSON(nil, StreamResponse{Task: task})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	for _, enc := range []struct {
		name string
		v    any
	}{{"encode=Task", task}, {"encode=StatusUpdate", status}, {"encode=ArtifactUpdate", chunk}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if buf, err = AppendJSON(buf[:0], enc.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("decode=SendMessageRequest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v SendMessageRequest
			if err := Unmarshal(request, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, dec := range []struct {
		name string
		data []byte
	}{{"decode=StreamResponse/task", result}, {"decode=StreamResponse/meshEvent", []byte(meshEvent)}} {
		b.Run(dec.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v StreamResponse
				if err := Unmarshal(dec.data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
