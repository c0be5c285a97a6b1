package server_test

import (
	"context"
	"fmt"
	"iter"
	"log"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// shout is an agent that answers every message with its text in capitals.
type shout struct{}

// Execute yields the answer as an artifact and then completes the task;
// the Handler creates the task, records the events and fills in the ids.
func (shout) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		answer := a2a.Artifact{
			ArtifactID: "answer",
			Parts:      []a2a.Part{a2a.TextPart(strings.ToUpper(req.Message.Text()))},
		}
		if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, answer, false, true), nil) {
			return
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
	}
}

// Cancel has nothing to release: shout keeps nothing between runs.
func (shout) Cancel(context.Context, *a2a.Task) error { return nil }

func newShoutHandler() *server.Handler {
	h, err := server.New(server.Config{
		Card: &a2a.AgentCard{
			Name:         "shout",
			Description:  "Repeats what it is told, louder.",
			Version:      "1.0.0",
			Capabilities: a2a.AgentCapabilities{Streaming: true},
		},
		Executor: shout{},
	})
	if err != nil {
		log.Fatal(err)
	}
	return h
}

// A Handler runs the agent for each message; a blocking SendMessage
// returns the task once it settles. A binding such as jsonrpcserver puts
// the Handler on the network; here it is called in process.
func ExampleHandler_SendMessage() {
	ctx := context.Background()
	h := newShoutHandler()
	defer h.Close(ctx)

	ev, err := h.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewTextMessage(a2a.RoleUser, "hello"),
	})
	if err != nil {
		log.Fatal(err)
	}
	task := ev.(*a2a.Task)
	fmt.Println(task.Status.State)
	fmt.Println(task.Artifacts[0].Text())
	fmt.Println(task.History[0].Text())

	// The task stays readable by its id.
	got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Status.State)
	// Output:
	// TASK_STATE_COMPLETED
	// HELLO
	// hello
	// TASK_STATE_COMPLETED
}

// A streaming send yields the task first, then each event as the agent
// makes it, numbered so that a client can resume after the last it saw.
func ExampleHandler_SendStreamingMessage() {
	ctx := context.Background()
	h := newShoutHandler()
	defer h.Close(ctx)

	stream := h.SendStreamingMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewTextMessage(a2a.RoleUser, "hello"),
	})
	for e, err := range stream {
		if err != nil {
			log.Fatal(err)
		}
		switch ev := e.Event.(type) {
		case *a2a.Task:
			fmt.Println(e.Seq, "task", ev.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Println(e.Seq, "artifact", ev.Artifact.Text())
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println(e.Seq, "status", ev.Status.State)
		}
	}
	// Output:
	// 1 task TASK_STATE_SUBMITTED
	// 2 artifact HELLO
	// 3 status TASK_STATE_COMPLETED
}
