package server_test

import (
	"context"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// TestExecRequestCaller: the executor is told who sent each message (the
// creator of a new task, whoever resumes an interrupted one, with the
// credential they came with), while the run's own context, which outlives
// the request, carries no caller.
func TestExecRequestCaller(t *testing.T) {
	var mu sync.Mutex
	var callers []*auth.Principal
	h := newHandler(t, &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		mu.Lock()
		callers = append(callers, req.Caller)
		mu.Unlock()
		if auth.FromContext(ctx) != nil {
			yield(nil, a2a.Errorf(a2a.CodeInternal, "the run's context carries a caller"))
			return
		}
		state := a2a.TaskStateInputRequired
		if req.Task != nil {
			state = a2a.TaskStateCompleted
		}
		yield(&a2a.Task{ID: req.TaskID, ContextID: req.ContextID, Status: a2a.TaskStatus{State: state}}, nil)
	}}, nil)

	as := func(p *auth.Principal) context.Context { return auth.NewContext(context.Background(), p) }
	alice := &auth.Principal{Scheme: "oidc", Issuer: "https://idp", Subject: "alice", Token: "first-token"}
	ev, err := h.SendMessage(as(alice), send("hi"))
	task := mustTask(t, ev, err)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task is %s", task.Status.State)
	}
	// Alice again, with a token she got since.
	again := &auth.Principal{Scheme: "oidc", Issuer: "https://idp", Subject: "alice", Token: "second-token"}
	ev, err = h.SendMessage(as(again), followUp(task.ID, "more"))
	if task = mustTask(t, ev, err); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resumed task is %s", task.Status.State)
	}
	ev, err = h.SendMessage(context.Background(), send("anonymous"))
	mustTask(t, ev, err)

	mu.Lock()
	defer mu.Unlock()
	if len(callers) != 3 || callers[0] != alice || callers[1] != again || callers[2] != nil {
		t.Fatalf("the executor was told of callers %v, want alice, alice again, anonymous", callers)
	}
}
