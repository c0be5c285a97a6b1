package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/natsstore"
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
		select {
		case <-asked:
		case <-time.After(30 * time.Second):
			t.Fatal("A's tool was not called")
		}
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

	// Both replicas now report the same finished task. The snapshot is
	// written just after the event that ends the task, so a reader may be
	// a moment ahead of it.
	for name, c := range map[string]*client.Client{"A": ca, "B": cb} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: taskID})
			if err != nil {
				t.Fatalf("GetTask on %s: %v", name, err)
			}
			if task.Status.State == a2a.TaskStateCompleted && len(task.Artifacts) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GetTask on %s: %+v", name, task)
			}
			time.Sleep(10 * time.Millisecond)
		}
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil || len(list.Tasks) != 1 || list.Tasks[0].ID != taskID || list.Tasks[0].Status.State != a2a.TaskStateCompleted {
			t.Fatalf("ListTasks on %s: %v, %+v", name, err, list)
		}
	}
}

// startOnA starts a weather question on replica A and returns the task's
// id once A's tool is waiting on the endpoint, with A's stream, which
// ends with the task.
func startOnA(t *testing.T, ctx context.Context, ca *client.Client, asked <-chan struct{}) (string, <-chan a2a.TaskState) {
	t.Helper()
	ids := make(chan string, 1)
	final := make(chan a2a.TaskState, 1)
	go func() {
		var last a2a.TaskState
		for ev, err := range ca.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "What's the weather in Oslo?")}) {
			if err != nil {
				break
			}
			if id, _ := ev.Event.TaskIDs(); id != "" {
				select {
				case ids <- id:
				default:
				}
			}
			if s, ok := a2a.StateOf(ev.Event); ok {
				last = s
			}
		}
		final <- last
	}()
	var id string
	select {
	case id = <-ids:
	case <-time.After(30 * time.Second):
		t.Fatal("no task on A")
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("A's tool was not called")
	}
	return id, final
}

// CancelTask on replica B stops the run on replica A: A's tool call is
// abandoned, A's stream ends CANCELED, and both replicas report it.
func TestCancelOnAnotherReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := newMesh(t)
	abandoned, ended := make(chan struct{}), make(chan struct{})
	var once sync.Once
	asked := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(asked) })
		select {
		case <-r.Context().Done():
			close(abandoned)
		case <-ended: // the test failed: do not wait for the tool's timeout
		}
	}))
	defer srv.Close()
	defer close(ended)
	_, a := m.service("weather", "--state", "nats", "--weather-endpoint", srv.URL)
	_, b := m.service("weather", "--state", "nats", "--weather-endpoint", srv.URL)
	ca, cb := newClient(t, a), newClient(t, b)

	id, final := startOnA(t, ctx, ca, asked)
	task, err := cb.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id})
	if err != nil || task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on B: %v, %+v", err, task)
	}
	// B answers once A's run has stopped, its tool call abandoned. The
	// tool's own HTTP timeout (10 s) would end the call too, later, with
	// A's run going on: a wait far shorter than it tells the two apart.
	select {
	case <-abandoned:
	case <-time.After(2 * time.Second):
		t.Fatal("A's run went on after the cancel on B: its tool call is still open 2 s later")
	}
	select {
	case s := <-final:
		if s != a2a.TaskStateCanceled {
			t.Fatalf("A's stream ended %s", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("A's stream goes on 5 s after the cancel")
	}
	if got, err := ca.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("GetTask on A: %v, %+v", err, got)
	}
}

// A replica killed mid-task (SIGKILL) does not leave the task WORKING: the
// other replica fails it, saying why, within about twice the heartbeat
// (its heartbeat expires within one, and the other looks once a
// heartbeat).
func TestReplicaKilledMidTask(t *testing.T) {
	const heartbeat = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := newMesh(t)
	endpoint, asked, _ := gatedWeather(t)
	procA, a := m.service("weather", "--state", "nats", "--weather-endpoint", endpoint, "--heartbeat", heartbeat.String())
	_, b := m.service("weather", "--state", "nats", "--weather-endpoint", endpoint, "--heartbeat", heartbeat.String())
	ca, cb := newClient(t, a), newClient(t, b)

	id, _ := startOnA(t, ctx, ca, asked)
	procA.stop(true)
	killed := time.Now()
	for {
		task, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("GetTask on B: %v", err)
		}
		if s := task.Status.State; s != a2a.TaskStateWorking && s != a2a.TaskStateSubmitted {
			msg := ""
			if task.Status.Message != nil && len(task.Status.Message.Parts) > 0 {
				msg = task.Status.Message.Parts[0].Text
			}
			if s != a2a.TaskStateFailed || !strings.Contains(msg, "stopped before it finished") {
				t.Fatalf("the orphaned task is %s: %q", s, msg)
			}
			t.Logf("B failed the task %v after A was killed: %s", time.Since(killed).Round(time.Millisecond), msg)
			return
		}
		// Twice the heartbeat, and as much again for a loaded machine; a
		// replica that looked ten times less often would miss it.
		if since := time.Since(killed); since > 4*heartbeat {
			t.Fatalf("the task is still %s %v after its replica was killed, with a heartbeat of %v", task.Status.State, since.Round(time.Millisecond), heartbeat)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A task interrupted on replica A (INPUT_REQUIRED) is resumed by a
// follow-up message on replica B from the checkpoint A left on NATS, even
// with A gone (SIGKILL): nothing of the run lives in A's process.
func TestInterruptResumedOnAnotherReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m := newMesh(t)
	procA, a := m.service("writer", "--state", "nats")
	_, b := m.service("writer", "--state", "nats")
	ca, cb := newClient(t, a), newClient(t, b)

	first, err := ca.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "Ask me who the report is for, then write it")})
	if err != nil {
		t.Fatalf("send on A: %v", err)
	}
	task, ok := first.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("A answered %+v, want an INPUT_REQUIRED task", first)
	}
	procA.stop(true)

	reply := a2a.NewTextMessage(a2a.RoleUser, "the board")
	reply.TaskID, reply.ContextID = task.ID, task.ContextID
	second, err := cb.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply})
	if err != nil {
		t.Fatalf("follow-up on B: %v", err)
	}
	done, ok := second.(*a2a.Task)
	if !ok || done.Status.State != a2a.TaskStateCompleted || done.ID != task.ID {
		t.Fatalf("B answered %+v, want task %s completed", second, task.ID)
	}
	var text strings.Builder
	for _, art := range done.Artifacts {
		for _, p := range art.Parts {
			text.WriteString(p.Text)
		}
	}
	if done.Status.Message != nil {
		text.WriteString(done.Status.Message.Text())
	}
	if !strings.Contains(text.String(), "the person answered: the board") {
		t.Fatalf("B's run did not resume A's: %q", text.String())
	}
	got, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("GetTask on B: %v, %+v", err, got)
	}
}

// The NATS server restarted while a replica runs a task and a client
// follows it: while NATS is down, requests fail at once saying so; the run
// waits for NATS and finishes; the client's stream gets every event once,
// in order; and the other replica, whose view of every heartbeat expired
// during the outage, does not fail the task.
func TestNATSRestartMidTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m := newMesh(t)
	endpoint, asked, open := gatedWeather(t)
	_, a := m.service("weather", "--state", "nats", "--weather-endpoint", endpoint, "--heartbeat", "1s")
	_, b := m.service("weather", "--state", "nats", "--weather-endpoint", endpoint, "--heartbeat", "1s")
	ca, cb := newClient(t, a), newClient(t, b)

	type result struct {
		ids   []int
		final a2a.TaskState
		why   string
		err   error
	}
	taskIDs, done := make(chan string, 1), make(chan result, 1)
	go func() {
		var r result
		for ev, err := range ca.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "What's the weather in Oslo?")}) {
			if err != nil {
				r.err = err
				break
			}
			if len(r.ids) == 0 {
				id, _ := ev.Event.TaskIDs()
				taskIDs <- id
			}
			n, _ := strconv.Atoi(ev.ID)
			r.ids = append(r.ids, n)
			if s, ok := a2a.StateOf(ev.Event); ok {
				r.final = s
				if u, ok := ev.Event.(*a2a.TaskStatusUpdateEvent); ok && u.Status.Message != nil {
					r.why = u.Status.Message.Text()
				}
			}
		}
		done <- r
	}()
	var id string
	select {
	case id = <-taskIDs:
	case <-ctx.Done():
		t.Fatal("no task on A")
	}
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("A's tool was not called")
	}

	m.stopNATS()
	// Twice the heartbeat: every heartbeat expires.
	downFor := time.After(2500 * time.Millisecond)
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"GetTask on B", func() error { _, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: id}); return err }},
		{"SendMessage on B", func() error {
			_, err := cb.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "What's the weather in Rome?")})
			return err
		}},
	} {
		// Until B's connection notices, a call may still go out and wait
		// for its answer (natsstore.CallTimeout).
		for attempt := 1; ; attempt++ {
			start := time.Now()
			err := c.call()
			if err == nil {
				t.Fatalf("%s succeeded with NATS down", c.name)
			}
			if !strings.Contains(err.Error(), "task storage cannot be reached at the moment") {
				t.Fatalf("%s with NATS down: %v", c.name, err)
			}
			if took := time.Since(start); took < natsstore.CallTimeout || attempt == 3 {
				t.Logf("%s with NATS down failed in %v: %v", c.name, took.Round(time.Microsecond), err)
				break
			}
		}
	}
	<-downFor
	m.startNATS()
	// The task stays WORKING through more than one of B's sweeps after
	// the restart.
	time.Sleep(1500 * time.Millisecond)
	close(open)

	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("A's stream did not end")
	}
	if r.err != nil || r.final != a2a.TaskStateCompleted {
		t.Fatalf("A's stream ended %s (%q), %v; events %v", r.final, r.why, r.err, r.ids)
	}
	for i, n := range r.ids {
		if n != i+1 {
			t.Fatalf("A's stream gave events %v", r.ids)
		}
	}
	t.Logf("A's stream: events %v", r.ids)
	// B's sweep ran during and after the outage; give it two more rounds.
	time.Sleep(2 * time.Second)
	for name, c := range map[string]*client.Client{"A": ca, "B": cb} {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("GetTask on %s: %v, %+v", name, err, task)
		}
	}
}
