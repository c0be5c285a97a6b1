package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/services/echo"
)

// groupedPrefix names the subtests in which newHandler commits events in
// groups (Config.CommitDelay).
const groupedPrefix = "TestGroupedCommits/"

// TestGroupedCommits runs the handler's tests again with a commit delay:
// whatever the grouping, clients see the same tasks and streams.
func TestGroupedCommits(t *testing.T) {
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"SendBlocking", TestSendBlocking},
		{"DirectMessageReply", TestDirectMessageReply},
		{"ReturnImmediately", TestReturnImmediately},
		{"HistoryLength", TestHistoryLength},
		{"FollowUpErrors", TestFollowUpErrors},
		{"StreamSequence", TestStreamSequence},
		{"SubscribeAndResume", TestSubscribeAndResume},
		{"SubscribeInterrupted", TestSubscribeInterrupted},
		{"ConsumerLeavingDoesNotStopTheAgent", TestConsumerLeavingDoesNotStopTheAgent},
		{"Cancel", TestCancel},
		{"AgentMisbehaviour", TestAgentMisbehaviour},
		{"RunsNeverInterleave", TestRunsNeverInterleave},
		{"ListTasks", TestListTasks},
		{"PushNotifications", TestPushNotifications},
		{"CloseStopsRuns", TestCloseStopsRuns},
		{"ConcurrentSendsCancelsAndSubscribers", TestConcurrentSendsCancelsAndSubscribers},
		{"SnapshotBehindItsLog", TestSnapshotBehindItsLog},
		{"CommitOutlastsUnreachableStores", TestCommitOutlastsUnreachableStores},
		{"GenerationsOnlyWhenActive", TestGenerationsOnlyWhenActive},
		{"GenerationNumbersEvents", TestGenerationNumbersEvents},
		{"IfGenerationMatch", TestIfGenerationMatch},
		{"IfGenerationMatchLosesARace", TestIfGenerationMatchLosesARace},
		{"LongPoll", TestLongPoll},
	} {
		t.Run(tc.name, tc.test)
	}
}

// countingLog counts appends and the events they carry.
type countingLog struct {
	eventlog.Log
	mu              sync.Mutex
	appends, events int
}

func (l *countingLog) Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	l.mu.Lock()
	l.appends++
	l.events += len(events)
	l.mu.Unlock()
	return l.Log.Append(ctx, taskID, seq, events...)
}

// countingStore counts snapshot writes.
type countingStore struct {
	taskstore.Store
	mu     sync.Mutex
	writes int
}

func (s *countingStore) Create(ctx context.Context, e taskstore.Entry) (uint64, error) {
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	return s.Store.Create(ctx, e)
}

func (s *countingStore) Update(ctx context.Context, e taskstore.Entry) (uint64, error) {
	s.mu.Lock()
	s.writes++
	s.mu.Unlock()
	return s.Store.Update(ctx, e)
}

// TestQuickRunIsOneWrite: a run that settles within the commit delay is
// one append and one snapshot, streamed or not, and its events keep their
// numbers.
func TestQuickRunIsOneWrite(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		log := &countingLog{Log: new(eventlog.Memory)}
		tasks := &countingStore{Store: new(taskstore.Memory)}
		h := newHandler(t, &echo.Executor{}, func(c *server.Config) {
			c.Events, c.Tasks = log, tasks
			c.CommitDelay = time.Hour // only the settling event commits
		})
		var id string
		if streaming {
			entries, err := collect(t, h.SendStreamingMessage(context.Background(), send("hello world")))
			if err != nil || len(entries) != 13 {
				t.Fatalf("stream: %d events, %v; want 13", len(entries), err)
			}
			for i, e := range entries {
				if e.Seq != uint64(i+1) {
					t.Fatalf("event %d has seq %d", i, e.Seq)
				}
			}
			id, _ = entries[0].Event.TaskIDs()
		} else {
			task := sendTask(t, h, send("hello"))
			if task.Status.State != a2a.TaskStateCompleted || task.Artifacts[0].Text() != "hello" {
				t.Fatalf("task %s, artifacts %+v", task.Status.State, task.Artifacts)
			}
			id = task.ID
		}
		if log.appends != 1 || tasks.writes != 1 {
			t.Errorf("streaming %v: %d appends (%d events), %d snapshot writes; want 1 and 1", streaming, log.appends, log.events, tasks.writes)
		}
		if last, _ := log.Last(context.Background(), id); last != uint64(log.events) {
			t.Errorf("streaming %v: log ends at %d, want %d", streaming, last, log.events)
		}
	}
}

// TestDelayedEventsAreCommitted: an event the agent does not follow up
// reaches streams and readers once the commit delay is up, while the agent
// still works; a stream sees it exactly once, in order.
func TestDelayedEventsAreCommitted(t *testing.T) {
	step := make(chan struct{})
	h := newHandler(t, gated(step), func(c *server.Config) { c.CommitDelay = 2 * time.Millisecond })
	ctx := context.Background()
	var want uint64
	for e, err := range h.SendStreamingMessage(ctx, send("x")) {
		if err != nil {
			t.Fatal(err)
		}
		if want++; e.Seq != want {
			t.Fatalf("event %d numbered %d", want, e.Seq)
		}
		id, _ := e.Event.TaskIDs()
		// Each event arrives while the agent waits for the next step,
		// so only the timer can have committed it.
		task, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatal(err)
		}
		parts := 0
		if len(task.Artifacts) == 1 {
			parts = len(task.Artifacts[0].Parts)
		}
		if e.Seq >= 2 && e.Seq < 5 {
			if task.Status.State != a2a.TaskStateWorking || parts != int(e.Seq-2) {
				t.Fatalf("after event %d GetTask has %s with artifacts %+v", e.Seq, task.Status.State, task.Artifacts)
			}
		}
		switch {
		case e.Seq >= 2 && e.Seq < 4:
			step <- struct{}{}
		case e.Seq == 4:
			close(step)
		}
	}
	if want != 5 {
		t.Fatalf("%d events, want 5 (task, working, 2 chunks, completed)", want)
	}
}

// failingLog refuses every append.
type failingLog struct{ eventlog.Log }

func (failingLog) Append(context.Context, string, uint64, ...a2a.Event) error {
	return errors.New("disk full")
}

// TestUnstorableTaskFailsTheCall: when a new task's first commit fails, the
// call that started it gets the error, blocking or streaming.
func TestUnstorableTaskFailsTheCall(t *testing.T) {
	h := newHandler(t, &echo.Executor{}, func(c *server.Config) {
		c.Events = failingLog{new(eventlog.Memory)}
		c.CommitDelay = time.Hour
	})
	if _, err := h.SendMessage(context.Background(), send("hello")); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("blocking send: %v, want the log's error", err)
	}
	_, err := collect(t, h.SendStreamingMessage(context.Background(), send("hello")))
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("streaming send: %v, want the log's error", err)
	}
}
