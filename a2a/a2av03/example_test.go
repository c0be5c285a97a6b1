package a2av03_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
)

// A 0.3 peer's task decodes into the 0.3 types and converts to the 1.0
// model; FromTask converts it back for the 0.3 wire.
func ExampleTask_ToTask() {
	wire := []byte(`{
		"kind": "task",
		"id": "t1",
		"contextId": "c1",
		"status": {"state": "input-required"},
		"history": [{"kind": "message", "messageId": "m1", "role": "user",
			"parts": [{"kind": "text", "text": "book a table"}]}]
	}`)
	var v03 a2av03.Task
	if err := json.Unmarshal(wire, &v03); err != nil {
		log.Fatal(err)
	}
	task, err := v03.ToTask()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status.State, task.History[0].Role, task.History[0].Text())

	back, err := json.Marshal(a2av03.FromTask(task))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(back))
	// Output:
	// TASK_STATE_INPUT_REQUIRED ROLE_USER book a table
	// {"kind":"task","id":"t1","contextId":"c1","status":{"state":"input-required"},"history":[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"book a table"}]}]}
}

// FromEvent gives the 0.3 form of any 1.0 event, with the "kind"
// discriminator and, on a status update, the "final" flag; DecodeEvent
// reads one back by its kind.
func ExampleFromEvent() {
	ev := &a2a.TaskStatusUpdateEvent{
		TaskID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateCompleted},
	}
	b, err := json.Marshal(a2av03.FromEvent(ev))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(b))

	got, err := a2av03.DecodeEvent(b)
	if err != nil {
		log.Fatal(err)
	}
	state, _ := a2a.StateOf(got)
	fmt.Println(state)
	// Output:
	// {"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}
	// TASK_STATE_COMPLETED
}
