package server

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// asker asks for input on every message.
type asker struct{}

func (asker) Execute(_ context.Context, req *ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateInputRequired, nil), nil)
	}
}

func (asker) Cancel(context.Context, *a2a.Task) error { return nil }

// A long poll that sees no event within its bound answers with the task as
// it is, as the specification allows (a server MAY return earlier).
func TestLongPollBound(t *testing.T) {
	card := &a2a.AgentCard{Name: "t", Capabilities: a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: a2a.GenerationExtension}}}}
	h, err := New(Config{Card: card, Executor: asker{}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			t.Error(err)
		}
	}()
	if h.generationWait != a2a.GenerationWaitMax {
		t.Fatalf("the bound is %v, want a2a.GenerationWaitMax", h.generationWait)
	}
	h.generationWait = time.Millisecond
	ctx := WithCallInfo(context.Background(), CallInfo{ProtocolVersion: a2a.Version, Extensions: []string{a2a.GenerationExtension}})
	ev, err := h.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "x")})
	if err != nil {
		t.Fatal(err)
	}
	task := ev.(*a2a.Task)
	if task.Generation != 2 {
		t.Fatalf("generation %d, want 2 (the task, the question)", task.Generation)
	}
	got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: &task.Generation})
	if err != nil || got.Generation != 2 || got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("long poll past its bound = %+v, %v; want the task as it is", got, err)
	}
}
