package natsstore_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// recorder is a replica's server, as its Replicas see it.
type recorder struct {
	// stop answers StopRun.
	stop func(taskID string) (bool, error)

	mu      sync.Mutex
	stopped []string
	failed  map[string]string // task id: reason
	waiting []string          // tasks passed to ExpireWaiting
}

func (r *recorder) ExpireWaiting(_ context.Context, taskID string, _ time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waiting = append(r.waiting, taskID)
	return nil
}

func (r *recorder) waitingIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.waiting)
}

func (r *recorder) StopRun(_ context.Context, taskID string) (bool, error) {
	r.mu.Lock()
	r.stopped = append(r.stopped, taskID)
	r.mu.Unlock()
	if r.stop == nil {
		return false, nil
	}
	return r.stop(taskID)
}

func (r *recorder) FailOrphan(_ context.Context, taskID, reason string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failed == nil {
		r.failed = map[string]string{}
	}
	r.failed[taskID] = reason
	return nil
}

func (r *recorder) failedIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.failed))
}

func (r *recorder) stops() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.stopped)
}

// member is a replica of the agent "weather": its connection, stores and
// Replicas.
type member struct {
	name     string
	js       jetstream.JetStream
	log      *natsstore.Log
	tasks    *natsstore.TaskStore
	replicas *natsstore.Replicas
	h        recorder
}

func newMember(t *testing.T, e *embedded.Server, name string, heartbeat time.Duration) *member {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := &member{name: name, js: replica(t, e)}
	m.log = replicaLog(t, m.js, name)
	var err error
	if m.tasks, err = natsstore.NewTaskStore(ctx, m.js, natsstore.TaskStoreConfig{Log: m.log}); err != nil {
		t.Fatal(err)
	}
	m.replicas, err = natsstore.NewReplicas(ctx, m.js, natsstore.ReplicasConfig{Namespace: "weather", Replica: name, Log: m.log, Tasks: m.tasks, HeartbeatTTL: heartbeat})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// serve runs m's Replicas until the test ends or the returned stop.
func (m *member) serve(t *testing.T) (stop func()) {
	stop = m.replicas.Start(context.Background(), &m.h)
	t.Cleanup(stop)
	return stop
}

// writes makes m the last writer of a task in state s, stored.
func (m *member) writes(t *testing.T, ctx context.Context, id string, s a2a.TaskState) {
	t.Helper()
	if _, err := m.tasks.Commit(ctx, taskstore.Entry{Task: testTask(id, "c", s), Seq: 1}, testTask(id, "c", s)); err != nil {
		t.Fatal(err)
	}
}

// continues commits the task's next event, a status s.
func (m *member) continues(t *testing.T, ctx context.Context, id string, s a2a.TaskState) {
	t.Helper()
	e, err := m.tasks.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.tasks.Commit(ctx, taskstore.Entry{Task: testTask(id, "c", s), Seq: e.Seq + 1, Version: e.Version}, status(id, s)); err != nil {
		t.Fatal(err)
	}
}

// A cancel goes to the replica that wrote the task's last event, and
// comes back with its answer; a task whose writer is gone, is this
// replica, or is nobody has no run elsewhere.
func TestReplicasCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	a, b := newMember(t, e, "a", time.Second), newMember(t, e, "b", time.Second)
	gone := newMember(t, e, "gone", time.Second) // never serves
	a.h.stop = func(id string) (bool, error) {
		switch id {
		case "running":
			return true, nil
		case "failing":
			return false, errors.New("the run would not stop")
		}
		return false, nil
	}
	a.serve(t)

	// B wrote "running" first, A last: A runs it.
	b.writes(t, ctx, "running", a2a.TaskStateWorking)
	a.continues(t, ctx, "running", a2a.TaskStateWorking)
	a.writes(t, ctx, "idle", a2a.TaskStateWorking)
	a.writes(t, ctx, "failing", a2a.TaskStateWorking)
	gone.writes(t, ctx, "orphan", a2a.TaskStateWorking)
	b.writes(t, ctx, "own", a2a.TaskStateWorking)

	// Serve subscribes in the background: wait until A answers.
	waitFor(t, 5*time.Second, "A to answer the other replicas", func() bool {
		stopped, err := b.replicas.Cancel(ctx, "running")
		return err == nil && stopped
	})
	for _, c := range []struct {
		task    string
		stopped bool
		err     string
		asked   bool // whether A was asked
	}{
		{"running", true, "", true},
		{"idle", false, "", true},
		{"failing", false, "the run would not stop", true},
		{"orphan", false, "", false},
		{"own", false, "", false},
		{"no-events", false, "", false},
	} {
		t.Run(c.task, func(t *testing.T) {
			before := len(a.h.stops())
			stopped, err := b.replicas.Cancel(ctx, c.task)
			if stopped != c.stopped || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Cancel = %v, %v; want %v, %q", stopped, err, c.stopped, c.err)
			}
			asked := a.h.stops()[before:]
			if c.asked != slices.Equal(asked, []string{c.task}) || !c.asked && len(asked) != 0 {
				t.Fatalf("A was asked to stop %v", asked)
			}
		})
	}
}

// A serving replica keeps a heartbeat, and a replica that stops removes
// its own at once.
func TestReplicasHeartbeat(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	a := newMember(t, e, "a", time.Second)
	kv, err := a.js.KeyValue(ctx, natsstore.ReplicasBucket)
	if err != nil {
		t.Fatal(err)
	}
	revision := func() uint64 {
		en, err := kv.Get(ctx, "weather.a")
		if err != nil {
			return 0
		}
		return en.Revision()
	}
	stop := a.serve(t)
	waitFor(t, 5*time.Second, "a heartbeat", func() bool { return revision() != 0 })
	// Renewed every third of the TTL: three beats within two TTLs.
	first := revision()
	waitFor(t, 2*time.Second, "the heartbeat's renewals", func() bool { return revision() >= first+3 })
	stop()
	if _, err := kv.Get(ctx, "weather.a"); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the heartbeat of a stopped replica: %v, want none", err)
	}
}

// The other replicas fail the submitted and working tasks a replica was
// running once its heartbeat is gone, at their first look after (once a
// heartbeat), whether it stopped (and removed its heartbeat) or was
// killed (and its heartbeat expired); its interrupted tasks, and live
// replicas' tasks, are left alone.
func TestReplicasFailOrphans(t *testing.T) {
	const heartbeat = time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := natsServer(t)
	b, c := newMember(t, e, "b", heartbeat), newMember(t, e, "c", heartbeat)
	// "dead" never beat: the first look fails its task, which tells
	// that B has looked.
	newMember(t, e, "dead", heartbeat).writes(t, ctx, "dead-working", a2a.TaskStateWorking)
	b.writes(t, ctx, "b-working", a2a.TaskStateWorking)
	c.writes(t, ctx, "c-working", a2a.TaskStateWorking)
	b.serve(t)
	c.serve(t)
	failed := func() []string {
		return slices.Sorted(slices.Values(slices.Compact(slices.Sorted(slices.Values(append(b.h.failedIDs(), c.h.failedIDs()...))))))
	}
	waitFor(t, 4*heartbeat, "the first look", func() bool { return slices.Contains(failed(), "dead-working") })

	for _, how := range []string{"stopped", "killed"} {
		t.Run(how, func(t *testing.T) {
			a := newMember(t, e, how, heartbeat)
			stop := a.serve(t)
			// A beats before the others know of its tasks.
			waitFor(t, 5*time.Second, "A's heartbeat", func() bool {
				kv, err := a.js.KeyValue(ctx, natsstore.ReplicasBucket)
				if err != nil {
					return false
				}
				_, err = kv.Get(ctx, "weather."+how)
				return err == nil
			})
			a.writes(t, ctx, how+"-working", a2a.TaskStateWorking)
			a.writes(t, ctx, how+"-submitted", a2a.TaskStateSubmitted)
			a.writes(t, ctx, how+"-interrupted", a2a.TaskStateInputRequired)
			// A whole look with A alive.
			time.Sleep(2 * heartbeat)
			if slices.ContainsFunc(failed(), func(id string) bool { return strings.HasPrefix(id, how) }) {
				t.Fatalf("a live replica's tasks failed: %v", failed())
			}
			var deadline time.Duration
			switch how {
			case "stopped":
				stop()
				// The next look, within a heartbeat, sees it gone.
				deadline = 3 * heartbeat
			case "killed":
				// Cut off without a word: its heartbeat expires within
				// a heartbeat, then the next look sees it gone.
				a.js.Conn().Close()
				deadline = 4 * heartbeat
			}
			gone := time.Now()
			want := []string{how + "-submitted", how + "-working"}
			waitFor(t, deadline, "the replica's tasks to fail", func() bool {
				f := failed()
				return slices.Contains(f, want[0]) && slices.Contains(f, want[1])
			})
			t.Logf("failed %v after the replica was %s", time.Since(gone).Round(time.Millisecond), how)
			for _, r := range []*recorder{&b.h, &c.h} {
				r.mu.Lock()
				reason := r.failed[how+"-working"]
				r.mu.Unlock()
				if reason != "" && !strings.Contains(reason, "("+how+") stopped before it finished") {
					t.Fatalf("reason %q", reason)
				}
			}
			// A look more: the interrupted task stays, and is handed over
			// for its input timeout, which no live replica keeps.
			time.Sleep(heartbeat + heartbeat/2)
			if slices.Contains(failed(), how+"-interrupted") {
				t.Fatal("an interrupted task failed")
			}
			waitFor(t, deadline, "the interrupted task to be handed over", func() bool {
				return slices.Contains(append(b.h.waitingIDs(), c.h.waitingIDs()...), how+"-interrupted")
			})
		})
	}
	for _, id := range append(b.h.waitingIDs(), c.h.waitingIDs()...) {
		if !strings.HasSuffix(id, "-interrupted") || strings.HasPrefix(id, "b-") || strings.HasPrefix(id, "c-") {
			t.Fatalf("handed over %s", id)
		}
	}
	for _, id := range failed() {
		if !strings.HasPrefix(id, "dead-") && !strings.HasPrefix(id, "stopped-") && !strings.HasPrefix(id, "killed-") ||
			strings.HasSuffix(id, "-interrupted") {
			t.Fatalf("failed %v", failed())
		}
	}
}
