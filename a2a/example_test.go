package a2a_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/a2a"
)

// A message is a role and parts; Text joins the text parts and skips the
// others.
func ExampleNewMessage() {
	data, err := a2a.DataPart(map[string]int{"count": 3})
	if err != nil {
		log.Fatal(err)
	}
	msg := a2a.NewMessage(a2a.RoleUser,
		a2a.TextPart("Summarize "),
		a2a.URLPart("https://example.com/report.pdf", "application/pdf", "report.pdf"),
		a2a.TextPart("this report."),
		data,
	)
	fmt.Println(msg.Text())
	for _, p := range msg.Parts {
		fmt.Println(p.Kind())
	}
	// Output:
	// Summarize this report.
	// text
	// url
	// text
	// data
}

// A task's state and outputs are read from its status and artifacts; an
// agent's events are applied to it as they arrive.
func ExampleTask() {
	task := &a2a.Task{
		ID:        "task-1",
		ContextID: "ctx-1",
		Status:    a2a.TaskStatus{State: a2a.TaskStateWorking},
	}
	events := []a2a.Event{
		a2a.NewArtifactUpdate(task.ID, task.ContextID, a2a.Artifact{
			ArtifactID: "answer",
			Parts:      []a2a.Part{a2a.TextPart("42")},
		}, false, true),
		a2a.NewStatusUpdate(task.ID, task.ContextID, a2a.TaskStateCompleted, nil),
	}
	for _, ev := range events {
		switch e := ev.(type) {
		case *a2a.TaskArtifactUpdateEvent:
			task.Artifacts = append(task.Artifacts, e.Artifact)
		case *a2a.TaskStatusUpdateEvent:
			if err := a2a.CheckTransition(task.Status.State, e.Status.State); err != nil {
				log.Fatal(err)
			}
			task.Status = e.Status
		}
	}
	fmt.Println(task.Status.State, task.Status.State.Terminal())
	fmt.Println(task.Artifacts[0].Text())
	// Output:
	// TASK_STATE_COMPLETED true
	// 42
}

// AppendJSON writes the 1.0 wire form; Unmarshal reads it back.
func ExampleAppendJSON() {
	msg := &a2a.Message{MessageID: "m1", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("hi")}}
	b, err := a2a.AppendJSON(nil, a2a.Wrap(msg))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))

	var resp a2a.StreamResponse
	if err := a2a.Unmarshal(b, &resp); err != nil {
		log.Fatal(err)
	}
	ev, err := resp.Event()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ev.(*a2a.Message).Text())
	// Output:
	// {"message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"hi"}]}}
	// hi
}

// Protocol errors carry a code; errors.Is matches any error with the
// sentinel's code, whatever its message.
func ExampleErrorf() {
	err := fmt.Errorf("get task: %w", a2a.Errorf(a2a.CodeTaskNotFound, "no task %q", "t-9"))
	fmt.Println(errors.Is(err, a2a.ErrTaskNotFound))
	e := a2a.AsError(err)
	fmt.Println(e.Code, e.Code.Reason(), e.Message)
	// Output:
	// true
	// task not found TASK_NOT_FOUND no task "t-9"
}
