package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/natsstore"
)

// The guarantees docs/state.md gives for the durable log, each kept by one
// mechanism: the stream's expected last sequence of the task's subject
// (two writers of one event), the message id (an append retried after a
// lost acknowledgement is stored once) and reading back the task's last
// message (a retry finds its own append).

func replicaLog(t *testing.T, js jetstream.JetStream, replica string) *natsstore.Log {
	t.Helper()
	l, err := natsstore.NewLog(context.Background(), js, natsstore.LogConfig{Namespace: "weather", Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func said(task, text string) a2a.Event {
	return a2a.NewStatusUpdate(task, "c", a2a.TaskStateWorking, a2a.NewTextMessage(a2a.RoleAgent, text))
}

// storedMessages counts the stream's messages on the task's subject.
func storedMessages(t *testing.T, ctx context.Context, js jetstream.JetStream, task string) uint64 {
	t.Helper()
	st, err := js.Stream(ctx, natsstore.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	subject := natsstore.EventsSubjectPrefix + "weather." + task
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subject]
}

// readAll reads the task's events, which end with no sealing event: until
// the last one expected.
func readAll(t *testing.T, ctx context.Context, l *natsstore.Log, task string, n int) []eventlog.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var es []eventlog.Entry
	for e, err := range l.Subscribe(ctx, task, 0) {
		if err != nil {
			t.Fatalf("reading task %s after %d events: %v", task, len(es), err)
		}
		es = append(es, e)
		if len(es) == n {
			break
		}
	}
	return es
}

// A writer that is behind the task (another writer stored the event it
// is about to write, in a message the de-duplication does not catch, as
// when the de-duplication window of two minutes has passed) is refused
// by the stream: the task keeps one event 3.
func TestLogWriterBehindIsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js := replica(t, natsServer(t))
	a := replicaLog(t, js, "a")
	for seq := uint64(1); seq <= 2; seq++ {
		if err := a.Append(ctx, "t", seq, said("t", "a")); err != nil {
			t.Fatal(err)
		}
	}
	body, err := a2a.AppendJSON(nil, a2a.Wrap(said("t", "b")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.PublishMsg(ctx, &nats.Msg{Subject: natsstore.EventsSubjectPrefix + "weather.t", Data: body,
		Header: nats.Header{natsstore.HeaderSeq: {"3"}, "A2A-Writer": {"b"}}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(ctx, "t", 3, said("t", "a")); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("the writer behind appended event 3: %v, want ErrConflict", err)
	}
	if n := storedMessages(t, ctx, js, "t"); n != 3 {
		t.Fatalf("the task has %d messages, want 3", n)
	}
	if w, err := a.LastWriter(ctx, "t"); err != nil || w != "b" {
		t.Fatalf("last writer %q, %v; want b", w, err)
	}
}

// An append retried after its acknowledgement was lost (the same
// replica, which no longer knows whether it was stored) succeeds and is
// stored once; the same append by another replica is a conflict.
func TestLogRetryAfterLostAck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	first := replicaLog(t, js, "r")
	// retry is the same replica after a lost acknowledgement: it has
	// forgotten what it knew of the task.
	jsRetry := replica(t, e)
	retry := func() *natsstore.Log { return replicaLog(t, jsRetry, "r") }
	other := replicaLog(t, replica(t, e), "other")

	// A task's first append is sent without a read (the stream refuses it
	// if the task has events): only the message id tells the retry that
	// the first attempt was stored.
	if err := first.Append(ctx, "t", 1, said("t", "r")); err != nil {
		t.Fatal(err)
	}
	if err := retry().Append(ctx, "t", 1, said("t", "r")); err != nil {
		t.Fatalf("retry of the first append: %v", err)
	}
	if err := other.Append(ctx, "t", 1, said("t", "other")); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("another replica's first append: %v, want ErrConflict", err)
	}
	if n := storedMessages(t, ctx, js, "t"); n != 1 {
		t.Fatalf("the task has %d messages after a retried first append, want 1", n)
	}

	// A later append: the retry reads the task's last message back and
	// finds its own.
	if err := first.Append(ctx, "t", 2, said("t", "r")); err != nil {
		t.Fatal(err)
	}
	if err := first.Append(ctx, "t", 3, said("t", "r"), said("t", "r")); err != nil {
		t.Fatal(err)
	}
	again := retry()
	if err := again.Append(ctx, "t", 3, said("t", "r"), said("t", "r")); err != nil {
		t.Fatalf("retry of events 3 and 4: %v", err)
	}
	if err := other.Append(ctx, "t", 3, said("t", "other"), said("t", "other")); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("another replica's events 3 and 4: %v, want ErrConflict", err)
	}
	// The retrying replica goes on from there.
	if err := again.Append(ctx, "t", 5, said("t", "r")); err != nil {
		t.Fatalf("event 5 after the retry: %v", err)
	}
	if n := storedMessages(t, ctx, js, "t"); n != 4 {
		t.Fatalf("the task has %d messages, want 4", n)
	}
	for i, e := range readAll(t, ctx, first, "t", 5) {
		if e.Seq != uint64(i+1) || e.Event.(*a2a.TaskStatusUpdateEvent).Status.Message.Text() != "r" {
			t.Fatalf("event %d: %+v", i+1, e)
		}
	}
}

// Writers racing on one task, each appending the event after the last
// it reads: exactly one wins each number, and the log holds each once, in
// order, as its winner wrote it.
func TestLogRacingWriters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := natsServer(t)
	const writers, events = 4, 40
	logs := make([]*natsstore.Log, writers)
	jss := make([]jetstream.JetStream, writers)
	for i := range logs {
		jss[i] = replica(t, e)
		logs[i] = replicaLog(t, jss[i], fmt.Sprint("w", i))
	}
	var mu sync.Mutex
	won := map[uint64]string{}
	var wg sync.WaitGroup
	for i, l := range logs {
		name := fmt.Sprint("w", i)
		wg.Go(func() {
			for attempt := 0; attempt < 20*events && ctx.Err() == nil; attempt++ {
				last, err := l.Last(ctx, "t")
				if err != nil && !errors.Is(err, eventlog.ErrNotFound) {
					t.Errorf("%s: %v", name, err)
					return
				}
				if last >= events {
					return
				}
				err = l.Append(ctx, "t", last+1, said("t", name))
				switch {
				case err == nil:
					mu.Lock()
					if prev, ok := won[last+1]; ok {
						t.Errorf("event %d: won by %s and %s", last+1, prev, name)
					}
					won[last+1] = name
					mu.Unlock()
				case !errors.Is(err, eventlog.ErrConflict):
					t.Errorf("%s, event %d: %v", name, last+1, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(won) != events {
		t.Fatalf("%d events won, want %d", len(won), events)
	}
	winners := map[string]int{}
	for i, e := range readAll(t, ctx, logs[0], "t", events) {
		text := e.Event.(*a2a.TaskStatusUpdateEvent).Status.Message.Text()
		if e.Seq != uint64(i+1) || text != won[e.Seq] {
			t.Fatalf("event %d: number %d by %s, want %s", i+1, e.Seq, text, won[uint64(i+1)])
		}
		winners[text]++
	}
	if n := storedMessages(t, ctx, jss[0], "t"); n != events {
		t.Fatalf("the task has %d messages, want %d", n, events)
	}
	t.Logf("events won per writer: %v", winners)
}
