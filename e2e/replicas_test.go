package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
)

// gatedWeather is a weather endpoint that answers once open is closed;
// asked is closed at the first question.
func gatedWeather(t *testing.T) (url string, asked, open chan struct{}) {
	t.Helper()
	asked, open = make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(asked) })
		select {
		case <-open:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("sunny"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, asked, open
}

// Two replicas of the weather agent keep their state on NATS
// (--state nats): a client that started a task on replica A and lost its
// stream resumes it on replica B from the last event it saw and receives
// the rest in order; GetTask and ListTasks agree on both replicas.
func TestReplicasShareTasks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := newMesh(t)
	endpoint, asked, open := gatedWeather(t)
	_, a := m.service("weather", "--state", "nats", "--weather-endpoint", endpoint)
	_, b := m.service("weather", "--state", "nats", "--weather-endpoint", endpoint)
	ca, cb := newClient(t, a), newClient(t, b)

	// On A: read the stream's first event, wait until the tool is asked,
	// then drop the stream.
	sctx, drop := context.WithCancel(ctx)
	var taskID, lastID string
	for ev, err := range ca.SendStreamingMessage(sctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "What's the weather in Oslo?")}) {
		if err != nil {
			t.Fatalf("stream on A: %v", err)
		}
		taskID, _ = ev.Event.TaskIDs()
		lastID = ev.ID
		<-asked
		break
	}
	drop()
	if taskID == "" || lastID == "" {
		t.Fatal("no event from A before the drop")
	}

	// B knows the task while A runs it.
	got, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatalf("GetTask on B: %v", err)
	}
	if s := got.Status.State; s.Terminal() {
		t.Fatalf("the task is already %s", s)
	}

	// On B: continue after the last event seen on A, then let the tool
	// answer.
	go func() { time.Sleep(100 * time.Millisecond); close(open) }()
	last, _ := strconv.Atoi(lastID)
	var final a2a.TaskState
	for ev, err := range cb.Resubscribe(ctx, taskID, lastID) {
		if err != nil {
			t.Fatalf("resubscribed on B: %v", err)
		}
		n, _ := strconv.Atoi(ev.ID)
		if n != last+1 {
			t.Fatalf("event %s after %d", ev.ID, last)
		}
		last = n
		if s, ok := a2a.StateOf(ev.Event); ok {
			final = s
		}
	}
	if final != a2a.TaskStateCompleted {
		t.Fatalf("the stream on B ended %s", final)
	}

	// Both replicas now report the same finished task.
	for name, c := range map[string]interface {
		GetTask(context.Context, *a2a.GetTaskRequest, ...client.CallOption) (*a2a.Task, error)
		ListTasks(context.Context, *a2a.ListTasksRequest, ...client.CallOption) (*a2a.ListTasksResponse, error)
	}{"A": ca, "B": cb} {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
		if err != nil || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
			t.Fatalf("GetTask on %s: %v, %+v", name, err, task)
		}
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != taskID {
			t.Fatalf("ListTasks on %s: %v, %+v", name, err, list)
		}
	}
}
