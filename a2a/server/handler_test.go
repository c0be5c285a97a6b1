package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// script is an executor made of functions, for tests.
type script struct {
	run    func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool)
	cancel func(ctx context.Context, task *a2a.Task) error
}

func (s *script) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) { s.run(ctx, req, yield) }
}

func (s *script) Cancel(ctx context.Context, task *a2a.Task) error {
	if s.cancel != nil {
		return s.cancel(ctx, task)
	}
	return nil
}

func card() *a2a.AgentCard {
	c := echo.Card("http://test/")
	return c
}

func newHandler(t *testing.T, exec server.AgentExecutor, tweak func(*server.Config)) *server.Handler {
	t.Helper()
	cfg := server.Config{Card: card(), Executor: exec}
	if strings.HasPrefix(t.Name(), groupedPrefix) {
		// Run again by TestGroupedCommits: with groups of events
		// committed together, every test must still hold.
		cfg.CommitDelay = 5 * time.Millisecond
	}
	if tweak != nil {
		tweak(&cfg)
	}
	h, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return h
}

func echoHandler(t *testing.T) *server.Handler {
	return newHandler(t, &echo.Executor{SlowChunks: 5, SlowInterval: 10 * time.Millisecond}, nil)
}

func send(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)}
}

func followUp(taskID, text string) *a2a.SendMessageRequest {
	m := a2a.NewTextMessage(a2a.RoleUser, text)
	m.TaskID = taskID
	return &a2a.SendMessageRequest{Message: m}
}

func mustTask(t *testing.T, ev a2a.Event, err error) *a2a.Task {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("got %T, want a task", ev)
	}
	return task
}

func sendTask(t *testing.T, h *server.Handler, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	ev, err := h.SendMessage(context.Background(), req)
	return mustTask(t, ev, err)
}

func wantCode(t *testing.T, err error, code a2a.ErrorCode) {
	t.Helper()
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error = %v, want code %d (%s)", err, code, code)
	}
	if e.Message == "" {
		t.Fatal("error without a message")
	}
}

// collect reads a stream to its end.
func collect(t *testing.T, seq iter.Seq2[eventlog.Entry, error]) ([]eventlog.Entry, error) {
	t.Helper()
	var out []eventlog.Entry
	for e, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func state(ev a2a.Event) a2a.TaskState {
	s, _ := a2a.StateOf(ev)
	return s
}

func TestSendBlocking(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	tests := []struct {
		text  string
		state a2a.TaskState
	}{
		{"hello", a2a.TaskStateCompleted},
		{"fail: boom", a2a.TaskStateFailed},
		{"input: more please", a2a.TaskStateInputRequired},
	}
	for _, tt := range tests {
		task := sendTask(t, h, send(tt.text))
		if task.Status.State != tt.state {
			t.Errorf("%q: state %s, want %s", tt.text, task.Status.State, tt.state)
		}
		if task.ID == "" || task.ContextID == "" || task.Status.Timestamp.IsZero() {
			t.Errorf("%q: ids or timestamp missing: %+v", tt.text, task)
		}
		if len(task.History) != 1 || task.History[0].TaskID != task.ID || task.History[0].ContextID != task.ContextID {
			t.Errorf("%q: history %+v", tt.text, task.History)
		}
	}
	task := sendTask(t, h, send("hello"))
	if len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "hello" {
		t.Fatalf("artifacts %+v", task.Artifacts)
	}
	got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask = %+v, %v", got, err)
	}
}

func TestDirectMessageReply(t *testing.T) {
	h := newHandler(t, &script{run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		yield(a2a.NewTextMessage(a2a.RoleAgent, "hi back"), nil)
	}}, nil)
	ev, err := h.SendMessage(context.Background(), send("hi"))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := ev.(*a2a.Message)
	if !ok || m.Text() != "hi back" || m.Role != a2a.RoleAgent || m.ContextID == "" || m.TaskID != "" {
		t.Fatalf("reply = %#v", ev)
	}
	list, err := h.ListTasks(context.Background(), &a2a.ListTasksRequest{})
	if err != nil || list.TotalSize != 0 {
		t.Fatalf("a direct reply created a task: %+v %v", list, err)
	}
	entries, err := collect(t, h.SendStreamingMessage(context.Background(), send("hi")))
	if err != nil || len(entries) != 1 || entries[0].Seq != 0 {
		t.Fatalf("stream of a direct reply = %+v, %v", entries, err)
	}
}

func TestReturnImmediately(t *testing.T) {
	release := make(chan struct{})
	h := newHandler(t, blocker(release), nil)
	req := send("x")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := sendTask(t, h, req)
	if task.Status.State.Terminal() {
		t.Fatalf("returned a finished task: %s", task.Status.State)
	}
	close(release)
	entries, err := collect(t, h.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}, "0"))
	if err != nil || state(entries[len(entries)-1].Event) != a2a.TaskStateCompleted {
		t.Fatalf("task did not complete: %+v %v", entries, err)
	}
}

func TestHistoryLength(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	first := sendTask(t, h, send("input: a"))
	task := sendTask(t, h, followUp(first.ID, "b"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("follow-up left the task %s", task.Status.State)
	}
	var texts []string
	for _, m := range task.History {
		texts = append(texts, string(m.Role)+":"+m.Text())
	}
	want := []string{"ROLE_USER:input: a", "ROLE_AGENT:send another message on this task to complete it", "ROLE_USER:b"}
	if !slices.Equal(texts, want) {
		t.Fatalf("history = %q, want %q", texts, want)
	}
	for n, want := range map[int]int{0: 0, 1: 1, 2: 2, 10: 3} {
		got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &n})
		if err != nil || len(got.History) != want {
			t.Fatalf("historyLength %d: %d messages, err %v", n, len(got.History), err)
		}
		if n == 0 {
			b, _ := json.Marshal(got)
			if strings.Contains(string(b), `"history"`) {
				t.Fatalf("historyLength 0 kept the history key: %s", b)
			}
		}
	}
	neg := -1
	_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: &neg})
	wantCode(t, err, a2a.CodeInvalidParams)
	full, _ := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if len(full.History) != 3 {
		t.Fatalf("views must not cut the stored task: %d", len(full.History))
	}
}

func TestFollowUpErrors(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	done := sendTask(t, h, send("hello"))
	_, err := h.SendMessage(ctx, followUp(done.ID, "again"))
	wantCode(t, err, a2a.CodeUnsupportedOperation)
	_, err = h.SendMessage(ctx, followUp("no-such-task", "x"))
	wantCode(t, err, a2a.CodeTaskNotFound)
	open := sendTask(t, h, send("input: x"))
	req := followUp(open.ID, "y")
	req.Message.ContextID = "another-context"
	_, err = h.SendMessage(ctx, req)
	wantCode(t, err, a2a.CodeInvalidParams)
}

func TestValidation(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	neg := -2
	tests := map[string]struct {
		req  *a2a.SendMessageRequest
		code a2a.ErrorCode
	}{
		"no message":      {&a2a.SendMessageRequest{}, a2a.CodeInvalidParams},
		"no message id":   {&a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("x")}}}, a2a.CodeInvalidParams},
		"no role":         {&a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Parts: []a2a.Part{a2a.TextPart("x")}}}, a2a.CodeInvalidParams},
		"no parts":        {&a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser}}, a2a.CodeInvalidParams},
		"negative hist":   {&a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "x"), Configuration: &a2a.SendMessageConfiguration{HistoryLength: &neg}}, a2a.CodeInvalidParams},
		"image input":     {&a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.RawPart([]byte{1}, "image/png", ""))}, a2a.CodeContentTypeNotSupported},
		"image output":    {&a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "x"), Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"image/png"}}}, a2a.CodeContentTypeNotSupported},
		"private webhook": {&a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "x"), Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "http://10.0.0.1/hook"}}}, a2a.CodeInvalidParams},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := h.SendMessage(ctx, tt.req)
			wantCode(t, err, tt.code)
		})
	}
	for _, modes := range [][]string{{"text/*"}, {"*/*"}, {"text/plain; charset=utf-8", "image/png"}} {
		req := send("x")
		req.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: modes}
		if _, err := h.SendMessage(ctx, req); err != nil {
			t.Errorf("accepted output modes %q refused: %v", modes, err)
		}
	}
}

func TestStreamSequence(t *testing.T) {
	h := echoHandler(t)
	entries, err := collect(t, h.SendStreamingMessage(context.Background(), send("hello world")))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 13 {
		t.Fatalf("%d events, want 13 (task, working, 10 chunks, completed)", len(entries))
	}
	var text strings.Builder
	for i, e := range entries {
		if e.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if a, ok := e.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			text.WriteString(a.Artifact.Text())
		}
	}
	if _, ok := entries[0].Event.(*a2a.Task); !ok {
		t.Fatalf("first event is %T, want the task", entries[0].Event)
	}
	if state(entries[1].Event) != a2a.TaskStateWorking || state(entries[12].Event) != a2a.TaskStateCompleted {
		t.Fatal("want WORKING first and COMPLETED last")
	}
	if text.String() != "hello world" {
		t.Fatalf("chunks = %q", text.String())
	}
	taskID, _ := entries[0].Event.TaskIDs()
	task, _ := h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: taskID})
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 10 || task.Artifacts[0].Text() != "hello world" {
		t.Fatalf("stored artifact %+v", task.Artifacts)
	}
}

// gated is an executor that emits a numbered chunk each time the test
// sends on step, and completes when step is closed.
func gated(step chan struct{}) *script {
	return &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
			return
		}
		for i := 0; ; i++ {
			select {
			case _, ok := <-step:
				if !ok {
					yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
					return
				}
			case <-ctx.Done():
				return
			}
			art := a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(fmt.Sprint(i))}}
			if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, i > 0, false), nil) {
				return
			}
		}
	}}
}

func TestSubscribeAndResume(t *testing.T) {
	step := make(chan struct{})
	h := newHandler(t, gated(step), nil)
	ctx := context.Background()
	req := send("x")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := sendTask(t, h, req)

	// A live subscriber starts with the task, then follows.
	type result struct {
		entries []eventlog.Entry
		err     error
	}
	live := make(chan result, 1)
	subscribed := make(chan struct{})
	go func() {
		var r result
		defer func() {
			if len(r.entries) == 0 {
				close(subscribed)
			}
			live <- r
		}()
		for e, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "") {
			if err != nil {
				r.err = err
				return
			}
			if r.entries = append(r.entries, e); len(r.entries) == 1 {
				close(subscribed)
			}
		}
	}()
	<-subscribed // the task must still be running when it subscribes
	for range 4 {
		step <- struct{}{}
	}
	close(step)
	got := <-live
	if got.err != nil {
		t.Fatal(got.err)
	}
	first, ok := got.entries[0].Event.(*a2a.Task)
	if !ok {
		t.Fatalf("first event %T, want the task", got.entries[0].Event)
	}
	for i := 1; i < len(got.entries); i++ {
		if got.entries[i].Seq != got.entries[i-1].Seq+1 {
			t.Fatalf("gap in live stream: %d then %d", got.entries[i-1].Seq, got.entries[i].Seq)
		}
	}
	if first.ID != task.ID || state(got.entries[len(got.entries)-1].Event) != a2a.TaskStateCompleted {
		t.Fatal("live stream did not end with completion")
	}

	// The whole log: task, working, 4 chunks, completed.
	all, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "0"))
	if err != nil || len(all) != 7 {
		t.Fatalf("replay from 0: %d events, %v", len(all), err)
	}
	for after := range uint64(7) {
		rest, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, fmt.Sprint(after)))
		if err != nil {
			t.Fatal(err)
		}
		if len(rest) != 7-int(after) || (len(rest) > 0 && rest[0].Seq != after+1) {
			t.Fatalf("resume after %d: %d events starting %v", after, len(rest), rest)
		}
		for i, e := range rest {
			// A finished task's log is held packed: each replay
			// decodes its events anew.
			if !reflect.DeepEqual(e.Event, all[int(after)+i].Event) {
				t.Fatalf("resume after %d: event %d differs", after, i)
			}
		}
	}
	_, err = collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, ""))
	wantCode(t, err, a2a.CodeUnsupportedOperation)
	// The boundaries: after the last event there is nothing more to send;
	// one past it is not an event this server sent.
	if rest, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "7")); err != nil || len(rest) != 0 {
		t.Fatalf("resume after the last event: %d events, %v", len(rest), err)
	}
	for _, beyond := range []string{"8", "99"} {
		_, err = collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, beyond))
		wantCode(t, err, a2a.CodeInvalidParams)
	}
	_, err = collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "abc"))
	wantCode(t, err, a2a.CodeInvalidParams)
	_, err = collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "nope"}, ""))
	wantCode(t, err, a2a.CodeTaskNotFound)
}

// A subscription to a task waiting for input follows the run the answer
// starts, to its end (the A2A TCK's STREAM-SUB-002).
func TestSubscribeInterrupted(t *testing.T) {
	h := echoHandler(t)
	// Bounds the wait should the stream never close.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	task := sendTask(t, h, send("input: x"))
	var states []a2a.TaskState
	for e, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "") {
		if err != nil {
			t.Fatalf("after %v: %v", states, err)
		}
		if s, ok := a2a.StateOf(e.Event); ok {
			states = append(states, s)
		}
		if len(states) == 1 {
			if got := sendTask(t, h, followUp(task.ID, "the answer")); got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("answer: task %s, want completed", got.Status.State)
			}
		}
	}
	want := []a2a.TaskState{a2a.TaskStateInputRequired, a2a.TaskStateWorking, a2a.TaskStateCompleted}
	if !slices.Equal(states, want) {
		t.Fatalf("subscription to an interrupted task saw %v, want %v", states, want)
	}
}

func TestConsumerLeavingDoesNotStopTheAgent(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	var taskID string
	for e, err := range h.SendStreamingMessage(ctx, send("slow: abcde")) {
		if err != nil {
			t.Fatal(err)
		}
		taskID, _ = e.Event.TaskIDs()
		break
	}
	entries, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}, "0"))
	if err != nil || state(entries[len(entries)-1].Event) != a2a.TaskStateCompleted {
		t.Fatalf("task did not complete after its stream was dropped: %v", err)
	}
}

func TestCancel(t *testing.T) {
	ctx := context.Background()
	t.Run("running", func(t *testing.T) {
		agentSaw := make(chan error, 1)
		h := newHandler(t, &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil)
			<-ctx.Done()
			agentSaw <- ctx.Err()
		}}, nil)
		req := send("x")
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		task := sendTask(t, h, req)
		got, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel = %+v, %v", got, err)
		}
		if err := <-agentSaw; !errors.Is(err, context.Canceled) {
			t.Fatalf("agent context: %v", err)
		}
		again, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || again.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("second cancel = %+v, %v; want the canceled task", again, err)
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		h := echoHandler(t)
		task := sendTask(t, h, send("input: x"))
		got, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("cancel = %+v, %v", got, err)
		}
		_, err = h.SendMessage(ctx, followUp(task.ID, "late"))
		wantCode(t, err, a2a.CodeUnsupportedOperation)
	})
	t.Run("terminal", func(t *testing.T) {
		h := echoHandler(t)
		task := sendTask(t, h, send("x"))
		_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		wantCode(t, err, a2a.CodeTaskNotCancelable)
		_, err = h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "nope"})
		wantCode(t, err, a2a.CodeTaskNotFound)
	})
	t.Run("agent refuses", func(t *testing.T) {
		step := make(chan struct{})
		exec := gated(step)
		exec.cancel = func(context.Context, *a2a.Task) error {
			return a2a.Errorf(a2a.CodeTaskNotCancelable, "this step cannot be interrupted")
		}
		h := newHandler(t, exec, nil)
		req := send("x")
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		task := sendTask(t, h, req)
		_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		wantCode(t, err, a2a.CodeTaskNotCancelable)
		close(step)
		entries, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "0"))
		if err != nil || state(entries[len(entries)-1].Event) != a2a.TaskStateCompleted {
			t.Fatalf("refused cancel still stopped the task: %v", err)
		}
	})
	t.Run("agent ignores its context", func(t *testing.T) {
		stop := make(chan struct{})
		h := newHandler(t, &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil)
			<-stop // deaf to ctx
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
		}}, func(c *server.Config) { c.CancelTimeout = 20 * time.Millisecond })
		req := send("x")
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		task := sendTask(t, h, req)
		got, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("forced cancel = %+v, %v", got, err)
		}
		close(stop) // its late completion must not change the task
		entries, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "0"))
		if err != nil || state(entries[len(entries)-1].Event) != a2a.TaskStateCanceled {
			t.Fatalf("log after forced cancel: %v", err)
		}
	})
}

func TestAgentMisbehaviour(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		run   func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool)
		code  a2a.ErrorCode // the send fails with it, or
		state a2a.TaskState // the task ends in it
		text  string        // the status message contains it
	}{
		{name: "first event for another task", run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			yield(a2a.NewStatusUpdate("other", req.ContextID, a2a.TaskStateWorking, nil), nil)
		}, code: a2a.CodeInvalidAgentResponse},
		{name: "no events", run: func(context.Context, *server.ExecRequest, func(a2a.Event, error) bool) {}, code: a2a.CodeInvalidAgentResponse},
		{name: "typed error first", run: func(_ context.Context, _ *server.ExecRequest, yield func(a2a.Event, error) bool) {
			yield(nil, a2a.Errorf(a2a.CodeContentTypeNotSupported, "no audio"))
		}, code: a2a.CodeContentTypeNotSupported},
		{name: "error mid-run", run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			if yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
				yield(nil, errors.New("model unavailable"))
			}
		}, state: a2a.TaskStateFailed, text: "model unavailable"},
		{name: "illegal transition", run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			if yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
				yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateSubmitted, nil), nil)
			}
		}, state: a2a.TaskStateFailed, text: "invalid event"},
		{name: "ends early", run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil)
		}, state: a2a.TaskStateFailed, text: "ended before"},
		{name: "panic", run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil)
			panic("kaboom")
		}, state: a2a.TaskStateFailed, text: "kaboom"},
		{name: "message mid-run", run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			if yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
				yield(a2a.NewTextMessage(a2a.RoleAgent, "late"), nil)
			}
		}, state: a2a.TaskStateFailed, text: "message event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, &script{run: tt.run}, nil)
			ev, err := h.SendMessage(ctx, send("x"))
			if tt.code != 0 {
				wantCode(t, err, tt.code)
				return
			}
			task := mustTask(t, ev, err)
			if task.Status.State != tt.state || task.Status.Message == nil || !strings.Contains(task.Status.Message.Text(), tt.text) {
				t.Fatalf("task ended %s with %+v, want %s mentioning %q", task.Status.State, task.Status.Message, tt.state, tt.text)
			}
		})
	}
}

// TestRunsNeverInterleave sends several follow-ups to one task at once; each
// run logs its chunks with no other run's events in between.
func TestRunsNeverInterleave(t *testing.T) {
	h := newHandler(t, &script{run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		label := req.Message.Text()
		for i := range 5 {
			art := a2a.Artifact{ArtifactID: label, Parts: []a2a.Part{a2a.TextPart(fmt.Sprint(i))}}
			if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, i > 0, i == 4), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateInputRequired, nil), nil)
	}}, nil)
	ctx := context.Background()
	task := sendTask(t, h, send("r0"))
	const runs = 6
	var wg sync.WaitGroup
	for i := 1; i <= runs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := collect(t, h.SendStreamingMessage(ctx, followUp(task.ID, fmt.Sprintf("r%d", i)))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Every run logs 7 events: the task, 5 chunks, the interrupt. A replay
	// stops at each interrupt, so read the log run by run.
	var entries []eventlog.Entry
	for after := uint64(0); after < 7*(runs+1); {
		run, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, fmt.Sprint(after)))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, run...)
		after = run[len(run)-1].Seq
	}
	var order []string
	for _, e := range entries {
		if a, ok := e.Event.(*a2a.TaskArtifactUpdateEvent); ok {
			order = append(order, a.Artifact.ArtifactID)
		}
	}
	if len(order) != 5*(runs+1) {
		t.Fatalf("%d chunks, want %d", len(order), 5*(runs+1))
	}
	for i := 0; i < len(order); i += 5 {
		for j := i; j < i+5; j++ {
			if order[j] != order[i] {
				t.Fatalf("runs interleaved: %v", order)
			}
		}
	}
}

func TestListTasks(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	var ids []string
	for i := range 7 {
		req := send(fmt.Sprint(i))
		if i%2 == 0 {
			req.Message.ContextID = "even"
		}
		ids = append(ids, sendTask(t, h, req).ID)
	}
	open := sendTask(t, h, send("input: x"))
	all, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil || all.TotalSize != 8 || len(all.Tasks) != 8 || all.PageSize != 50 || all.NextPageToken != "" {
		t.Fatalf("list all = %+v, %v", all, err)
	}
	if all.Tasks[0].ID != open.ID {
		t.Fatal("newest task is not first")
	}
	for _, id := range ids {
		if !slices.ContainsFunc(all.Tasks, func(t *a2a.Task) bool { return t.ID == id }) {
			t.Fatalf("task %s is not listed", id)
		}
	}
	for _, task := range all.Tasks {
		if task.Artifacts != nil {
			t.Fatal("artifacts listed without includeArtifacts")
		}
	}
	even, _ := h.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "even", IncludeArtifacts: true})
	if even.TotalSize != 4 || even.Tasks[0].Artifacts == nil {
		t.Fatalf("context filter = %+v", even)
	}
	waiting, _ := h.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired})
	if waiting.TotalSize != 1 || waiting.Tasks[0].ID != open.ID {
		t.Fatalf("status filter = %+v", waiting)
	}
	size := 3
	var paged []string
	token := ""
	for range 10 {
		page, err := h.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: &size, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range page.Tasks {
			paged = append(paged, task.ID)
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if len(paged) != 8 {
		t.Fatalf("paged through %d tasks", len(paged))
	}
	for _, bad := range []int{101, -1} {
		_, err := h.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: &bad})
		wantCode(t, err, a2a.CodeInvalidParams)
	}
	// A pageSize of 0 is the default, as a2a-go's gRPC client sends it.
	zero := 0
	if l, err := h.ListTasks(ctx, &a2a.ListTasksRequest{PageSize: &zero}); err != nil || l.PageSize != 50 || len(l.Tasks) != 8 {
		t.Fatalf("list with pageSize 0 = %+v, %v; want the default page", l, err)
	}
	_, err = h.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: "garbage!"})
	wantCode(t, err, a2a.CodeInvalidParams)
}

func TestCapabilities(t *testing.T) {
	ctx := context.Background()
	h := newHandler(t, new(echo.Executor), func(c *server.Config) {
		c.Card = card()
		c.Card.Capabilities = a2a.AgentCapabilities{}
	})
	_, err := collect(t, h.SendStreamingMessage(ctx, send("x")))
	wantCode(t, err, a2a.CodeUnsupportedOperation)
	_, err = collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "x"}, ""))
	wantCode(t, err, a2a.CodeUnsupportedOperation)
	task := sendTask(t, h, send("x"))
	_, err = h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "https://example.com"})
	wantCode(t, err, a2a.CodePushNotificationNotSupported)
	_, err = h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "x"})
	wantCode(t, err, a2a.CodePushNotificationNotSupported)
	_, err = h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	wantCode(t, err, a2a.CodePushNotificationNotSupported)
	err = h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "x"})
	wantCode(t, err, a2a.CodePushNotificationNotSupported)
	req := send("x")
	req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://example.com"}}
	_, err = h.SendMessage(ctx, req)
	wantCode(t, err, a2a.CodePushNotificationNotSupported)
	_, err = h.GetExtendedAgentCard(ctx, nil)
	wantCode(t, err, a2a.CodeUnsupportedOperation)

	declared := newHandler(t, new(echo.Executor), func(c *server.Config) { c.Card.Capabilities.ExtendedAgentCard = true })
	_, err = declared.GetExtendedAgentCard(ctx, nil)
	wantCode(t, err, a2a.CodeExtendedAgentCardNotConfigured)
	ext := card()
	ext.Description = "extended"
	configured := newHandler(t, new(echo.Executor), func(c *server.Config) {
		c.Card.Capabilities.ExtendedAgentCard = true
		c.ExtendedCard = ext
	})
	if got, err := configured.GetExtendedAgentCard(ctx, nil); err != nil || got.Description != "extended" {
		t.Fatalf("extended card = %+v, %v", got, err)
	}
}

func TestRequiredExtensions(t *testing.T) {
	const uri = "https://example.com/ext/v1"
	h := newHandler(t, new(echo.Executor), func(c *server.Config) {
		c.Card.Capabilities.Extensions = []a2a.AgentExtension{{URI: uri, Required: true}}
	})
	_, err := h.SendMessage(context.Background(), send("x"))
	wantCode(t, err, a2a.CodeExtensionSupportRequired)
	ctx := server.WithCallInfo(context.Background(), server.CallInfo{ProtocolVersion: "1.0", Extensions: []string{uri}})
	if _, err := h.SendMessage(ctx, send("x")); err != nil {
		t.Fatal(err)
	}
}

func TestPushNotifications(t *testing.T) {
	type delivery struct {
		auth, token, ctype string
		body               a2a.StreamResponse
	}
	got := make(chan delivery, 100)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d delivery
		d.auth, d.token, d.ctype = r.Header.Get("Authorization"), r.Header.Get("X-A2A-Notification-Token"), r.Header.Get("Content-Type")
		if err := json.NewDecoder(r.Body).Decode(&d.body); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		got <- d
	}))
	defer hook.Close()
	h := newHandler(t, &echo.Executor{SlowChunks: 3, SlowInterval: time.Millisecond}, func(c *server.Config) {
		c.PushSender = &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, BaseBackoff: time.Millisecond}
	})
	ctx := context.Background()
	req := send("slow: abc")
	req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
		URL: hook.URL, Token: "tok", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	}}
	task := sendTask(t, h, req)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s", task.Status.State)
	}
	// task, working, 3 chunks, completed: delivered in order.
	var states []a2a.TaskState
	for range 6 {
		d := <-got
		if d.auth != "Bearer secret" || d.token != "tok" || d.ctype != "application/a2a+json" {
			t.Fatalf("delivery headers: %+v", d)
		}
		ev, err := d.body.Event()
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := a2a.StateOf(ev); ok {
			states = append(states, s)
		}
	}
	if want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted}; !slices.Equal(states, want) {
		t.Fatalf("delivered states %v, want %v", states, want)
	}

	list, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(list.Configs) != 1 || list.Configs[0].ID == "" || list.Configs[0].TaskID != task.ID {
		t.Fatalf("list = %+v, %v", list, err)
	}
	id := list.Configs[0].ID
	c, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id})
	if err != nil || c.URL != hook.URL {
		t.Fatalf("get = %+v, %v", c, err)
	}
	for range 2 { // idempotent
		if err := h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: id})
	wantCode(t, err, a2a.CodeTaskNotFound)
	_, err = h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: "nope", URL: hook.URL})
	wantCode(t, err, a2a.CodeTaskNotFound)
	_, err = h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: "http://169.254.169.254/"})
	wantCode(t, err, a2a.CodeInvalidParams)

	// A config added to a running task gets the events that follow.
	open := sendTask(t, h, send("input: x"))
	created, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: open.ID, URL: hook.URL})
	if err != nil || created.ID == "" {
		t.Fatalf("create = %+v, %v", created, err)
	}
	if task := sendTask(t, h, followUp(open.ID, "done")); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("follow-up state %s", task.Status.State)
	}
	var last a2a.TaskState
	for last != a2a.TaskStateCompleted {
		ev, _ := (<-got).body.Event()
		if s, ok := a2a.StateOf(ev); ok {
			last = s
		}
	}
}

func TestEviction(t *testing.T) {
	h := newHandler(t, new(echo.Executor), func(c *server.Config) { c.Retention = time.Millisecond })
	ctx := context.Background()
	old := sendTask(t, h, send("x"))
	open := sendTask(t, h, send("input: x"))
	time.Sleep(5 * time.Millisecond)
	sendTask(t, h, send("y")) // new tasks evict expired ones
	_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: old.ID})
	wantCode(t, err, a2a.CodeTaskNotFound)
	if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: open.ID}); err != nil {
		t.Fatalf("an unfinished task was evicted: %v", err)
	}
}

func TestCloseStopsRuns(t *testing.T) {
	h, err := server.New(server.Config{Card: card(), Executor: &echo.Executor{SlowChunks: 1000, SlowInterval: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	req := send("slow: forever")
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := sendTask(t, h, req)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("after Close: %+v, %v", got, err)
	}
	_, err = h.SendMessage(context.Background(), send("x"))
	wantCode(t, err, a2a.CodeInternal)
}

// TestConcurrentSendsCancelsAndSubscribers races follow-ups, subscribers
// and cancellations on one task: under -race nothing may race, every call
// ends, and the task's log stays one gapless sequence ending CANCELED.
func TestConcurrentSendsCancelsAndSubscribers(t *testing.T) {
	h := newHandler(t, &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		for i := range 3 {
			art := a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(fmt.Sprint(i))}}
			if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, i > 0, false), nil) || ctx.Err() != nil {
				return
			}
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateInputRequired, nil), nil)
	}}, func(c *server.Config) { c.CancelTimeout = time.Second })
	ctx := context.Background()
	task := sendTask(t, h, send("start"))
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch i % 4 {
			case 0, 1: // follow-ups: succeed, or find the task canceled
				_, err := collect(t, h.SendStreamingMessage(ctx, followUp(task.ID, "more")))
				if err != nil && !errors.Is(err, a2a.ErrUnsupportedOperation) {
					t.Errorf("follow-up: %v", err)
				}
			case 2: // subscribers: a snapshot, or the task already canceled
				_, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, ""))
				if err != nil && !errors.Is(err, a2a.ErrUnsupportedOperation) {
					t.Errorf("subscribe: %v", err)
				}
			case 3:
				if _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
					t.Errorf("cancel: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	var all []eventlog.Entry
	for after := uint64(0); ; {
		part, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, fmt.Sprint(after)))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, part...)
		last := part[len(part)-1]
		if state(last.Event) == a2a.TaskStateCanceled {
			break
		}
		after = last.Seq
	}
	for i, e := range all {
		if e.Seq != uint64(i+1) {
			t.Fatalf("log has a gap: event %d has seq %d", i, e.Seq)
		}
	}
	got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("final task %+v, %v", got, err)
	}
}
