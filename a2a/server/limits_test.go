package server_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/services/echo"
)

// eventually polls cond until it holds, failing the test after a bound.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not %s after 10 s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// wantBusy checks a retryable refusal: -32603 with retry guidance.
func wantBusy(t *testing.T, err error) {
	t.Helper()
	wantCode(t, err, a2a.CodeInternal)
	if e := a2a.AsError(err); e.RetryAfter <= 0 {
		t.Fatalf("refusal %v carries no retry guidance", err)
	}
}

// Every identifier a request carries is bounded where it enters, on every
// method, so no store ever sees an overlong key.
func TestIDLimits(t *testing.T) {
	h := echoHandler(t)
	ctx := context.Background()
	task := sendTask(t, h, send("input: x"))
	long := strings.Repeat("x", server.DefaultMaxIDBytes+1)
	ok := strings.Repeat("x", server.DefaultMaxIDBytes)
	msg := func(mod func(m *a2a.Message)) *a2a.SendMessageRequest {
		r := send("hi")
		mod(r.Message)
		return r
	}
	sendErr := func(r *a2a.SendMessageRequest) error { _, err := h.SendMessage(ctx, r); return err }
	streamErr := func(r *a2a.SendMessageRequest) error {
		_, err := collect(t, h.SendStreamingMessage(ctx, r))
		return err
	}
	tests := []struct {
		name  string
		call  func() error
		field string
	}{
		{"GetTask id", func() error { _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: long}); return err }, "id"},
		{"GetTask tenant", func() error {
			_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, Tenant: long})
			return err
		}, "tenant"},
		{"CancelTask id", func() error { _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: long}); return err }, "id"},
		{"SubscribeToTask id", func() error {
			_, err := collect(t, h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: long}, ""))
			return err
		}, "id"},
		{"ListTasks contextId", func() error {
			_, err := h.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: long})
			return err
		}, "contextId"},
		{"ListTasks pageToken", func() error {
			_, err := h.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: strings.Repeat(ok, 5)})
			return err
		}, "pageToken"},
		{"messageId", func() error { return sendErr(msg(func(m *a2a.Message) { m.MessageID = long })) }, "messageId"},
		{"contextId", func() error { return sendErr(msg(func(m *a2a.Message) { m.ContextID = long })) }, "contextId"},
		{"taskId", func() error { return sendErr(msg(func(m *a2a.Message) { m.TaskID = long })) }, "taskId"},
		{"referenceTaskIds", func() error {
			return sendErr(msg(func(m *a2a.Message) { m.ReferenceTaskIDs = []string{"a", long} }))
		}, "referenceTaskIds[1]"},
		{"streamed taskId", func() error { return streamErr(msg(func(m *a2a.Message) { m.TaskID = long })) }, "taskId"},
		{"invalid UTF-8", func() error { return sendErr(msg(func(m *a2a.Message) { m.ContextID = "a\xffb" })) }, "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			wantCode(t, err, a2a.CodeInvalidParams)
			if !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("error %q does not name %s", err, tt.field)
			}
		})
	}
	// At the limit is fine.
	if _, err := h.SendMessage(ctx, msg(func(m *a2a.Message) { m.ContextID, m.MessageID = ok, ok })); err != nil {
		t.Fatalf("ids at the limit: %v", err)
	}
}

// artifacts yields one artifact of n bytes per step, then completes.
func artifacts(steps, n int) *script {
	return &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		for i := range steps {
			art := a2a.Artifact{ArtifactID: fmt.Sprint(i), Parts: []a2a.Part{a2a.TextPart(strings.Repeat("z", n))}}
			if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, false, false), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
	}}
}

func TestTaskBytes(t *testing.T) {
	limit := func(c *server.Config) { c.Limits.MaxTaskBytes = 4096 }
	ctx := context.Background()

	// A message too large for any task is refused before anything starts.
	h := newHandler(t, new(echo.Executor), limit)
	_, err := h.SendMessage(ctx, send(strings.Repeat("m", 5000)))
	wantCode(t, err, a2a.CodeInvalidParams)
	if page, _ := h.ListTasks(ctx, &a2a.ListTasksRequest{}); page.TotalSize != 0 {
		t.Fatalf("a refused message left %d tasks", page.TotalSize)
	}
	// So is one that would take its task past the limit.
	task := sendTask(t, h, send("input: "+strings.Repeat("m", 2500)))
	_, err = h.SendMessage(ctx, followUp(task.ID, strings.Repeat("n", 2500)))
	wantCode(t, err, a2a.CodeInvalidParams)
	if got, _ := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the refused follow-up changed the task: %s", got.Status.State)
	}

	// An agent whose output outgrows the limit fails its task, saying why.
	h = newHandler(t, artifacts(10, 1000), limit)
	task = sendTask(t, h, send("go"))
	if task.Status.State != a2a.TaskStateFailed || !strings.Contains(task.Status.Message.Text(), "4096 bytes") {
		t.Fatalf("task %s: %v, want FAILED naming the limit", task.Status.State, task.Status.Message)
	}
	if n := len(task.Artifacts); n == 0 || n >= 10 {
		t.Fatalf("the task kept %d artifacts", n)
	}
}

// A commit the stores refuse fails the task without showing the stores'
// words to whoever reads the task.
type leakyStore struct {
	taskstore.Memory
	updates atomic.Int32
}

func (s *leakyStore) Update(ctx context.Context, e taskstore.Entry) (uint64, error) {
	if s.updates.Add(1) == 2 {
		return 0, errors.New("kv: bucket A2AMESH_TASKS on nats://10.1.2.3: secret detail")
	}
	return s.Memory.Update(ctx, e)
}

func TestStoreErrorsStayInTheLog(t *testing.T) {
	store := new(leakyStore)
	h := newHandler(t, artifacts(3, 10), func(c *server.Config) { c.Tasks = store })
	ev, err := h.SendMessage(context.Background(), send("go"))
	task := mustTask(t, ev, err)
	text := task.Status.Message.Text()
	if task.Status.State != a2a.TaskStateFailed || strings.Contains(text, "secret") || strings.Contains(text, "nats") {
		t.Fatalf("task %s: %q", task.Status.State, text)
	}
}

func TestMaxLiveTasks(t *testing.T) {
	h := newHandler(t, new(echo.Executor), func(c *server.Config) { c.Limits.MaxLiveTasks = 3 })
	ctx := context.Background()
	var waiting []*a2a.Task
	for range 3 {
		waiting = append(waiting, sendTask(t, h, send("input: x")))
	}
	_, err := h.SendMessage(ctx, send("one more"))
	wantBusy(t, err)
	// A task that exists goes on; once it finishes there is room again.
	if done := sendTask(t, h, followUp(waiting[0].ID, "y")); done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("follow-up: %s", done.Status.State)
	}
	sendTask(t, h, send("now there is room"))
	if _, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{ID: waiting[1].ID}); err != nil {
		t.Fatal(err)
	}
	// waiting[2] and two new ones fill it again.
	sendTask(t, h, send("input: and again"))
	sendTask(t, h, send("input: and again"))
	_, err = h.SendMessage(ctx, send("full again"))
	wantBusy(t, err)
}

// A task left waiting for input is canceled after InputTimeout, through
// the agent's Cancel hook, and says why; one answered in time is not.
func TestInputTimeout(t *testing.T) {
	var hooked sync.Map
	exec := &script{
		run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
			for ev, err := range new(echo.Executor).Execute(ctx, req) {
				if !yield(ev, err) {
					return
				}
			}
		},
		cancel: func(_ context.Context, task *a2a.Task) error { hooked.Store(task.ID, true); return nil },
	}
	h := newHandler(t, exec, func(c *server.Config) { c.Limits.InputTimeout = 50 * time.Millisecond })
	ctx := context.Background()
	left := sendTask(t, h, send("input: nobody answers"))
	answered := sendTask(t, h, send("input: answered at once"))
	if got := sendTask(t, h, followUp(answered.ID, "here")); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answered task: %s", got.Status.State)
	}
	var got *a2a.Task
	eventually(t, "canceled", func() bool {
		var err error
		got, err = h.GetTask(ctx, &a2a.GetTaskRequest{ID: left.ID})
		return err == nil && got.Status.State == a2a.TaskStateCanceled
	})
	if !strings.Contains(got.Status.Message.Text(), "waited for input") {
		t.Fatalf("status message %q does not say why", got.Status.Message.Text())
	}
	if _, ok := hooked.Load(left.ID); !ok {
		t.Fatal("the agent's Cancel hook was not called for the expired task")
	}
	if _, ok := hooked.Load(answered.ID); ok {
		t.Fatal("the answered task was canceled")
	}
	if got, _ := h.GetTask(ctx, &a2a.GetTaskRequest{ID: answered.ID}); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("answered task became %s", got.Status.State)
	}
}

// blocker holds each run until released (or canceled).
func blocker(release chan struct{}) *script {
	return &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
			return
		}
		select {
		case <-release:
		case <-ctx.Done():
			return
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
	}}
}

func TestMaxRuns(t *testing.T) {
	ctx := context.Background()
	async := func() *a2a.SendMessageRequest {
		r := send("x")
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		return r
	}

	// Beyond MaxRuns a message waits; beyond MaxQueuedRuns waiting, it is
	// refused at once.
	release := make(chan struct{})
	h := newHandler(t, blocker(release), func(c *server.Config) {
		c.Limits.MaxRuns, c.Limits.MaxQueuedRuns, c.Limits.QueueTimeout = 2, 1, time.Minute
	})
	running := []*a2a.Task{sendTask(t, h, async()), sendTask(t, h, async())}
	results := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := h.SendMessage(ctx, async())
			results <- err
		}()
	}
	select {
	case err := <-results:
		wantBusy(t, err)
		if !strings.Contains(err.Error(), "waiting") {
			t.Fatalf("refusal %q does not say messages are waiting", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("with the queue full, neither message was refused")
	}
	// Runs that end make room for the one waiting.
	close(release)
	select {
	case err := <-results:
		if err != nil {
			t.Fatalf("the waiting message: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting message never got a run")
	}
	for _, task := range running {
		eventually(t, "completed", func() bool {
			got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			return err == nil && got.Status.State == a2a.TaskStateCompleted
		})
	}

	// A message that waits QueueTimeout without a run is refused.
	h = newHandler(t, blocker(make(chan struct{})), func(c *server.Config) {
		c.Limits.MaxRuns, c.Limits.QueueTimeout = 1, 20*time.Millisecond
	})
	sendTask(t, h, async())
	_, err := h.SendMessage(ctx, async())
	wantBusy(t, err)
	if !strings.Contains(err.Error(), "none ended") {
		t.Fatalf("refusal %q does not say it waited", err)
	}
}

// Finished tasks are kept up to a count and a size, oldest evicted first,
// and by age without any new task arriving.
func TestFinishedTaskBounds(t *testing.T) {
	ctx := context.Background()
	kept := func(h *server.Handler, tasks []*a2a.Task) (n int, newest bool) {
		for _, task := range tasks {
			if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err == nil {
				n++
			}
		}
		_, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: tasks[len(tasks)-1].ID})
		return n, err == nil
	}

	h := newHandler(t, new(echo.Executor), func(c *server.Config) { c.Limits.MaxFinishedTasks = 5 })
	var tasks []*a2a.Task
	for range 50 {
		tasks = append(tasks, sendTask(t, h, send("x")))
	}
	eventually(t, "down to 5 finished tasks", func() bool { n, _ := kept(h, tasks); return n == 5 })
	if n, newest := kept(h, tasks); !newest {
		t.Fatalf("%d kept, but not the newest", n)
	}

	h = newHandler(t, artifacts(1, 10_000), func(c *server.Config) { c.Limits.MaxFinishedBytes = 50_000 })
	tasks = tasks[:0]
	for range 20 {
		tasks = append(tasks, sendTask(t, h, send("x")))
	}
	eventually(t, "under 50,000 bytes", func() bool { n, _ := kept(h, tasks); return n >= 3 && n < 5 })
	if _, newest := kept(h, tasks); !newest {
		t.Fatal("the newest task was evicted")
	}

	h = newHandler(t, new(echo.Executor), func(c *server.Config) { c.Retention = 20 * time.Millisecond })
	tasks = []*a2a.Task{sendTask(t, h, send("x"))}
	eventually(t, "evicted with no new task", func() bool { n, _ := kept(h, tasks); return n == 0 })
}

// A list carries a little history per task unless asked, and a page
// stops where its bytes would pass the limit; paging still returns every
// task once.
func TestListTasksBounds(t *testing.T) {
	chatty := &script{run: func(ctx context.Context, req *server.ExecRequest, yield func(a2a.Event, error) bool) {
		task := &a2a.Task{ID: req.TaskID, ContextID: req.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		for i := range 30 {
			task.History = append(task.History, *a2a.NewTextMessage(a2a.RoleAgent, fmt.Sprint("turn ", i)))
		}
		if !yield(task, nil) {
			return
		}
		art := a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart(strings.Repeat("z", 3000))}}
		if yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, false, true), nil) {
			yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
		}
	}}
	h := newHandler(t, chatty, func(c *server.Config) { c.Limits.MaxListBytes = 8000 })
	ctx := context.Background()
	for range 7 {
		sendTask(t, h, send("x"))
	}
	page, err := h.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range page.Tasks {
		if len(task.History) != server.ListHistoryLength {
			t.Fatalf("a listed task has %d history messages, want %d", len(task.History), server.ListHistoryLength)
		}
	}
	all := 0
	req := &a2a.ListTasksRequest{IncludeArtifacts: true}
	seen := map[string]bool{}
	for pages := 1; ; pages++ {
		page, err := h.ListTasks(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) == 0 || len(page.Tasks) > 2 {
			t.Fatalf("page %d holds %d tasks of over 3000 bytes each; want 1 or 2 under an 8000-byte limit", pages, len(page.Tasks))
		}
		for _, task := range page.Tasks {
			if seen[task.ID] {
				t.Fatalf("task %s listed twice", task.ID)
			}
			seen[task.ID] = true
			all++
		}
		if page.NextPageToken == "" || pages > 10 {
			break
		}
		req.PageToken = page.NextPageToken
	}
	if all != 7 {
		t.Fatalf("the pages held %d tasks, want 7", all)
	}
}
