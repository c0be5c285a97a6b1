// Package logtest is the conformance suite every eventlog.Log
// implementation runs: in-memory and durable logs behave the same.
package logtest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
)

// Run runs the suite against logs made by newLog, one per subtest.
func Run(t *testing.T, newLog func(t *testing.T) eventlog.Log) {
	t.Run("AppendOrder", func(t *testing.T) { testAppendOrder(t, newLog(t)) })
	t.Run("ReplayAfter", func(t *testing.T) { testReplayAfter(t, newLog(t)) })
	t.Run("FollowLive", func(t *testing.T) { testFollowLive(t, newLog(t)) })
	t.Run("Sealing", func(t *testing.T) { testSealing(t, newLog(t)) })
	t.Run("Batches", func(t *testing.T) { testBatches(t, newLog(t)) })
	t.Run("CancelSubscription", func(t *testing.T) { testCancel(t, newLog(t)) })
	t.Run("NotFoundAndDelete", func(t *testing.T) { testNotFound(t, newLog(t)) })
	t.Run("ManySubscribers", func(t *testing.T) { testManySubscribers(t, newLog(t)) })
}

func working(task string, n int) a2a.Event {
	return &a2a.TaskStatusUpdateEvent{TaskID: task, ContextID: "c", Status: a2a.TaskStatus{
		State: a2a.TaskStateWorking, Message: a2a.NewTextMessage(a2a.RoleAgent, string(rune('a'+n%26))),
	}}
}

func completed(task string) a2a.Event {
	return &a2a.TaskStatusUpdateEvent{TaskID: task, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
}

func mustAppend(t *testing.T, l eventlog.Log, task string, seq uint64, ev a2a.Event) {
	t.Helper()
	if err := l.Append(context.Background(), task, seq, ev); err != nil {
		t.Fatalf("Append(%s, %d): %v", task, seq, err)
	}
}

// collect reads a subscription until it ends or max entries arrived.
func collect(t *testing.T, l eventlog.Log, ctx context.Context, task string, after uint64, max int) ([]uint64, error) {
	t.Helper()
	var seqs []uint64
	for e, err := range l.Subscribe(ctx, task, after) {
		if err != nil {
			return seqs, err
		}
		seqs = append(seqs, e.Seq)
		if len(seqs) == max {
			break
		}
	}
	return seqs, nil
}

func testAppendOrder(t *testing.T, l eventlog.Log) {
	ctx := context.Background()
	if err := l.Append(ctx, "t", 2, working("t", 0)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("first append at 2 = %v, want ErrConflict", err)
	}
	mustAppend(t, l, "t", 1, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}})
	mustAppend(t, l, "t", 2, working("t", 1))
	for _, seq := range []uint64{2, 4, 1} {
		if err := l.Append(ctx, "t", seq, working("t", 2)); !errors.Is(err, eventlog.ErrConflict) {
			t.Fatalf("append at %d after 2 = %v, want ErrConflict", seq, err)
		}
	}
	mustAppend(t, l, "t", 3, working("t", 3))
	if n, err := l.Last(ctx, "t"); n != 3 || err != nil {
		t.Fatalf("Last = %d, %v, want 3", n, err)
	}
}

func testReplayAfter(t *testing.T, l eventlog.Log) {
	for i := uint64(1); i <= 5; i++ {
		mustAppend(t, l, "t", i, working("t", int(i)))
	}
	mustAppend(t, l, "t", 6, completed("t"))
	for after, want := range map[uint64]int{0: 6, 3: 3, 5: 1, 6: 0, 9: 0} {
		seqs, err := collect(t, l, context.Background(), "t", after, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(seqs) != want {
			t.Fatalf("after %d: got %v, want %d events", after, seqs, want)
		}
		for i, s := range seqs {
			if s != after+uint64(i)+1 {
				t.Fatalf("after %d: got %v", after, seqs)
			}
		}
	}
}

func testFollowLive(t *testing.T, l eventlog.Log) {
	mustAppend(t, l, "t", 1, working("t", 0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan []uint64)
	go func() {
		seqs, err := collect(t, l, ctx, "t", 0, 100)
		if err != nil {
			t.Error(err)
		}
		done <- seqs
	}()
	for i := uint64(2); i <= 50; i++ {
		mustAppend(t, l, "t", i, working("t", int(i)))
	}
	mustAppend(t, l, "t", 51, completed("t"))
	seqs := <-done
	if len(seqs) != 51 || seqs[50] != 51 {
		t.Fatalf("live subscriber got %d events: %v", len(seqs), seqs)
	}
}

func testSealing(t *testing.T, l eventlog.Log) {
	mustAppend(t, l, "t", 1, working("t", 0))
	mustAppend(t, l, "t", 2, completed("t"))
	if err := l.Append(context.Background(), "t", 3, working("t", 3)); !errors.Is(err, eventlog.ErrSealed) {
		t.Fatalf("append after terminal = %v, want ErrSealed", err)
	}
	// An interrupted state does not seal.
	mustAppend(t, l, "u", 1, &a2a.TaskStatusUpdateEvent{TaskID: "u", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}})
	mustAppend(t, l, "u", 2, working("u", 1))
}

// testBatches appends several events at once: they are numbered in order,
// replayed from inside a batch, followed live, and refused all together.
func testBatches(t *testing.T, l eventlog.Log) {
	ctx := context.Background()
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}
	if err := l.Append(ctx, "t", 1); err != nil {
		t.Fatalf("append of nothing = %v", err)
	}
	if _, err := l.Last(ctx, "t"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("Last after appending nothing = %v, want ErrNotFound", err)
	}
	if err := l.Append(ctx, "t", 1, task, working("t", 1), working("t", 2)); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Last(ctx, "t"); n != 3 || err != nil {
		t.Fatalf("Last = %d, %v, want 3", n, err)
	}
	if err := l.Append(ctx, "t", 3, working("t", 3), working("t", 4)); !errors.Is(err, eventlog.ErrConflict) {
		t.Fatalf("batch at 3 after 3 = %v, want ErrConflict", err)
	}
	if err := l.Append(ctx, "t", 4, working("t", 3), completed("t"), working("t", 5)); !errors.Is(err, eventlog.ErrSealed) {
		t.Fatalf("batch with events after a terminal one = %v, want ErrSealed", err)
	}
	if n, err := l.Last(ctx, "t"); n != 3 || err != nil {
		t.Fatalf("Last after refused batches = %d, %v, want 3 (nothing of them stored)", n, err)
	}
	// A subscriber starting inside the first batch, following the next.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	done := make(chan []uint64)
	go func() {
		seqs, err := collect(t, l, ctx, "t", 2, 100)
		if err != nil {
			t.Error(err)
		}
		done <- seqs
	}()
	if err := l.Append(ctx, "t", 4, working("t", 4), working("t", 5), completed("t")); err != nil {
		t.Fatal(err)
	}
	if seqs := <-done; !slices.Equal(seqs, []uint64{3, 4, 5, 6}) {
		t.Fatalf("subscriber after 2 got %v, want 3 to 6", seqs)
	}
	var states []a2a.TaskState
	for e, err := range l.Subscribe(ctx, "t", 0) {
		if err != nil {
			t.Fatal(err)
		}
		s, _ := a2a.StateOf(e.Event)
		states = append(states, s)
	}
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateWorking, a2a.TaskStateWorking, a2a.TaskStateWorking, a2a.TaskStateCompleted}
	if !slices.Equal(states, want) {
		t.Fatalf("replay: states %v, want %v", states, want)
	}
	if err := l.Append(ctx, "t", 7, working("t", 7)); !errors.Is(err, eventlog.ErrSealed) {
		t.Fatalf("append after a batch ending the task = %v, want ErrSealed", err)
	}
}

func testCancel(t *testing.T, l eventlog.Log) {
	mustAppend(t, l, "t", 1, working("t", 0))
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := collect(t, l, ctx, "t", 1, 100)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it block waiting for event 2
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled subscription ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscription did not end on cancel")
	}
}

func testNotFound(t *testing.T, l eventlog.Log) {
	ctx := context.Background()
	if _, err := collect(t, l, ctx, "nope", 0, 1); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("Subscribe(missing) = %v, want ErrNotFound", err)
	}
	if n, err := l.Last(ctx, "nope"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("Last(missing) = %d, %v, want ErrNotFound", n, err)
	}
	mustAppend(t, l, "t", 1, completed("t"))
	if err := l.Delete(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := collect(t, l, ctx, "t", 0, 1); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("Subscribe after Delete = %v, want ErrNotFound", err)
	}
	if n, err := l.Last(ctx, "t"); !errors.Is(err, eventlog.ErrNotFound) {
		t.Fatalf("Last after Delete = %d, %v, want ErrNotFound", n, err)
	}
	if err := l.Delete(context.Background(), "t"); err != nil {
		t.Fatal(err)
	}
}

func testManySubscribers(t *testing.T, l eventlog.Log) {
	mustAppend(t, l, "t", 1, working("t", 0))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const subs, events = 8, 40
	var wg sync.WaitGroup
	for range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seqs, err := collect(t, l, ctx, "t", 0, 1000)
			if err != nil || len(seqs) != events+1 {
				t.Errorf("subscriber got %d events, err %v", len(seqs), err)
			}
		}()
	}
	for i := uint64(2); i <= events; i++ {
		mustAppend(t, l, "t", i, working("t", int(i)))
	}
	mustAppend(t, l, "t", events+1, completed("t"))
	wg.Wait()
}
