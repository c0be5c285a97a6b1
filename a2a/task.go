package a2a

import (
	"fmt"
	"time"
)

// TaskState is a task's lifecycle state. The zero TaskState is unspecified:
// never valid on a task, and "no filter" in ListTasksRequest.
type TaskState string

// The task states of the 1.0 wire.
const (
	TaskStateSubmitted     TaskState = "TASK_STATE_SUBMITTED"
	TaskStateWorking       TaskState = "TASK_STATE_WORKING"
	TaskStateCompleted     TaskState = "TASK_STATE_COMPLETED"
	TaskStateFailed        TaskState = "TASK_STATE_FAILED"
	TaskStateCanceled      TaskState = "TASK_STATE_CANCELED"
	TaskStateInputRequired TaskState = "TASK_STATE_INPUT_REQUIRED"
	TaskStateRejected      TaskState = "TASK_STATE_REJECTED"
	TaskStateAuthRequired  TaskState = "TASK_STATE_AUTH_REQUIRED"
)

// taskStateNumbers maps ProtoJSON enum numbers to states.
var taskStateNumbers = [...]TaskState{
	1: TaskStateSubmitted, 2: TaskStateWorking, 3: TaskStateCompleted, 4: TaskStateFailed,
	5: TaskStateCanceled, 6: TaskStateInputRequired, 7: TaskStateRejected, 8: TaskStateAuthRequired,
}

// Valid reports whether s is one of the defined states.
func (s TaskState) Valid() bool {
	switch s {
	case TaskStateSubmitted, TaskStateWorking, TaskStateCompleted, TaskStateFailed,
		TaskStateCanceled, TaskStateInputRequired, TaskStateRejected, TaskStateAuthRequired:
		return true
	}
	return false
}

// Terminal reports whether s is final: completed, failed, canceled or
// rejected. A terminal task accepts no further messages or events.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected:
		return true
	}
	return false
}

// Interrupted reports whether s pauses the task for the client:
// input or authentication is required before the agent can go on.
func (s TaskState) Interrupted() bool {
	return s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// Settled reports whether s ends an agent's run: terminal or interrupted.
// Blocking sends return and streams close at a settled state.
func (s TaskState) Settled() bool { return s.Terminal() || s.Interrupted() }

// UnmarshalJSON accepts the enum names and, as ProtoJSON allows, their
// numbers. TASK_STATE_UNSPECIFIED (0) and "" decode to the zero TaskState.
func (s *TaskState) UnmarshalJSON(b []byte) error {
	str := string(b)
	if len(str) >= 2 && str[0] == '"' && str[len(str)-1] == '"' {
		v := TaskState(str[1 : len(str)-1])
		if v.Valid() {
			*s = v
			return nil
		}
		if v == "TASK_STATE_UNSPECIFIED" || v == "" {
			*s = ""
			return nil
		}
	} else if str == "0" {
		*s = ""
		return nil
	} else if len(str) == 1 && str[0] >= '1' && str[0] <= '8' {
		*s = taskStateNumbers[str[0]-'0']
		return nil
	}
	return fmt.Errorf("unknown task state %s (want a TASK_STATE_* name)", str)
}

// CheckTransition reports whether a task may move from state from to state
// to. A terminal task never changes; no task goes back to SUBMITTED once it
// has left it; and the unspecified state is never a target. Staying in a
// non-terminal state is allowed (a progress update).
func CheckTransition(from, to TaskState) error {
	switch {
	case !to.Valid():
		return fmt.Errorf("invalid target state %q", to)
	case from.Terminal():
		return fmt.Errorf("task is %s, a terminal state; it cannot become %s", from, to)
	case to == TaskStateSubmitted && from != TaskStateSubmitted && from != "":
		return fmt.Errorf("task is %s; it cannot go back to %s", from, to)
	}
	return nil
}

// TaskStatus is a task's state at a point in time.
type TaskStatus struct {
	State TaskState `json:"state"`
	// Message optionally explains the state, e.g. the question asked in
	// INPUT_REQUIRED.
	Message *Message `json:"message,omitempty"`
	// Timestamp is when the status was recorded, in UTC.
	Timestamp time.Time `json:"timestamp,omitzero"`
}

// Now returns the current time as the protocol records it: UTC with
// millisecond precision.
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Artifact is an output of a task.
type Artifact struct {
	// ArtifactID is unique within the task; required.
	ArtifactID  string         `json:"artifactId"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parts       []Part         `json:"parts"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	Extensions  []string       `json:"extensions,omitempty"`
}

// Text returns the concatenation of the artifact's text parts.
func (a *Artifact) Text() string { return partsText(a.Parts) }

// Task is the unit of work an agent performs for a client.
type Task struct {
	ID        string     `json:"id"`
	ContextID string     `json:"contextId"`
	Status    TaskStatus `json:"status"`
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// History holds the messages exchanged so far, oldest first.
	History  []Message      `json:"history,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	// Generation is the number of the task's last event reflected here
	// (see GenerationExtension); 0 unless the extension is active.
	Generation Generation `json:"generation,omitempty"`
}

// TaskIDs implements Event.
func (t *Task) TaskIDs() (taskID, contextID string) { return t.ID, t.ContextID }

func (*Task) isEvent() {}

// TaskStatusUpdateEvent tells that a task's status changed.
type TaskStatusUpdateEvent struct {
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    TaskStatus     `json:"status"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Generation is the task's generation after this event: the event's
	// own number (see GenerationExtension); 0 unless the extension is
	// active.
	Generation Generation `json:"generation,omitempty"`
}

// NewStatusUpdate returns a status event for the task, stamped now.
func NewStatusUpdate(taskID, contextID string, state TaskState, msg *Message) *TaskStatusUpdateEvent {
	return &TaskStatusUpdateEvent{
		TaskID:    taskID,
		ContextID: contextID,
		Status:    TaskStatus{State: state, Message: msg, Timestamp: Now()},
	}
}

// TaskIDs implements Event.
func (e *TaskStatusUpdateEvent) TaskIDs() (taskID, contextID string) { return e.TaskID, e.ContextID }

func (*TaskStatusUpdateEvent) isEvent() {}

// TaskArtifactUpdateEvent delivers an artifact or a chunk of one.
type TaskArtifactUpdateEvent struct {
	TaskID    string   `json:"taskId"`
	ContextID string   `json:"contextId"`
	Artifact  Artifact `json:"artifact"`
	// Append adds the parts to the artifact with the same id sent earlier,
	// instead of replacing it.
	Append bool `json:"append,omitempty"`
	// LastChunk marks the artifact's final chunk.
	LastChunk bool           `json:"lastChunk,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Generation is the task's generation after this event: the event's
	// own number (see GenerationExtension); 0 unless the extension is
	// active.
	Generation Generation `json:"generation,omitempty"`
}

// NewArtifactUpdate returns an artifact event for the task.
func NewArtifactUpdate(taskID, contextID string, artifact Artifact, appendParts, lastChunk bool) *TaskArtifactUpdateEvent {
	return &TaskArtifactUpdateEvent{
		TaskID: taskID, ContextID: contextID, Artifact: artifact,
		Append: appendParts, LastChunk: lastChunk,
	}
}

// TaskIDs implements Event.
func (e *TaskArtifactUpdateEvent) TaskIDs() (taskID, contextID string) {
	return e.TaskID, e.ContextID
}

func (*TaskArtifactUpdateEvent) isEvent() {}

// Event is anything an agent emits and a stream carries: a *Task, a
// *Message, a *TaskStatusUpdateEvent or a *TaskArtifactUpdateEvent.
type Event interface {
	// TaskIDs returns the task and context the event belongs to.
	TaskIDs() (taskID, contextID string)
	isEvent()
}

// StateOf returns the task state an event sets, if it sets one.
func StateOf(ev Event) (TaskState, bool) {
	switch e := ev.(type) {
	case *Task:
		return e.Status.State, true
	case *TaskStatusUpdateEvent:
		return e.Status.State, true
	}
	return "", false
}

// StreamResponse is the wire wrapper of one Event: exactly one field is
// set. It is the result of SendMessage (task or message) and each item of a
// stream, and the body of a 1.0 push notification.
type StreamResponse struct {
	Task           *Task                    `json:"task,omitempty"`
	Message        *Message                 `json:"message,omitempty"`
	StatusUpdate   *TaskStatusUpdateEvent   `json:"statusUpdate,omitempty"`
	ArtifactUpdate *TaskArtifactUpdateEvent `json:"artifactUpdate,omitempty"`
}

// Wrap returns the StreamResponse carrying ev.
func Wrap(ev Event) StreamResponse {
	switch e := ev.(type) {
	case *Task:
		return StreamResponse{Task: e}
	case *Message:
		return StreamResponse{Message: e}
	case *TaskStatusUpdateEvent:
		return StreamResponse{StatusUpdate: e}
	case *TaskArtifactUpdateEvent:
		return StreamResponse{ArtifactUpdate: e}
	}
	return StreamResponse{}
}

// Event returns the carried event, or an error unless exactly one field is set.
func (r StreamResponse) Event() (Event, error) {
	var ev Event
	n := 0
	if r.Task != nil {
		ev, n = r.Task, n+1
	}
	if r.Message != nil {
		ev, n = r.Message, n+1
	}
	if r.StatusUpdate != nil {
		ev, n = r.StatusUpdate, n+1
	}
	if r.ArtifactUpdate != nil {
		ev, n = r.ArtifactUpdate, n+1
	}
	if n != 1 {
		return nil, fmt.Errorf("stream response has %d payloads: want exactly one of task, message, statusUpdate, artifactUpdate", n)
	}
	return ev, nil
}
