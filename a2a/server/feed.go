package server

import (
	"context"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
)

// feed holds the events a run has committed, for the streams that follow
// the run in this process (its own SendStreamingMessage): they need not
// read the events back from the log. Its zero value is ready to use.
type feed struct {
	mu      sync.Mutex
	entries []eventlog.Entry // append-only
	done    bool             // the run has ended
	err     error            // why the run's task was never stored, if it was not
	// wake, made by the first follower that waits, is closed by the next
	// change to wake every waiting follower.
	wake chan struct{}
}

// add passes on events committed as numbers first, first+1, ….
func (f *feed) add(first uint64, evs []a2a.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, ev := range evs {
		f.entries = append(f.entries, eventlog.Entry{Seq: first + uint64(i), Event: ev})
	}
	f.wakeLocked()
}

// end marks the run over; err says why its task was never stored.
func (f *feed) end(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done, f.err = true, err
	f.wakeLocked()
}

func (f *feed) wakeLocked() {
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// followRun yields the events run r commits after seq after until one of
// them settles the task. If the run ends short of that (another writer
// ended the task, the run gave up), or events of the task were committed by
// another writer in between, the task's log has the rest.
func (h *Handler) followRun(ctx context.Context, r *run, after uint64, yield func(eventlog.Entry, error) bool) {
	f := &r.feed
	next := 0 // f.entries[:next] have been seen
	for {
		f.mu.Lock()
		// Append-only: this view stays valid after the lock is released.
		batch := f.entries[next:len(f.entries):len(f.entries)]
		next = len(f.entries)
		done, err := f.done, f.err
		var wake chan struct{}
		if len(batch) == 0 && !done {
			if f.wake == nil {
				f.wake = make(chan struct{})
			}
			wake = f.wake
		}
		f.mu.Unlock()
		for _, e := range batch {
			switch {
			case e.Seq <= after:
				continue
			case e.Seq > after+1:
				h.follow(ctx, r.req.TaskID, after, yield)
				return
			}
			if !yield(e, nil) {
				return
			}
			after = e.Seq
			if s, ok := a2a.StateOf(e.Event); ok && s.Settled() {
				return
			}
		}
		switch {
		case len(batch) > 0:
			continue
		case done && err != nil:
			yield(eventlog.Entry{}, err)
			return
		case done:
			h.follow(ctx, r.req.TaskID, after, yield)
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		}
	}
}
