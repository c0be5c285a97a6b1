package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// Taking over the checkpoint of another task (run metadata resume_task).

// bookerAgent asks which day (its ask_user tool interrupts), then books.
func bookerAgent(t *testing.T) adk.Agent {
	return agent(t, "Booker", "books", modeltest.FromScript(func(_ context.Context, _ int, in []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if last := in[len(in)-1]; last.Role == schema.Tool {
			return answer("Booked: " + last.Content), nil
		}
		return callTool("ask_user", `{"question":"Which day?"}`), nil
	}), mustTool(t, "ask_user", "Ask the person", ask))
}

// stores are where a service keeps its tasks and checkpoints: in memory,
// checkpoints in files (--data-dir), both on NATS (--state nats).
var stores = []struct {
	name string
	open func(t *testing.T) (taskstore.Store, adk.CheckPointStore)
}{
	{"memory", func(*testing.T) (taskstore.Store, adk.CheckPointStore) {
		return new(taskstore.Memory), &adk.MemoryCheckPointStore{}
	}},
	{"file", func(t *testing.T) (taskstore.Store, adk.CheckPointStore) {
		f, err := checkpoint.NewFile(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return new(taskstore.Memory), f
	}},
	{"nats", func(t *testing.T) (taskstore.Store, adk.CheckPointStore) {
		ctx := context.Background()
		e, err := embedded.Start(embedded.Config{Dir: t.TempDir(), Port: -1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		nc, js, err := natsstore.Connect(ctx, e.URL(), natsstore.ConnConfig{Name: t.Name()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		log, err := natsstore.NewLog(ctx, js, natsstore.LogConfig{Namespace: "Booker"})
		if err != nil {
			t.Fatal(err)
		}
		tasks, err := natsstore.NewTaskStore(ctx, js, natsstore.TaskStoreConfig{Log: log})
		if err != nil {
			t.Fatal(err)
		}
		checkpoints, err := natsstore.NewCheckPointStore(ctx, js, natsstore.CheckPointStoreConfig{Namespace: "Booker"})
		if err != nil {
			t.Fatal(err)
		}
		return tasks, checkpoints
	}},
}

// adoption is a Booker served with stores the test can see, and a task of
// it waiting for its answer.
type adoption struct {
	c           *client.Client
	tasks       taskstore.Store
	checkpoints adk.CheckPointStore
	task        *a2a.Task // INPUT_REQUIRED
	point       string    // its interrupted point
}

func newAdoption(t *testing.T, tasks taskstore.Store, checkpoints adk.CheckPointStore) *adoption {
	t.Helper()
	a := &adoption{tasks: tasks, checkpoints: checkpoints}
	a.c = newClient(t, serveAgent(t, bookerAgent(t), func(ec *bridge.ExecutorConfig) {
		ec.Tasks, ec.CheckPointStore = a.tasks, checkpoints
	}))
	ev, err := a.c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "book")})
	if err != nil {
		t.Fatal(err)
	}
	a.task = ev.(*a2a.Task)
	if a.task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task %+v", a.task.Status)
	}
	points, _ := a.task.Status.Message.Metadata[bridge.KeyPoints].([]any)
	if len(points) != 1 {
		t.Fatalf("points %#v", a.task.Status.Message.Metadata)
	}
	a.point, _ = points[0].(map[string]any)["id"].(string)
	return a
}

// lose makes the server forget the task, as a restart with tasks in
// memory or an expiry does; its checkpoint stays.
func (a *adoption) lose(t *testing.T) {
	t.Helper()
	if err := a.tasks.Delete(context.Background(), a.task.ID); err != nil {
		t.Fatal(err)
	}
}

// adopt sends a new task in contextID that resumes the waiting task's run
// with day as the answer.
func (a *adoption) adopt(ctx context.Context, contextID, day string) (*a2a.Task, error) {
	msg := a2a.NewTextMessage(a2a.RoleUser, day)
	msg.ContextID = contextID
	ev, err := a.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg, Metadata: map[string]any{
		bridge.KeyRun: map[string]any{"resume_task": a.task.ID, "resume": map[string]any{a.point: day}},
	}})
	if err != nil {
		return nil, err
	}
	return ev.(*a2a.Task), nil
}

// answer sends day on the waiting task itself.
func (a *adoption) answer(ctx context.Context, day string) (*a2a.Task, error) {
	msg := a2a.NewTextMessage(a2a.RoleUser, day)
	msg.TaskID, msg.ContextID = a.task.ID, a.task.ContextID
	ev, err := a.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		return nil, err
	}
	return ev.(*a2a.Task), nil
}

func (a *adoption) checkpointKept(t *testing.T) {
	t.Helper()
	if _, ok, err := a.checkpoints.Get(context.Background(), a.task.ID); err != nil || !ok {
		t.Fatalf("the checkpoint of task %s: kept %v, %v", a.task.ID, ok, err)
	}
}

func booked(t *testing.T, task *a2a.Task, day string) {
	t.Helper()
	want := "Booked: Which day? " + day
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 || task.Artifacts[len(task.Artifacts)-1].Text() != want {
		t.Fatalf("task %s %s %q, want COMPLETED with %q", task.ID, task.Status.State, task.Status.Message.Text(), want)
	}
}

// A task that still exists is never adopted, whoever asks: it is resumed
// by a message on it, and its owner's answer still goes through.
func TestAdoptionRefusedWhileTheTaskExists(t *testing.T) {
	for _, st := range stores {
		for _, tc := range []struct {
			name    string
			context func(*adoption) string
		}{
			{"a new context", func(*adoption) string { return "" }},
			{"another context", func(*adoption) string { return "someone-else" }},
			{"the task's context", func(a *adoption) string { return a.task.ContextID }},
		} {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				tasks, checkpoints := st.open(t)
				a := newAdoption(t, tasks, checkpoints)
				stolen, err := a.adopt(ctx, tc.context(a), "Evil")
				if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "still exists") {
					t.Fatalf("adopting task %s while it exists: %+v, %v", a.task.ID, stolen, err)
				}
				a.checkpointKept(t)
				task, err := a.answer(ctx, "Monday")
				if err != nil {
					t.Fatal(err)
				}
				booked(t, task, "Monday")
			})
		}
	}
}

// A lost task is adopted only in its own context, once.
func TestAdoptionOfALostTask(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			tasks, checkpoints := st.open(t)
			a := newAdoption(t, tasks, checkpoints)
			a.lose(t)
			for _, other := range []string{"", "someone-else"} {
				stolen, err := a.adopt(ctx, other, "Evil")
				if !errors.Is(err, a2a.ErrTaskNotFound) {
					t.Fatalf("adopting lost task %s from context %q: %+v, %v", a.task.ID, other, stolen, err)
				}
				a.checkpointKept(t)
			}
			task, err := a.adopt(ctx, a.task.ContextID, "Friday")
			if err != nil {
				t.Fatal(err)
			}
			booked(t, task, "Friday")
			if task.ContextID != a.task.ContextID || task.ID == a.task.ID {
				t.Fatalf("the adopting task %s in context %s", task.ID, task.ContextID)
			}
			if again, err := a.adopt(ctx, a.task.ContextID, "Saturday"); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatalf("a second adoption of task %s: %+v, %v", a.task.ID, again, err)
			}
		})
	}
}

// An executor that cannot see the server's tasks adopts none.
func TestAdoptionNeedsTheTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a := newAdoption(t, new(taskstore.Memory), &adk.MemoryCheckPointStore{})
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: bookerAgent(t), CheckPointStore: a.checkpoints})
	if err != nil {
		t.Fatal(err)
	}
	req := &server.ExecRequest{TaskID: "new", ContextID: a.task.ContextID, Message: a2a.NewTextMessage(a2a.RoleUser, "Friday"),
		Metadata: map[string]any{bridge.KeyRun: map[string]any{"resume_task": a.task.ID}}}
	refused := false
	for ev, err := range exec.Execute(ctx, req) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Fatalf("adoption without the tasks: %v, %v", ev, err)
		}
		refused = true
	}
	if !refused {
		t.Fatal("adoption without the tasks: no answer")
	}
	a.checkpointKept(t)
}

// gatedStore holds the first n reads of one checkpoint, once read, until
// all n are done: n adoptions all see the checkpoint.
type gatedStore struct {
	adk.CheckPointStore // and an adk.CheckPointLocker
	id                  string
	n                   int
	mu                  sync.Mutex
	arrived             int
	all                 chan struct{}
	ctx                 context.Context
}

func (g *gatedStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	data, ok, err := g.CheckPointStore.Get(ctx, id)
	g.mu.Lock()
	gated := id == g.id && g.arrived < g.n
	if gated {
		g.arrived++
		if g.arrived == g.n {
			close(g.all)
		}
	}
	g.mu.Unlock()
	if gated {
		select {
		case <-g.all:
		case <-g.ctx.Done():
			return nil, false, fmt.Errorf("the %d adoptions never read checkpoint %s together: %w", g.n, id, g.ctx.Err())
		}
	}
	return data, ok, err
}

func (g *gatedStore) Lock(ctx context.Context, id string) (func(), error) {
	return g.CheckPointStore.(adk.CheckPointLocker).Lock(ctx, id)
}

// Adoptions of one lost task that race: exactly one wins, the others fail
// cleanly.
func TestConcurrentAdoptions(t *testing.T) {
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) { concurrentAdoptions(t, st.open) })
	}
}

func concurrentAdoptions(t *testing.T, open func(t *testing.T) (taskstore.Store, adk.CheckPointStore)) {
	const n = 6
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tasks, checkpoints := open(t)
	store := &gatedStore{CheckPointStore: checkpoints, n: n, all: make(chan struct{}), ctx: ctx}
	a := newAdoption(t, tasks, store)
	a.lose(t)
	store.mu.Lock()
	store.id = a.task.ID
	store.mu.Unlock()

	type result struct {
		task *a2a.Task
		err  error
	}
	results := make(chan result, n)
	for i := range n {
		go func() {
			task, err := a.adopt(ctx, a.task.ContextID, fmt.Sprint("day ", i))
			results <- result{task, err}
		}()
	}
	won := 0
	for range n {
		r := <-results
		switch {
		case r.err == nil && r.task.Status.State == a2a.TaskStateCompleted:
			won++
		case errors.Is(r.err, a2a.ErrTaskNotFound):
		default:
			t.Errorf("an adoption: %+v, %v", r.task, r.err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d adoptions of task %s won", won, n, a.task.ID)
	}
}
