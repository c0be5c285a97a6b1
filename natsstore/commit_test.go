package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/natsstore"
)

// subjectMessages counts the messages the events stream holds for the
// task, and the writes the tasks bucket has taken.
func subjectMessages(t *testing.T, js jetstream.JetStream, ns, id string) (msgs, bucketWrites uint64) {
	t.Helper()
	ctx := context.Background()
	s, err := js.Stream(ctx, natsstore.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	subject := natsstore.EventsSubjectPrefix + ns + "." + id
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(subject))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.Stream(ctx, "KV_"+natsstore.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	kvInfo, err := kv.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects[subject], kvInfo.State.LastSeq
}

// A commit is one message: the events and the snapshot after them, read
// back by another replica's store and log; the message that ends the
// task replaces the task's others and carries every event, so a replica
// that reads the log after the end replays it whole.
func TestCommitIsOneWrite(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	jsA, jsB := replica(t, e), replica(t, e)
	a := newTaskStore(t, jsA, "weather", natsstore.TaskStoreConfig{KeepEnded: time.Hour})
	b := newTaskStore(t, jsB, "weather", natsstore.TaskStoreConfig{})
	_, kvBefore := subjectMessages(t, jsA, "weather", "t1")

	task := testTask("t1", "c1", a2a.TaskStateSubmitted)
	v, err := a.Commit(ctx, taskstore.Entry{Task: task, Seq: 1, Owner: "alice"}, task)
	if err != nil {
		t.Fatal(err)
	}
	msgs, kvWrites := subjectMessages(t, jsA, "weather", "t1")
	if msgs != 1 || kvWrites != kvBefore {
		t.Fatalf("after one commit: %d messages, %d bucket writes; want 1 and none", msgs, kvWrites-kvBefore)
	}
	got, err := b.Get(ctx, "t1")
	if err != nil || got.Version != v || got.Seq != 1 || got.Owner != "alice" || got.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("replica B reads %+v, %v; want version %d, event 1, alice's submitted task", got, err, v)
	}
	working := testTask("t1", "c1", a2a.TaskStateWorking)
	v, err = b.Commit(ctx, taskstore.Entry{Task: working, Seq: 3, Version: got.Version, Owner: "alice"},
		status("t1", a2a.TaskStateWorking), status("t1", a2a.TaskStateWorking))
	if err != nil {
		t.Fatal(err)
	}
	// A's view is stale: its commit loses, and says so.
	if _, err := a.Commit(ctx, taskstore.Entry{Task: working, Seq: 2, Version: got.Version, Owner: "alice"}, status("t1", a2a.TaskStateWorking)); !errors.Is(err, taskstore.ErrConflict) {
		t.Fatalf("a stale commit: %v, want ErrConflict", err)
	}
	if msgs, _ := subjectMessages(t, jsA, "weather", "t1"); msgs != 2 {
		t.Fatalf("after two commits: %d messages, want 2", msgs)
	}
	done := testTask("t1", "c1", a2a.TaskStateCompleted)
	if _, err := b.Commit(ctx, taskstore.Entry{Task: done, Seq: 4, Version: v, Owner: "alice"}, status("t1", a2a.TaskStateCompleted)); err != nil {
		t.Fatal(err)
	}
	msgs, kvWrites = subjectMessages(t, jsA, "weather", "t1")
	if msgs != 1 || kvWrites != kvBefore {
		t.Fatalf("after the task ended: %d messages, %d bucket writes; want 1 (the others rolled up) and none", msgs, kvWrites-kvBefore)
	}
	var seqs []uint64
	for e, err := range a.Events().Subscribe(ctx, "t1", 0) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
	}
	if fmt.Sprint(seqs) != "[1 2 3 4]" {
		t.Fatalf("replay after the end: events %v, want [1 2 3 4]", seqs)
	}
	if last, err := a.Events().Last(ctx, "t1"); err != nil || last != 4 {
		t.Fatalf("Last = %d, %v; want 4", last, err)
	}
	got, err = a.Get(ctx, "t1")
	if err != nil || got.Seq != 4 || got.Task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("Get after the end: %+v, %v", got, err)
	}
	// A watcher sees each event once, though the last message repeats them.
	var watched []uint64
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	for we, err := range natsstore.Watch(wctx, jsA, time.Now().Add(-time.Minute)) {
		if err != nil {
			t.Fatal(err)
		}
		if we.TaskID == "t1" {
			watched = append(watched, we.Seq)
		}
		if we.Seq == 4 {
			stop()
		}
	}
	if fmt.Sprint(watched) != "[4]" {
		// Only the last message is left: the others were rolled up, and it
		// commits event 4 alone.
		t.Fatalf("watched events %v, want [4]", watched)
	}
}

// A task that stays unfinished outlives the events stream's age limit: its
// messages never expire while it runs.
func TestUnfinishedTasksOutliveEventAge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	l, err := natsstore.NewLog(ctx, js, natsstore.LogConfig{Namespace: "weather", Events: natsstore.EventsConfig{MaxAge: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := natsstore.NewTaskStore(ctx, js, natsstore.TaskStoreConfig{Log: l})
	if err != nil {
		t.Fatal(err)
	}
	waiting := testTask("t1", "c1", a2a.TaskStateInputRequired)
	if _, err := s.Commit(ctx, taskstore.Entry{Task: waiting, Seq: 1}, waiting); err != nil {
		t.Fatal(err)
	}
	// Events appended alone (no snapshot) do expire.
	if err := l.Append(ctx, "other", 1, status("other", a2a.TaskStateWorking)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the plain event to expire", func() bool {
		_, err := l.Last(ctx, "other")
		return errors.Is(err, eventlog.ErrNotFound)
	})
	got, err := s.Get(ctx, "t1")
	if err != nil || got.Task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the waiting task after the events' age: %+v, %v", got, err)
	}
}

// A snapshot written by a build that kept snapshots in the tasks bucket is
// still read, listed, and moved into the log by its next update.
func TestSnapshotsOfEarlierBuilds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	s := newTaskStore(t, js, "weather", natsstore.TaskStoreConfig{})
	kv, err := js.KeyValue(ctx, natsstore.TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	task, err := a2a.AppendJSON(nil, testTask("old", "c1", a2a.TaskStateInputRequired))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "weather.old", []byte(`{"seq":3,"owner":"bob","task":`+string(task)+`}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "old")
	if err != nil || got.Seq != 3 || got.Owner != "bob" || got.Version != 0 {
		t.Fatalf("Get of an earlier build's task: %+v, %v", got, err)
	}
	if ids := listIDs(t, s); fmt.Sprint(ids) != "[old]" {
		t.Fatalf("List = %v, want [old]", ids)
	}
	got.Task = testTask("old", "c1", a2a.TaskStateWorking)
	got.Seq = 4
	v, err := s.Update(ctx, got)
	if err != nil {
		t.Fatal(err)
	}
	moved, err := s.Get(ctx, "old")
	if err != nil || moved.Version != v || moved.Task.Status.State != a2a.TaskStateWorking || moved.Owner != "bob" {
		t.Fatalf("after the update: %+v, %v", moved, err)
	}
	if _, err := s.Update(ctx, got); !errors.Is(err, taskstore.ErrConflict) {
		t.Fatalf("the same update again: %v, want ErrConflict", err)
	}
}

// The events stream serves more consumers than nats-server's default of
// 1,000: every SubscribeToTask a replica serves for a task another replica
// runs is one.
func TestEventsStreamServesManyConsumers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	js := replica(t, natsServer(t))
	if err := natsstore.EnsureEventsStream(ctx, js, natsstore.EventsConfig{}); err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(ctx, natsstore.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1_001 {
		_, err := s.CreateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true,
			InactiveThreshold: time.Minute, FilterSubject: fmt.Sprintf("%sweather.t%d", natsstore.EventsSubjectPrefix, i)})
		if err != nil {
			t.Fatalf("consumer %d: %v", i+1, err)
		}
	}
}
