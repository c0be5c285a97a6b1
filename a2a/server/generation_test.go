package server_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// turns is an agent that answers each message with an artifact holding its
// text and asks for the next (INPUT_REQUIRED), until "done" completes the
// task. A new task's events are so: 1 the task (SUBMITTED, made by the
// server), 2 the artifact, 3 the question; each follow-up adds three: the
// task at work again, the artifact, the question.
func turns() *script {
	return &script{run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		text := req.Message.Text()
		art := a2a.Artifact{ArtifactID: "echo", Parts: []a2a.Part{a2a.TextPart(text)}}
		if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, false, true), nil) {
			return
		}
		state := a2a.TaskStateInputRequired
		if text == "done" {
			state = a2a.TaskStateCompleted
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, state, nil), nil)
	}}
}

// genCard is the test card, declaring the generation extension.
func genCard() *a2a.AgentCard {
	c := card()
	c.Capabilities.Extensions = []a2a.AgentExtension{{URI: a2a.GenerationExtension}}
	return c
}

func genHandler(t *testing.T, exec server.AgentExecutor, tweak func(*server.Config)) *server.Handler {
	return newHandler(t, exec, func(c *server.Config) {
		c.Card = genCard()
		if tweak != nil {
			tweak(c)
		}
	})
}

// active is a context whose call activates the generation extension.
func active() context.Context {
	return server.WithCallInfo(context.Background(), server.CallInfo{ProtocolVersion: a2a.Version, Extensions: []string{"urn:other", a2a.GenerationExtension}})
}

func gen(n a2a.Generation) *a2a.Generation { return &n }

func sendCtx(t *testing.T, h *server.Handler, ctx context.Context, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	ev, err := h.SendMessage(ctx, req)
	return mustTask(t, ev, err)
}

func conditional(taskID, text string, match *a2a.Generation) *a2a.SendMessageRequest {
	req := followUp(taskID, text)
	req.Configuration = &a2a.SendMessageConfiguration{IfGenerationMatch: match}
	return req
}

// generationOf returns an event's generation (0 for a message).
func generationOf(ev a2a.Event) a2a.Generation {
	switch e := ev.(type) {
	case *a2a.Task:
		return e.Generation
	case *a2a.TaskStatusUpdateEvent:
		return e.Generation
	case *a2a.TaskArtifactUpdateEvent:
		return e.Generation
	}
	return 0
}

// The extension is active only for a 1.0 call naming it, to a Handler
// whose card declares it; otherwise no answer carries a generation and
// ifGenerationMatch and currentGeneration are not honoured.
func TestGenerationsOnlyWhenActive(t *testing.T) {
	call := func(version string, exts ...string) context.Context {
		return server.WithCallInfo(context.Background(), server.CallInfo{ProtocolVersion: version, Extensions: exts})
	}
	tests := []struct {
		name     string
		declared bool
		ctx      context.Context
		active   bool
	}{
		{"declared and named", true, call(a2a.Version, a2a.GenerationExtension), true},
		{"declared, not named", true, call(a2a.Version, "urn:other"), false},
		{"declared, no call info", true, context.Background(), false},
		{"named, not declared", false, call(a2a.Version, a2a.GenerationExtension), false},
		{"named in a 0.3 call", true, call(a2a.Version03, a2a.GenerationExtension), false},
		{"another version of it named", true, call(a2a.Version, strings.TrimSuffix(a2a.GenerationExtension, "v1")+"v2"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, turns(), func(c *server.Config) {
				if tt.declared {
					c.Card = genCard()
				}
			})
			ctx := tt.ctx
			got := h.ActiveExtensions(ctx)
			if on := len(got) == 1 && got[0] == a2a.GenerationExtension; on != tt.active || len(got) > 1 {
				t.Errorf("ActiveExtensions = %v, want the extension: %v", got, tt.active)
			}
			want := func(what string, ev a2a.Event, n a2a.Generation) {
				t.Helper()
				if !tt.active {
					n = 0
				}
				if g := generationOf(ev); g != n {
					t.Errorf("%s: generation %d, want %d", what, g, n)
				}
			}
			task := sendCtx(t, h, ctx, send("one"))
			want("SendMessage", task, 3)
			got2, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: gen(1)})
			if err != nil {
				t.Fatal(err)
			}
			want("GetTask", got2, 3)
			// A stale condition, refused only when honoured.
			_, err = h.SendMessage(ctx, conditional(task.ID, "two", gen(1)))
			if tt.active {
				wantCode(t, err, a2a.CodeTaskGenerationMismatch)
				_, err = h.SendMessage(ctx, conditional(task.ID, "two", gen(3)))
			}
			if err != nil {
				t.Fatal(err)
			}
			entries, err := collect(t, h.SendStreamingMessage(ctx, followUp(task.ID, "three")))
			if err != nil || len(entries) != 3 {
				t.Fatalf("stream = %v, %v", entries, err)
			}
			for _, e := range entries {
				want(fmt.Sprintf("streamed event %d", e.Seq), e.Event, a2a.Generation(e.Seq))
			}
			canceled, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			want("CancelTask", canceled, 10)
			entries, err = collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, "9"))
			if err != nil || len(entries) != 1 {
				t.Fatalf("resumed stream = %v, %v", entries, err)
			}
			for _, e := range entries {
				want(fmt.Sprintf("resumed event %d", e.Seq), e.Event, a2a.Generation(e.Seq))
			}
		})
	}
}

// A generation is the number of the task's last event: 1 for the event
// that made it, one more per event whatever its kind; every answer, and
// each event of every stream, says the same.
func TestGenerationNumbersEvents(t *testing.T) {
	h := genHandler(t, turns(), nil)
	ctx := active()
	entries, err := collect(t, h.SendStreamingMessage(ctx, send("one")))
	if err != nil || len(entries) != 3 {
		t.Fatalf("stream = %v, %v", entries, err)
	}
	for i, e := range entries {
		if g := generationOf(e.Event); e.Seq != uint64(i+1) || g != a2a.Generation(e.Seq) {
			t.Errorf("event %d: seq %d, generation %d", i, e.Seq, g)
		}
	}
	id, _ := entries[0].Event.TaskIDs()
	steps := []struct {
		name string
		do   func() (a2a.Event, error)
		want a2a.Generation
	}{
		{"GetTask", func() (a2a.Event, error) { return h.GetTask(ctx, &a2a.GetTaskRequest{ID: id}) }, 3},
		{"GetTask, history cut", func() (a2a.Event, error) {
			return h.GetTask(ctx, &a2a.GetTaskRequest{ID: id, HistoryLength: new(0)})
		}, 3},
		{"blocking follow-up", func() (a2a.Event, error) { return h.SendMessage(ctx, conditional(id, "two", gen(3))) }, 6},
		{"returnImmediately follow-up: its first event", func() (a2a.Event, error) {
			req := conditional(id, "three", gen(6))
			req.Configuration.ReturnImmediately = true
			return h.SendMessage(ctx, req)
		}, 7},
	}
	for _, s := range steps {
		ev, err := s.do()
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if g := generationOf(ev); g != s.want {
			t.Errorf("%s: generation %d, want %d", s.name, g, s.want)
		}
	}
	// The snapshot a subscription starts with carries the generation of
	// the last event it reflects, which is its SSE id too.
	// (The task waits for input: the subscription would go on with the
	// next message's run; the test reads its first item only.)
	for e, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}, "") {
		if err != nil {
			t.Fatal(err)
		}
		if g := generationOf(e.Event); e.Seq < 7 || g != a2a.Generation(e.Seq) {
			t.Errorf("snapshot: seq %d, generation %d", e.Seq, g)
		}
		break
	}
	// The stored task is left alone: a call without the extension sees
	// none.
	plain, err := h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id})
	if err != nil || plain.Generation != 0 {
		t.Fatalf("GetTask without the extension: generation %v, %v", plain.Generation, err)
	}
}

// A generation an agent sets on its events is not the server's: dropped,
// on the events logged and the task stored.
func TestAgentGenerationsAreDropped(t *testing.T) {
	h := genHandler(t, &script{run: func(_ context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		first := &a2a.Task{ID: req.TaskID, ContextID: req.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}, Generation: 99}
		if !yield(first, nil) {
			return
		}
		art := a2a.NewArtifactUpdate(req.TaskID, req.ContextID, a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}}, false, true)
		art.Generation = 42
		if !yield(art, nil) {
			return
		}
		done := a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil)
		done.Generation = 7
		yield(done, nil)
	}}, nil)
	for name, ctx := range map[string]context.Context{"without the extension": context.Background(), "with it": active()} {
		entries, err := collect(t, h.SendStreamingMessage(ctx, send("x")))
		if err != nil || len(entries) != 3 {
			t.Fatalf("%s: stream = %v, %v", name, entries, err)
		}
		for _, e := range entries {
			want := a2a.Generation(e.Seq)
			if ctx == context.Background() {
				want = 0
			}
			if g := generationOf(e.Event); g != want {
				t.Errorf("%s: event %d has generation %d, want %d", name, e.Seq, g, want)
			}
		}
		id, _ := entries[0].Event.TaskIDs()
		task, err := h.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id})
		if err != nil || task.Generation != 0 {
			t.Errorf("%s: stored task generation %v, %v", name, task.Generation, err)
		}
	}
}

// ifGenerationMatch continues a task only at that generation; the refusal
// says what was expected and what the task is at.
func TestIfGenerationMatch(t *testing.T) {
	h := genHandler(t, turns(), nil)
	ctx := active()
	tests := []struct {
		name    string
		match   *a2a.Generation
		want    a2a.ErrorCode // 0: accepted
		current string
	}{
		{"unconditional", nil, 0, ""},
		{"the current generation", gen(6), 0, ""},
		{"an older one", gen(3), a2a.CodeTaskGenerationMismatch, "9"},
		{"one the task has not reached", gen(100), a2a.CodeTaskGenerationMismatch, "9"},
		{"zero", gen(0), a2a.CodeTaskGenerationMismatch, "9"},
		{"negative", gen(-9), a2a.CodeTaskGenerationMismatch, "9"},
	}
	task := sendCtx(t, h, ctx, send("one"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := h.SendMessage(ctx, conditional(task.ID, "more", tt.match))
			if tt.want == 0 {
				if got := mustTask(t, ev, err); got.Status.State != a2a.TaskStateInputRequired {
					t.Fatalf("state %s", got.Status.State)
				}
				return
			}
			wantCode(t, err, tt.want)
			var e *a2a.Error
			errors.As(err, &e)
			wantMeta := map[string]string{"taskId": task.ID, "expectedGeneration": fmt.Sprint(*tt.match), "currentGeneration": tt.current}
			for k, v := range wantMeta {
				if e.Metadata[k] != v {
					t.Errorf("metadata %v, want %s=%s", e.Metadata, k, v)
				}
			}
		})
	}
	// A message that starts a task has nothing to match.
	req := send("new")
	req.Configuration = &a2a.SendMessageConfiguration{IfGenerationMatch: gen(5)}
	if fresh := sendCtx(t, h, ctx, req); fresh.Generation != 3 {
		t.Errorf("new task with ifGenerationMatch: generation %d", fresh.Generation)
	}
	// A stream refuses a mismatch as its only item.
	entries, err := collect(t, h.SendStreamingMessage(ctx, conditional(task.ID, "x", gen(1))))
	if len(entries) != 0 {
		t.Fatalf("stream of a refused message: %v", entries)
	}
	wantCode(t, err, a2a.CodeTaskGenerationMismatch)
	// A finished task refuses messages as before, whatever the generation.
	done := sendCtx(t, h, ctx, conditional(task.ID, "done", gen(9)))
	_, err = h.SendMessage(ctx, conditional(done.ID, "again", gen(done.Generation)))
	wantCode(t, err, a2a.CodeUnsupportedOperation)
}

// Two Handlers over the same stores are two replicas. A message whose
// generation matched on replica A, but whose commit another message beat
// on replica B, is refused as a mismatch, not folded into B's task.
func TestIfGenerationMatchLosesARace(t *testing.T) {
	tasks, events := new(taskstore.Memory), new(eventlog.Memory)
	b := genHandler(t, turns(), func(c *server.Config) { c.Tasks, c.Events = tasks, events })
	racing := &raceLog{Log: events}
	a := genHandler(t, turns(), func(c *server.Config) { c.Tasks, c.Events = tasks, racing })
	ctx := active()
	task := sendCtx(t, a, ctx, send("one"))
	racing.before = func(seq uint64) {
		if seq == 4 { // A is about to log its follow-up: B gets there first
			if _, err := b.SendMessage(ctx, followUp(task.ID, "from B")); err != nil {
				t.Error(err)
			}
		}
	}
	_, err := a.SendMessage(ctx, conditional(task.ID, "from A", gen(3)))
	wantCode(t, err, a2a.CodeTaskGenerationMismatch)
	var e *a2a.Error
	errors.As(err, &e)
	if e.Metadata["currentGeneration"] != "6" || e.Metadata["expectedGeneration"] != "3" {
		t.Errorf("metadata %v, want current 6, expected 3", e.Metadata)
	}
	racing.before = nil
	got, err := a.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Generation != 6 || got.History[len(got.History)-1].Text() != "from B" {
		t.Fatalf("task after the race: generation %v, %v", got.Generation, err)
	}
	// Unconditional, the same loss is folded into the winner's task.
	racing.before = func(seq uint64) {
		if seq == 7 {
			racing.before = nil
			if _, err := b.SendMessage(ctx, followUp(task.ID, "B again")); err != nil {
				t.Error(err)
			}
		}
	}
	if got := sendCtx(t, a, ctx, followUp(task.ID, "A again")); got.Generation != 12 {
		t.Fatalf("unconditional follow-up after a lost race: generation %d, want 12", got.Generation)
	}
}

// raceLog calls before(seq) ahead of each append, for a test to slip
// another replica's write in.
type raceLog struct {
	eventlog.Log
	before func(seq uint64)
}

func (l *raceLog) Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	if l.before != nil {
		l.before(seq)
	}
	return l.Log.Append(ctx, taskID, seq, events...)
}

// watchLog tells each Subscribe on subscribed, for a test to act once a
// long poll waits.
type watchLog struct {
	eventlog.Log
	subscribed chan uint64
}

func (l *watchLog) Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[eventlog.Entry, error] {
	select {
	case l.subscribed <- after:
	default:
	}
	return l.Log.Subscribe(ctx, taskID, after)
}

// drain forgets a subscription told before the long poll a test waits for.
func (l *watchLog) drain() {
	select {
	case <-l.subscribed:
	default:
	}
}

// waitSubscribed waits, within a bound, for a long poll to subscribe.
func waitSubscribed(t *testing.T, ch <-chan uint64) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not subscribe to the task's log")
	}
}

type polled struct {
	task *a2a.Task
	err  error
}

func longPoll(h *server.Handler, ctx context.Context, req *a2a.GetTaskRequest) <-chan polled {
	ch := make(chan polled, 1)
	go func() {
		t, err := h.GetTask(ctx, req)
		ch <- polled{t, err}
	}()
	return ch
}

func result(t *testing.T, ch <-chan polled) polled {
	t.Helper()
	select {
	case p := <-ch:
		return p
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not answer")
	}
	return polled{}
}

// GetTask with currentGeneration answers at once for a task past it or
// finished, and otherwise once an event takes the task past it: an event
// committed by another replica (another Handler over the same stores)
// too.
func TestLongPoll(t *testing.T) {
	tasks, events := new(taskstore.Memory), new(eventlog.Memory)
	watched := &watchLog{Log: events, subscribed: make(chan uint64, 1)}
	a := genHandler(t, turns(), func(c *server.Config) { c.Tasks, c.Events = tasks, events })
	b := genHandler(t, turns(), func(c *server.Config) { c.Tasks, c.Events = tasks, watched })
	ctx := active()
	task := sendCtx(t, a, ctx, send("one"))

	for _, g := range []a2a.Generation{-1, 0, 2} {
		got, err := b.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: gen(g)})
		if err != nil || got.Generation != 3 {
			t.Fatalf("currentGeneration %d: generation %v, %v; want 3 at once", g, got, err)
		}
	}
	tests := []struct {
		name  string
		since a2a.Generation
		send  string
		want  a2a.Generation
	}{
		{"at the current generation", 3, "two", 6},
		// Not past 7: the follow-up's first event (7) does not end it.
		{"past the current generation", 7, "three", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			watched.drain()
			ch := longPoll(b, ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: gen(tt.since), HistoryLength: new(1)})
			waitSubscribed(t, watched.subscribed)
			sendCtx(t, a, ctx, followUp(task.ID, tt.send))
			p := result(t, ch)
			if p.err != nil || p.task.Generation <= tt.since || p.task.Generation > tt.want || len(p.task.History) != 1 {
				t.Fatalf("long poll answered %v, %v; want a generation past %d, at most %d", p.task, p.err, tt.since, tt.want)
			}
		})
	}

	// A finished task is answered at once: its generation never rises.
	done := sendCtx(t, a, ctx, followUp(task.ID, "done"))
	got, err := b.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: gen(done.Generation + 5)})
	if err != nil || got.Generation != done.Generation {
		t.Fatalf("finished task: %v, %v", got, err)
	}
	// Without the extension, currentGeneration is not honoured.
	other := sendCtx(t, a, ctx, send("other"))
	got, err = b.GetTask(context.Background(), &a2a.GetTaskRequest{ID: other.ID, CurrentGeneration: gen(100)})
	if err != nil || got.Generation != 0 {
		t.Fatalf("without the extension: %v, %v", got, err)
	}
}

// A long poll ends with its request (the client has gone), and answers
// the task as it is when the server ends its streams (shutting down).
func TestLongPollEnds(t *testing.T) {
	events := &watchLog{Log: new(eventlog.Memory), subscribed: make(chan uint64, 1)}
	h := genHandler(t, turns(), func(c *server.Config) { c.Events = events })
	task := sendCtx(t, h, active(), send("one"))

	events.drain()
	ctx, cancel := context.WithCancel(active())
	ch := longPoll(h, ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: gen(3)})
	waitSubscribed(t, events.subscribed)
	cancel()
	if p := result(t, ch); !errors.Is(p.err, context.Canceled) {
		t.Fatalf("long poll after its request ended: %v, %v", p.task, p.err)
	}

	events.drain()
	ch = longPoll(h, active(), &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: gen(3)})
	waitSubscribed(t, events.subscribed)
	h.EndStreams()
	if p := result(t, ch); p.err != nil || p.task.Generation != 3 {
		t.Fatalf("long poll when the streams end: %v, %v; want the task at 3", p.task, p.err)
	}
}
