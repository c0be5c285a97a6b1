package eventlog

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
)

// Memory is a Log held in process memory. Its zero value is ready to use.
type Memory struct {
	mu    sync.RWMutex
	tasks map[string]*taskLog
}

var _ Log = (*Memory)(nil)

type taskLog struct {
	mu      sync.Mutex
	entries []Entry // entries[i].Seq == i+1
	// first holds the first entries, so that a short task's log is one
	// allocation rather than two.
	first  [4]Entry
	sealed bool
	// wake, made by the first subscriber that waits, is closed by the next
	// append to wake every waiting subscriber. Most tasks never have a
	// waiting subscriber, so most never make one.
	wake chan struct{}
}

func (m *Memory) get(taskID string) *taskLog {
	m.mu.RLock()
	l := m.tasks[taskID]
	m.mu.RUnlock()
	return l
}

// Append implements Log.
func (m *Memory) Append(_ context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := CheckBatch(taskID, seq, events); err != nil {
		return err
	}
	l := m.get(taskID)
	if l == nil {
		if seq != 1 {
			return fmt.Errorf("%w: task %s has no events, cannot append event %d", ErrConflict, taskID, seq)
		}
		m.mu.Lock()
		if m.tasks == nil {
			m.tasks = make(map[string]*taskLog)
		}
		if l = m.tasks[taskID]; l == nil {
			l = new(taskLog)
			l.entries = l.first[:0]
			m.tasks[taskID] = l
		}
		m.mu.Unlock()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.sealed:
		return fmt.Errorf("%w: task %s", ErrSealed, taskID)
	case seq != uint64(len(l.entries))+1:
		return fmt.Errorf("%w: task %s is at event %d, cannot append event %d", ErrConflict, taskID, len(l.entries), seq)
	}
	for i, ev := range events {
		l.entries = append(l.entries, Entry{Seq: seq + uint64(i), Event: ev})
	}
	l.sealed = Seals(events[len(events)-1])
	if l.wake != nil {
		close(l.wake)
		l.wake = nil
	}
	return nil
}

// Subscribe implements Log.
func (m *Memory) Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		l := m.get(taskID)
		if l == nil {
			yield(Entry{}, fmt.Errorf("%w: %s", ErrNotFound, taskID))
			return
		}
		next := after // the log's first next entries have been yielded (or skipped)
		for {
			l.mu.Lock()
			total := uint64(len(l.entries))
			var batch []Entry
			if next < total {
				// The slice is append-only, so this view stays valid
				// after the lock is released.
				batch = l.entries[next:total:total]
				next = total
			}
			sealed := l.sealed
			if len(batch) == 0 && !sealed && l.wake == nil {
				l.wake = make(chan struct{})
			}
			wake := l.wake
			l.mu.Unlock()
			for _, e := range batch {
				if !yield(e, nil) {
					return
				}
			}
			switch {
			case len(batch) > 0:
				continue // look again before sleeping: more may have come
			case sealed:
				return
			}
			select {
			case <-wake:
			case <-ctx.Done():
				yield(Entry{}, ctx.Err())
				return
			}
		}
	}
}

// Last implements Log.
func (m *Memory) Last(_ context.Context, taskID string) (uint64, error) {
	l := m.get(taskID)
	if l == nil {
		return 0, fmt.Errorf("%w: %s", ErrNotFound, taskID)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return uint64(len(l.entries)), nil
}

// Delete implements Log.
func (m *Memory) Delete(_ context.Context, taskID string) error {
	m.mu.Lock()
	delete(m.tasks, taskID)
	m.mu.Unlock()
	return nil
}
