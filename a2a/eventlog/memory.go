package eventlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/offheap"
	"github.com/a2amesh/a2amesh/a2a/internal/packjson"
)

// Memory is a Log held in process memory. Its zero value is ready to use.
//
// A sealed log is kept for replay (a stream cut just before the end
// resumes from it) but is read rarely, so it is held packed, outside the
// Go heap: its events' JSON, packed together by packjson, about 200 bytes
// for the echo agent's three events, where they took about half a
// kilobyte of heap. A replay decodes them each time: new events, equal to those
// appended. A log whose events cannot be encoded is held as it is.
type Memory struct {
	mu     sync.RWMutex
	tasks  map[string]*taskLog // the logs held as they are
	sealed offheap.Map         // the sealed logs held packed (see pack), by task id
	// buffers are scratch space for packing a log (*packing).
	buffers sync.Pool
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

// getPacked returns a copy of the task's packed log, or nil.
func (m *Memory) getPacked(taskID string) []byte {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if v, ok := m.sealed.Get(taskID); ok {
		return slices.Clone(v)
	}
	return nil
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
		m.mu.Lock()
		if _, packed := m.sealed.Get(taskID); packed {
			m.mu.Unlock()
			return fmt.Errorf("%w: task %s", ErrSealed, taskID)
		}
		if l = m.tasks[taskID]; l == nil {
			if seq != 1 {
				m.mu.Unlock()
				return fmt.Errorf("%w: task %s has no events, cannot append event %d", ErrConflict, taskID, seq)
			}
			if m.tasks == nil {
				m.tasks = make(map[string]*taskLog)
			}
			l = new(taskLog)
			l.entries = l.first[:0]
			m.tasks[taskID] = l
		}
		m.mu.Unlock()
	}
	l.mu.Lock()
	switch {
	case l.sealed:
		l.mu.Unlock()
		return fmt.Errorf("%w: task %s", ErrSealed, taskID)
	case seq != uint64(len(l.entries))+1:
		l.mu.Unlock()
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
	sealed, entries := l.sealed, l.entries
	l.mu.Unlock()
	if sealed {
		// The entries change no more: they are packed without the log's
		// lock, which subscribers take.
		p, _ := m.buffers.Get().(*packing)
		if p == nil {
			p = new(packing)
		}
		if p.pack(taskID, entries) {
			m.hold(taskID, l, p.rec)
		}
		if cap(p.json) <= 64<<10 && cap(p.rec) <= 64<<10 {
			m.buffers.Put(p)
		}
	}
	return nil
}

// A sealed log is held as bytes under the task's id in Memory.sealed:
//
//	the number of events   a uvarint
//	the events             each one's 1.0 JSON (a StreamResponse), packed
//	                       together by packjson, knowing the task id

// packing makes the record of a sealed log, in buffers kept for the
// next.
type packing struct {
	json, rec []byte
	docs      [][]byte
	ends      []int
}

// pack makes p.rec the record of a sealed log's entries; it fails if one
// of them cannot be encoded.
func (p *packing) pack(taskID string, entries []Entry) bool {
	p.json, p.ends = p.json[:0], p.ends[:0]
	for _, e := range entries {
		var err error
		if p.json, err = a2a.AppendJSON(p.json, a2a.Wrap(e.Event)); err != nil {
			return false
		}
		p.ends = append(p.ends, len(p.json))
	}
	p.docs = p.docs[:0]
	start := 0
	for _, end := range p.ends {
		p.docs = append(p.docs, p.json[start:end])
		start = end
	}
	p.rec = binary.AppendUvarint(p.rec[:0], uint64(len(entries)))
	p.rec = packjson.Pack(p.rec, []string{taskID}, p.docs...)
	return true
}

// hold replaces the sealed log l of the task by its record, unless the log
// has been deleted (and maybe begun again) meanwhile. Subscribers reading
// l go on reading it.
func (m *Memory) hold(taskID string, l *taskLog, rec []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks[taskID] != l {
		return
	}
	b, err := m.sealed.Set(taskID, len(rec))
	if err != nil {
		return // kept as it is
	}
	copy(b, rec)
	delete(m.tasks, taskID)
}

// readRecord reads a record hold wrote.
func readRecord(rec []byte) (count uint64, packed []byte) {
	count, w := binary.Uvarint(rec)
	return count, rec[w:]
}

// replay yields the entries of a packed log numbered above after.
func replay(taskID string, rec []byte, after uint64, yield func(Entry, error) bool) {
	count, packed := readRecord(rec)
	docs, err := packjson.Unpack(packed, []string{taskID})
	if err == nil && uint64(len(docs)) != count {
		err = fmt.Errorf("%d events, not %d", len(docs), count)
	}
	if err != nil {
		yield(Entry{}, fmt.Errorf("eventlog: the log of task %s is held damaged: %w", taskID, err))
		return
	}
	for i := after; i < count; i++ {
		var r a2a.StreamResponse
		err := a2a.Unmarshal(docs[i], &r)
		var ev a2a.Event
		if err == nil {
			ev, err = r.Event()
		}
		if err != nil {
			yield(Entry{}, fmt.Errorf("eventlog: event %d of task %s is held damaged: %w", i+1, taskID, err))
			return
		}
		if !yield(Entry{Seq: i + 1, Event: ev}, nil) {
			return
		}
	}
}

// Subscribe implements Log.
func (m *Memory) Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		l := m.get(taskID)
		if l == nil {
			if rec := m.getPacked(taskID); rec != nil {
				replay(taskID, rec, after, yield)
				return
			}
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
	m.mu.RLock()
	l := m.tasks[taskID]
	v, packed := m.sealed.Get(taskID)
	var count uint64
	if packed {
		count, _ = readRecord(v)
	}
	m.mu.RUnlock()
	switch {
	case packed:
		return count, nil
	case l == nil:
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
	m.sealed.Delete(taskID)
	m.mu.Unlock()
	return nil
}
