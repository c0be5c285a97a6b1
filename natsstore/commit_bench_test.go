package natsstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
)

// BenchmarkCommit compares, on one in-process NATS server, what a blocking
// echo task costs to make durable (client and server CPU together, 32
// writers): one bare acknowledged publish of its events (the floor), the
// store's one commit (events and snapshot in one message), and the two
// writes of the builds before it (the log's message, then a snapshot in
// the tasks bucket).
func BenchmarkCommit(b *testing.B) {
	e := natsServer(b)
	js := replica(b, e)
	ctx := context.Background()
	echo := func(id string) (*a2a.Task, []a2a.Event) {
		msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hello"))
		t := &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: time.Now().UTC()},
			History:   []a2a.Message{*msg},
			Artifacts: []a2a.Artifact{{ArtifactID: "echo", Parts: []a2a.Part{a2a.TextPart("hello")}}}}
		return t, []a2a.Event{
			&a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}, History: []a2a.Message{*msg}},
			a2a.NewStatusUpdate(id, "c", a2a.TaskStateWorking, nil),
			a2a.NewArtifactUpdate(id, "c", t.Artifacts[0], false, true),
			a2a.NewStatusUpdate(id, "c", a2a.TaskStateCompleted, nil),
		}
	}
	var n atomic.Int64
	id := func(prefix string) string { return fmt.Sprintf("%s-%d", prefix, n.Add(1)) }
	for _, keep := range []time.Duration{0, 5 * time.Second} {
		l, err := natsstore.NewLog(ctx, js, natsstore.LogConfig{Namespace: fmt.Sprint("bench", keep)})
		if err != nil {
			b.Fatal(err)
		}
		s, err := natsstore.NewTaskStore(ctx, js, natsstore.TaskStoreConfig{Log: l, KeepEnded: keep})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint("floor/keep=", keep), func(b *testing.B) {
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, evs := echo("x")
					var body []byte
					for _, ev := range evs {
						body, _ = a2a.AppendJSON(body, a2a.Wrap(ev))
						body = append(body, '\n')
					}
					if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: natsstore.EventsSubjectPrefix + "floor." + id("f"), Data: body}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		b.Run(fmt.Sprint("commit/keep=", keep), func(b *testing.B) {
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t, evs := echo(id("c"))
					if _, err := s.Commit(ctx, taskstore.Entry{Task: t, Seq: uint64(len(evs))}, evs...); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
