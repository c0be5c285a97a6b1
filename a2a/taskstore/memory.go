package taskstore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
)

// Memory is a Store held in process memory. Its zero value is ready to use.
type Memory struct {
	mu      sync.RWMutex
	tasks   map[string]Entry
	version uint64
}

var _ Store = (*Memory)(nil)

// Create implements Store.
func (m *Memory) Create(_ context.Context, task *a2a.Task, seq uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[task.ID]; ok {
		return 0, fmt.Errorf("%w: %s", ErrExists, task.ID)
	}
	if m.tasks == nil {
		m.tasks = make(map[string]Entry)
	}
	m.version++
	m.tasks[task.ID] = Entry{Task: task, Seq: seq, Version: m.version}
	return m.version, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (Entry, error) {
	m.mu.RLock()
	e, ok := m.tasks[id]
	m.mu.RUnlock()
	if !ok {
		return Entry{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return e, nil
}

// Update implements Store.
func (m *Memory) Update(_ context.Context, task *a2a.Task, seq, prev uint64) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.tasks[task.ID]
	switch {
	case !ok:
		return 0, fmt.Errorf("%w: %s", ErrNotFound, task.ID)
	case e.Version != prev:
		return 0, fmt.Errorf("%w: %s is at version %d, not %d", ErrConflict, task.ID, e.Version, prev)
	}
	m.version++
	m.tasks[task.ID] = Entry{Task: task, Seq: seq, Version: m.version}
	return m.version, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	delete(m.tasks, id)
	m.mu.Unlock()
	return nil
}

// List implements Store. It scans every task, so it suits stores of up to
// some hundred thousand tasks; larger deployments want an indexed store.
func (m *Memory) List(_ context.Context, q Query) (Page, error) {
	var after *Cursor
	if q.PageToken != "" {
		c, err := ParseToken(q.PageToken)
		if err != nil {
			return Page{}, err
		}
		after = &c
	}
	var matched []*a2a.Task
	m.mu.RLock()
	for _, e := range m.tasks {
		if q.Matches(e.Task) {
			matched = append(matched, e.Task)
		}
	}
	m.mu.RUnlock()
	return Paginate(matched, after, q.PageSize), nil
}

// Paginate sorts matching tasks into List order and cuts the page that
// follows the cursor (or the first page when after is nil).
func Paginate(matched []*a2a.Task, after *Cursor, pageSize int) Page {
	slices.SortFunc(matched, func(a, b *a2a.Task) int {
		ca, cb := CursorOf(a), CursorOf(b)
		switch {
		case ca.Before(cb):
			return -1
		case cb.Before(ca):
			return 1
		}
		return 0
	})
	page := Page{Total: len(matched)}
	start := 0
	if after != nil {
		start, _ = slices.BinarySearchFunc(matched, *after, func(t *a2a.Task, c Cursor) int {
			if c.Before(CursorOf(t)) {
				return 1
			}
			return -1
		})
	}
	end := min(start+max(pageSize, 1), len(matched))
	page.Tasks = matched[start:end]
	if end < len(matched) {
		page.NextPageToken = CursorOf(matched[end-1]).Token()
	}
	return page
}
