package grpcclient_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// The generation extension through the SDK over gRPC: the metadata
// a2a-extensions activates it, the draft's fields carry the generations,
// ifGenerationMatch's mismatch matches a2a.ErrTaskGenerationMismatch with
// the ErrorInfo's metadata, and currentGeneration is a long poll.
func TestGenerations(t *testing.T) {
	ln := listen(t)
	card := grpcCard(ln.Addr().String(), "")
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: a2a.GenerationExtension}}
	f := serve(t, ln, server.Config{Card: card})
	c := dial(t, f.addr, "", client.Config{})
	ctx := context.Background()

	tests := []struct {
		name string
		opts []client.CallOption
		want a2a.Generation
	}{
		{"without the extension", nil, 0},
		{"with Generations", []client.CallOption{client.Generations()}, 2},
		{"with it and another", []client.CallOption{client.Extensions("urn:x"), client.Generations()}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := c.SendMessage(ctx, sendReq("input: x"), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if g := ev.(*a2a.Task).Generation; g != tt.want {
				t.Fatalf("generation %d, want %d", g, tt.want)
			}
		})
	}

	ev, err := c.SendMessage(ctx, sendReq("input: y"), client.Generations())
	if err != nil {
		t.Fatal(err)
	}
	task := ev.(*a2a.Task)
	polled := make(chan error, 1)
	var got *a2a.Task
	go func() {
		var err error
		got, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: &task.Generation})
		polled <- err
	}()
	answer := func(match a2a.Generation) *a2a.SendMessageRequest {
		r := sendReq("more")
		r.Message.TaskID = task.ID
		r.Configuration = &a2a.SendMessageConfiguration{IfGenerationMatch: &match}
		return r
	}
	_, err = c.SendMessage(ctx, answer(1))
	var e *a2a.Error
	if !errors.Is(err, a2a.ErrTaskGenerationMismatch) || !errors.As(err, &e) || e.Metadata["currentGeneration"] != "2" || e.Metadata["taskId"] != task.ID {
		t.Fatalf("stale ifGenerationMatch: %v (%+v)", err, e)
	}
	ev, err = c.SendMessage(ctx, answer(2))
	if err != nil || ev.(*a2a.Task).Generation != 5 {
		t.Fatalf("conditional follow-up: %v, %v", ev, err)
	}
	if err := <-polled; err != nil || got.Generation <= task.Generation {
		t.Fatalf("long poll: %v, %v", got, err)
	}

	evs, err := collect(c.SendStreamingMessage(ctx, sendReq("streamed"), client.Generations()))
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range evs {
		var g a2a.Generation
		switch e := ev.Event.(type) {
		case *a2a.Task:
			g = e.Generation
		case *a2a.TaskStatusUpdateEvent:
			g = e.Generation
		case *a2a.TaskArtifactUpdateEvent:
			g = e.Generation
		}
		if ev.ID != strconv.Itoa(i+1) || g != a2a.Generation(i+1) {
			t.Fatalf("event %s: generation %d", ev.ID, g)
		}
	}
}
