package taskstore

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
)

// Memory is a Store held in process memory. Its zero value is ready to use.
// Each owner's tasks are indexed in List order overall, by context and by
// state, so that a query of one owner costs O(log n + page size) whatever
// the number of tasks; a query by context and state reads the context's
// tasks (a context holds few). A query of every owner (Query.Owner "")
// among several owners reads all their matching tasks.
type Memory struct {
	mu      sync.RWMutex
	tasks   map[string]Entry
	version uint64
	owners  map[string]*shard
}

// keptShards is how many owners keep their indexes while they hold no
// task: an owner whose tasks come and go (an agent that keeps no finished
// task) then does not build its indexes anew for each. Past it, an owner's
// indexes go with its last task, so that owners seen once do not pile up.
const keptShards = 1024

// shard indexes one owner's tasks.
type shard struct {
	all index
	// The tasks of each context, and of each state.
	byContext map[string]contextTasks
	byState   map[a2a.TaskState]*index
}

// contextTasks are a context's tasks: most contexts hold one task, which
// is kept without an index of its own (an allocation per task saved).
type contextTasks struct {
	one entry  // the context's task, while it has had only one
	ix  *index // its tasks, once it has had more
}

var _ Store = (*Memory)(nil)

// Create implements Store.
func (m *Memory) Create(_ context.Context, e Entry) (uint64, error) {
	task := e.Task
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[task.ID]; ok {
		return 0, fmt.Errorf("%w: %s", ErrExists, task.ID)
	}
	if m.tasks == nil {
		m.tasks = make(map[string]Entry)
		m.owners = make(map[string]*shard)
	}
	sh := m.owners[e.Owner]
	if sh == nil {
		sh = &shard{byContext: make(map[string]contextTasks), byState: make(map[a2a.TaskState]*index)}
		m.owners[e.Owner] = sh
	}
	m.version++
	m.tasks[task.ID] = Entry{Task: task, Seq: e.Seq, Version: m.version, Owner: e.Owner}
	sh.index(task)
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

// Update implements Store. It refuses an entry naming another owner than
// the task's.
func (m *Memory) Update(_ context.Context, next Entry) (uint64, error) {
	task := next.Task
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.tasks[task.ID]
	switch {
	case !ok:
		return 0, fmt.Errorf("%w: %s", ErrNotFound, task.ID)
	case e.Version != next.Version:
		return 0, fmt.Errorf("%w: %s is at version %d, not %d", ErrConflict, task.ID, e.Version, next.Version)
	case e.Owner != next.Owner:
		return 0, fmt.Errorf("taskstore: task %s belongs to %q, and an update cannot give it to %q", task.ID, e.Owner, next.Owner)
	}
	m.version++
	m.tasks[task.ID] = Entry{Task: task, Seq: next.Seq, Version: m.version, Owner: e.Owner}
	sh := m.owners[e.Owner]
	old := e.Task
	if old.ContextID == task.ContextID && old.Status.State == task.Status.State && CursorOf(old).Equal(CursorOf(task)) {
		// The same place in every index (an artifact update leaves the
		// status, which orders tasks, as it was): only the snapshot
		// changes.
		sh.reindex(task)
	} else {
		sh.unindex(old)
		sh.index(task)
	}
	return m.version, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.tasks[id]; ok {
		delete(m.tasks, id)
		sh := m.owners[e.Owner]
		sh.unindex(e.Task)
		if sh.all.len() == 0 && len(m.owners) > keptShards {
			delete(m.owners, e.Owner)
		}
	}
	return nil
}

// index adds t to every index it belongs in.
func (sh *shard) index(t *a2a.Task) {
	key := keyOf(CursorOf(t))
	sh.all.insert(key, t)
	switch ct, ok := sh.byContext[t.ContextID]; {
	case !ok:
		sh.byContext[t.ContextID] = contextTasks{one: entry{key, t}}
	case ct.ix == nil:
		ix := new(index)
		ix.insert(ct.one.key, ct.one.task)
		ix.insert(key, t)
		sh.byContext[t.ContextID] = contextTasks{ix: ix}
	default:
		ct.ix.insert(key, t)
	}
	ix := sh.byState[t.Status.State]
	if ix == nil {
		ix = new(index)
		sh.byState[t.Status.State] = ix
	}
	ix.insert(key, t)
}

// reindex replaces the snapshot of t in the indexes, where t's key, context
// and state are unchanged.
func (sh *shard) reindex(t *a2a.Task) {
	key := keyOf(CursorOf(t))
	sh.all.set(key, t)
	if ct := sh.byContext[t.ContextID]; ct.ix != nil {
		ct.ix.set(key, t)
	} else {
		sh.byContext[t.ContextID] = contextTasks{one: entry{key, t}}
	}
	sh.byState[t.Status.State].set(key, t)
}

// unindex removes t from every index it is in.
func (sh *shard) unindex(t *a2a.Task) {
	key := keyOf(CursorOf(t))
	sh.all.remove(key)
	if ct, ok := sh.byContext[t.ContextID]; ok {
		if ct.ix != nil {
			ct.ix.remove(key)
		}
		if ct.ix == nil && ct.one.key == key || ct.ix != nil && ct.ix.len() == 0 {
			delete(sh.byContext, t.ContextID)
		}
	}
	if ix := sh.byState[t.Status.State]; ix != nil {
		ix.remove(key) // there are few states: their indexes stay
	}
}

// List implements Store.
func (m *Memory) List(_ context.Context, q Query) (Page, error) {
	var after *Cursor
	if q.PageToken != "" {
		c, err := ParseToken(q.PageToken)
		if err != nil {
			return Page{}, err
		}
		after = &c
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	var sh *shard
	switch {
	case q.Owner != "":
		sh = m.owners[q.Owner]
	case len(m.owners) == 1:
		for _, sh = range m.owners {
		}
	case len(m.owners) > 1:
		var matched []*a2a.Task
		for _, e := range m.tasks {
			if q.Matches(e) {
				matched = append(matched, e.Task)
			}
		}
		return Paginate(matched, after, q.PageSize), nil
	}
	if sh == nil {
		return Page{}, nil
	}
	var ix *index
	filterState := false
	switch {
	case q.ContextID != "":
		ct, ok := sh.byContext[q.ContextID]
		if ix, filterState = ct.ix, q.State != ""; ok && ix == nil {
			ix = new(index)
			ix.insert(ct.one.key, ct.one.task)
		}
	case q.State != "":
		ix = sh.byState[q.State]
	default:
		ix = &sh.all
	}
	if ix == nil {
		return Page{}, nil
	}
	recent := func(t *a2a.Task) bool { return q.UpdatedAfter.IsZero() || !t.Status.Timestamp.Before(q.UpdatedAfter) }
	var page Page
	switch {
	case filterState:
		ix.ascend(nil, func(t *a2a.Task) bool {
			if t.Status.State == q.State && recent(t) {
				page.Total++
			}
			return recent(t)
		})
	case q.UpdatedAfter.IsZero():
		page.Total = ix.len()
	default:
		// Newest first: the tasks updated at or after the time come
		// before every other.
		page.Total = ix.newerThan(keyOf(Cursor{Time: q.UpdatedAfter}))
	}
	size := max(q.PageSize, 1)
	more := false
	ix.ascend(after, func(t *a2a.Task) bool {
		if !recent(t) {
			return false
		}
		if filterState && t.Status.State != q.State {
			return true
		}
		if len(page.Tasks) == size {
			more = true
			return false
		}
		page.Tasks = append(page.Tasks, t)
		return true
	})
	if more {
		page.NextPageToken = CursorOf(page.Tasks[len(page.Tasks)-1]).Token()
	}
	return page, nil
}

// Paginate sorts matching tasks into List order and cuts the page that
// follows the cursor (or the first page when after is nil), for stores
// that find the matching tasks by scanning.
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
