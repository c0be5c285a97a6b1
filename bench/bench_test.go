// Package bench compares a2amesh with a2a-go v2.4.0 side by side in one
// run: the same echo agent behind each implementation's request handler
// (no network), and each implementation's JSON encoding of a task. Run
// with `make bench`, or in bench/ (a module of its own, so that a2a-go is
// no dependency of a2amesh):
//
//	go test -run XXX -bench . -benchmem
package bench

import (
	"context"
	"encoding/json"
	"testing"

	goa2a "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2asrv/taskstore"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/bench/peers/goecho"
	"github.com/a2amesh/a2amesh/services/echo"
)

func BenchmarkSendMessage(b *testing.B) {
	ctx := context.Background()
	b.Run("impl=a2amesh", func(b *testing.B) {
		h, err := server.New(server.Config{Card: echo.Card("http://bench/"), Executor: new(echo.Executor), Retention: 1})
		if err != nil {
			b.Fatal(err)
		}
		defer h.Close(ctx)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hello")}}}
				if _, err := h.SendMessage(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	b.Run("impl=a2a-go", func(b *testing.B) {
		h := a2asrv.NewHandler(&goecho.Executor{}, a2asrv.WithTaskStore(taskstore.NewInMemory(&taskstore.InMemoryStoreConfig{})))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				req := &goa2a.SendMessageRequest{Message: goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.NewTextPart("hello"))}
				if _, err := h.SendMessage(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

func BenchmarkEncodeTask(b *testing.B) {
	b.Run("impl=a2amesh", func(b *testing.B) {
		t := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: a2a.Now()},
			Artifacts: []a2a.Artifact{{ArtifactID: "echo", Parts: []a2a.Part{a2a.TextPart("hello")}}},
			History:   []a2a.Message{{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hello")}}}}
		// What the server does: encode into a reused buffer.
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = a2a.AppendJSON(buf[:0], a2a.StreamResponse{Task: t}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("impl=a2a-go", func(b *testing.B) {
		t := &goa2a.Task{ID: "t", ContextID: "c", Status: goa2a.TaskStatus{State: goa2a.TaskStateCompleted},
			Artifacts: []*goa2a.Artifact{{ID: "echo", Parts: goa2a.ContentParts{goa2a.NewTextPart("hello")}}},
			History:   []*goa2a.Message{goa2a.NewMessage(goa2a.MessageRoleUser, goa2a.NewTextPart("hello"))}}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(goa2a.StreamResponse{Event: t}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
