package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/conformance"
)

func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }

func newHandler(t *testing.T, exec *conformance.Executor) *server.Handler {
	t.Helper()
	h := a2atest.NewHandler(t, server.Config{Card: conformance.Card("http://127.0.0.1/"), Executor: exec})
	t.Cleanup(func() {
		if err := h.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return h
}

// message is a user message whose messageId starts with prefix, as the
// kit's are (the prefix, then a session id).
func message(prefix string) *a2a.Message {
	m := a2a.NewTextMessage(a2a.RoleUser, "TCK test")
	m.MessageID = prefix + "-3f9a12c0"
	return m
}

// describe writes an event as the table below spells it.
func describe(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return "task " + string(e.Status.State)
	case *a2a.Message:
		return "message " + describeParts(e.Parts)
	case *a2a.TaskStatusUpdateEvent:
		s := "status " + string(e.Status.State)
		if e.Status.Message != nil {
			s += " " + describeParts(e.Status.Message.Parts)
		}
		return s
	case *a2a.TaskArtifactUpdateEvent:
		s := "artifact " + describeParts(e.Artifact.Parts)
		if e.Append {
			s += " append"
		}
		if e.LastChunk {
			s += " last"
		}
		return s
	}
	return fmt.Sprintf("%T", ev)
}

func describeParts(parts []a2a.Part) string {
	var out []string
	for _, p := range parts {
		switch p.Kind() {
		case a2a.PartKindText:
			out = append(out, fmt.Sprintf("%q", p.Text))
		case a2a.PartKindRaw:
			out = append(out, fmt.Sprintf("file %s %s %q", p.Filename, p.MediaType, p.Raw))
		case a2a.PartKindURL:
			out = append(out, fmt.Sprintf("url %s %s %s", p.URL, p.Filename, p.MediaType))
		case a2a.PartKindData:
			out = append(out, "data "+string(p.Data))
		}
	}
	return strings.Join(out, ", ")
}

// TestScenarios runs every scenario of the kit (tck/scenarios/*.feature)
// through server.Handler, streaming and blocking: the stream shows each
// event the agent makes, the blocking reply the task they add up to.
func TestScenarios(t *testing.T) {
	const (
		submitted = "task TASK_STATE_SUBMITTED"
		working   = "status TASK_STATE_WORKING"
		completed = "status TASK_STATE_COMPLETED"
	)
	tests := []struct {
		prefix string
		stream []string
		// The blocking reply: the task's state, status message and
		// artifact, or the message that answers instead of a task.
		state    a2a.TaskState
		status   string
		artifact string
		reply    string
	}{
		{
			prefix: conformance.CompleteTask,
			stream: []string{submitted, completed + ` "Hello from TCK"`},
			state:  a2a.TaskStateCompleted, status: `"Hello from TCK"`,
		},
		{
			prefix: conformance.ArtifactText,
			stream: []string{submitted, `artifact "Generated text content" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `"Generated text content"`,
		},
		{
			prefix: conformance.ArtifactFile,
			stream: []string{submitted, `artifact file output.txt text/plain "tck" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `file output.txt text/plain "tck"`,
		},
		{
			prefix: conformance.ArtifactFileURL,
			stream: []string{submitted, `artifact url https://example.com/output.txt output.txt text/plain last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `url https://example.com/output.txt output.txt text/plain`,
		},
		{
			prefix: conformance.ArtifactData,
			stream: []string{submitted, `artifact data {"key":"value","count":42} last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `data {"key":"value","count":42}`,
		},
		{
			prefix: conformance.MessageResponse,
			stream: []string{`message "Direct message response"`},
			reply:  `"Direct message response"`,
		},
		{
			prefix: conformance.InputRequired,
			stream: []string{submitted, "status TASK_STATE_INPUT_REQUIRED"},
			state:  a2a.TaskStateInputRequired,
		},
		{
			prefix: conformance.Stream001,
			stream: []string{submitted, working, `artifact "Stream hello from TCK" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `"Stream hello from TCK"`,
		},
		{
			prefix: conformance.Stream002,
			stream: []string{submitted, completed},
			state:  a2a.TaskStateCompleted,
		},
		{
			prefix: conformance.Stream003,
			stream: []string{submitted, working, `artifact "Stream task lifecycle" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `"Stream task lifecycle"`,
		},
		{
			prefix: conformance.StreamOrdering001,
			stream: []string{submitted, working, `artifact "Ordered output" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `"Ordered output"`,
		},
		{
			prefix: conformance.StreamArtifactText,
			stream: []string{submitted, working, `artifact "Streamed text content" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `"Streamed text content"`,
		},
		{
			prefix: conformance.StreamArtifactFile,
			stream: []string{submitted, working, `artifact file output.txt text/plain "tck" last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `file output.txt text/plain "tck"`,
		},
		{
			prefix: conformance.StreamArtifactChunked,
			stream: []string{submitted, working, `artifact "chunk-1 "`, `artifact "chunk-2" append last`, completed},
			state:  a2a.TaskStateCompleted, artifact: `"chunk-1 ", "chunk-2"`,
		},
		{
			prefix: "tck-no-such-scenario",
			stream: []string{submitted, completed + ` "no scenario has the prefix of messageId tck-no-such-scenario-3f9a12c0"`},
			state:  a2a.TaskStateCompleted, status: `"no scenario has the prefix of messageId tck-no-such-scenario-3f9a12c0"`,
		},
	}
	h := newHandler(t, new(conformance.Executor))
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			var stream []string
			for e, err := range h.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: message(tt.prefix)}) {
				if err != nil {
					t.Fatalf("stream after %q: %v", stream, err)
				}
				stream = append(stream, describe(e.Event))
			}
			if got, want := strings.Join(stream, "\n"), strings.Join(tt.stream, "\n"); got != want {
				t.Errorf("stream:\n%s\nwant:\n%s", got, want)
			}

			ev, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: message(tt.prefix)})
			if err != nil {
				t.Fatal(err)
			}
			if tt.reply != "" {
				m, ok := ev.(*a2a.Message)
				if !ok || m.Role != a2a.RoleAgent || describeParts(m.Parts) != tt.reply {
					t.Fatalf("reply %s, want the agent's message %s", describe(ev), tt.reply)
				}
				return
			}
			task, ok := ev.(*a2a.Task)
			if !ok {
				t.Fatalf("reply %s, want a task", describe(ev))
			}
			var status, artifact string
			if m := task.Status.Message; m != nil {
				status = describeParts(m.Parts)
			}
			switch len(task.Artifacts) {
			case 0:
			case 1:
				artifact = describeParts(task.Artifacts[0].Parts)
				if task.Artifacts[0].ArtifactID == "" {
					t.Error("the artifact has no id")
				}
			default:
				t.Errorf("%d artifacts, want at most one", len(task.Artifacts))
			}
			if task.Status.State != tt.state || status != tt.status || artifact != tt.artifact {
				t.Errorf("task %s, status message %s, artifact %s; want %s, %s, %s",
					task.Status.State, status, artifact, tt.state, tt.status, tt.artifact)
			}
		})
	}
}

// TestRejectTask: the request fails with "rejected" and no task is made.
func TestRejectTask(t *testing.T) {
	h := newHandler(t, new(conformance.Executor))
	ctx := context.Background()
	for _, streaming := range []bool{false, true} {
		t.Run(fmt.Sprint("streaming=", streaming), func(t *testing.T) {
			req := &a2a.SendMessageRequest{Message: message(conformance.RejectTask)}
			var err error
			if streaming {
				for e, serr := range h.SendStreamingMessage(ctx, req) {
					if serr == nil {
						t.Fatalf("stream event %s, want an error", describe(e.Event))
					}
					err = serr
				}
			} else {
				var ev a2a.Event
				if ev, err = h.SendMessage(ctx, req); err == nil {
					t.Fatalf("reply %s, want an error", describe(ev))
				}
			}
			var e *a2a.Error
			if !errors.As(err, &e) || e.Code != a2a.CodeInternal || e.Message != "rejected" {
				t.Fatalf("error %v, want -32603 \"rejected\"", err)
			}
		})
	}
	list, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 0 {
		t.Fatalf("tasks after rejections: %d, %v; want none", len(list.Tasks), err)
	}
}

// TestFollowUp answers a task waiting for input, as the kit's multi-turn
// and subscription tests do: the answer's prefix picks the scenario again.
func TestFollowUp(t *testing.T) {
	tests := []struct {
		prefix, status string
	}{
		{conformance.CompleteTask, `"Hello from TCK"`},
		// Only a new task may be answered by a message alone.
		{conformance.MessageResponse, `"Direct message response"`},
	}
	h := newHandler(t, new(conformance.Executor))
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			ev, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: message(conformance.InputRequired)})
			if err != nil {
				t.Fatal(err)
			}
			task := ev.(*a2a.Task)
			answer := message(tt.prefix)
			answer.TaskID = task.ID
			if ev, err = h.SendMessage(ctx, &a2a.SendMessageRequest{Message: answer}); err != nil {
				t.Fatal(err)
			}
			task, ok := ev.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || task.Status.Message == nil || describeParts(task.Status.Message.Parts) != tt.status {
				t.Fatalf("answered: %s, want the task completed with %s", describe(ev), tt.status)
			}
		})
	}
}

// TestResubscribe: a Resubscribe task stays WORKING until LongRun has
// passed, or until it is canceled.
func TestResubscribe(t *testing.T) {
	ctx := context.Background()
	t.Run("completes", func(t *testing.T) {
		h := newHandler(t, &conformance.Executor{LongRun: 1}) // 1 ns: at once
		var stream []string
		for e, err := range h.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: message(conformance.Resubscribe)}) {
			if err != nil {
				t.Fatal(err)
			}
			stream = append(stream, describe(e.Event))
		}
		want := []string{"task TASK_STATE_SUBMITTED", "status TASK_STATE_WORKING", "status TASK_STATE_COMPLETED"}
		if strings.Join(stream, "\n") != strings.Join(want, "\n") {
			t.Fatalf("stream %q, want %q", stream, want)
		}
	})
	t.Run("stays working until canceled", func(t *testing.T) {
		h := newHandler(t, &conformance.Executor{LongRun: time.Hour})
		ev, err := h.SendMessage(ctx, &a2a.SendMessageRequest{
			Message:       message(conformance.Resubscribe),
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		id := ev.(*a2a.Task).ID
		// The first event (WORKING) is committed before the run waits.
		var sub []string
		for e, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}, "0") {
			if err != nil {
				t.Fatal(err)
			}
			sub = append(sub, describe(e.Event))
			if len(sub) == 2 {
				break
			}
		}
		if len(sub) != 2 || sub[1] != "status TASK_STATE_WORKING" {
			t.Fatalf("events %q, want the task, then WORKING", sub)
		}
		task, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
		if err != nil || task.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel: %v %v, want the task canceled", task, err)
		}
	})
}

// TestCard: the card declares what the kit tests, and the Handler refuses
// a part of a media type the agent does not take (CORE-SEND-003) with
// ContentTypeNotSupportedError.
func TestCard(t *testing.T) {
	card := conformance.Card("http://127.0.0.1:9009/")
	if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications || card.Capabilities.ExtendedAgentCard {
		t.Errorf("capabilities %+v, want streaming and push notifications, no extended card", card.Capabilities)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != "http://127.0.0.1:9009/" || card.SupportedInterfaces[0].ProtocolVersion != a2a.Version {
		t.Errorf("interfaces %+v, want the URL's 1.0 interface first", card.SupportedInterfaces)
	}

	h := newHandler(t, new(conformance.Executor))
	ctx := context.Background()
	tests := []struct {
		part a2a.Part
		code a2a.ErrorCode // 0: accepted
	}{
		{a2a.TextPart("hello"), 0},
		{a2a.RawPart([]byte("hello"), "text/plain", "hello.txt"), 0},
		{a2a.Part{Data: []byte(`{"a":1}`), MediaType: "application/json"}, 0},
		{a2a.RawPart([]byte("tck"), "application/x-unsupported-tck-type", ""), a2a.CodeContentTypeNotSupported},
		{a2a.RawPart([]byte{0x89, 'P', 'N', 'G'}, "image/png", "x.png"), a2a.CodeContentTypeNotSupported},
	}
	for _, tt := range tests {
		t.Run(describeParts([]a2a.Part{tt.part}), func(t *testing.T) {
			m := message(conformance.CompleteTask)
			m.Parts = []a2a.Part{tt.part}
			_, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			var e *a2a.Error
			switch {
			case tt.code == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.code != 0 && (!errors.As(err, &e) || e.Code != tt.code):
				t.Fatalf("error %v, want code %d", err, tt.code)
			}
		})
	}

	// The kit's CORE-CAP-003: no extended card is declared, so asking for
	// one is UnsupportedOperationError.
	if _, err := h.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{}); !errors.Is(err, a2a.ErrUnsupportedOperation) {
		t.Errorf("GetExtendedAgentCard: %v, want UnsupportedOperationError", err)
	}
}
