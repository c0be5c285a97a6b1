package taskstore

import (
	"context"
	"fmt"
	"hash/maphash"
	"slices"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/offheap"
)

// Memory is a Store held in process memory. Its zero value is ready to use.
// Each owner's tasks are indexed in List order by state and by context,
// so that a query of one owner costs O(log n + page size) whatever the
// number of tasks: a query of every state merges the states' indexes (a
// page from each of a few), and a query by context reads the context's
// tasks (a context holds few). A query of every owner (Query.Owner "")
// among several owners reads all their matching tasks.
//
// A finished task (in a terminal state) is held packed, outside the Go
// heap (see packed.go): about 200 bytes for the echo agent's, where its
// snapshot and index entries took about a kilobyte of heap. Get and List decode it each
// time they return it, so two reads of a finished task are two equal
// snapshots, not one pointer. A task that cannot be encoded is held as it
// is.
type Memory struct {
	mu      sync.RWMutex
	tasks   map[string]Entry // the tasks held as they are
	done    offheap.Map      // the tasks held packed, by id
	version uint64
	owners  map[string]*shard
	seed    maphash.Seed // of the hashes of context ids
	// buffers are scratch space for packing a task before the lock is
	// taken, so that the lock is held only to copy the bytes in.
	buffers sync.Pool
}

// keptShards is how many owners keep their indexes while they hold no
// task: an owner whose tasks come and go (an agent that keeps no finished
// task) then does not build its indexes anew for each. Past it, an owner's
// indexes go with its last task, so that owners seen once do not pile up.
const keptShards = 1024

// shard indexes one owner's tasks.
type shard struct {
	n int // tasks
	// The tasks of each context, by a hash of its id (Memory.seed): the
	// id itself would be kept for every finished task that is the only
	// one of its context (most of them), and the tasks of contexts
	// whose ids share a hash, rare and harmless, are told apart by
	// their own context ids when listed. Most contexts hold one task,
	// which is kept by id alone (oneTask), without an index of its own
	// (byContext).
	oneTask   map[uint64]string
	byContext map[uint64]*index
	// The tasks of each state.
	byState map[a2a.TaskState]*index
}

func newShard() *shard {
	return &shard{oneTask: make(map[uint64]string), byContext: make(map[uint64]*index), byState: make(map[a2a.TaskState]*index)}
}

// place is where a task is indexed.
type place struct {
	key   ikey
	ctx   uint64 // the hash of its context id
	state a2a.TaskState
}

func (m *Memory) placeOf(t *a2a.Task) place {
	return place{keyOf(CursorOf(t)), maphash.String(m.seed, t.ContextID), t.Status.State}
}

// placeOfRecord is the place of the packed task id.
func (m *Memory) placeOfRecord(id string, r *record) place {
	return place{ikey{r.ns, id}, maphash.Bytes(m.seed, r.ctx), r.state}
}

var _ Store = (*Memory)(nil)

// pack encodes t's record tail if t is to be held packed, or returns nil.
// The buffer goes back with release.
func (m *Memory) pack(t *a2a.Task) *packing {
	p, _ := m.buffers.Get().(*packing)
	if p == nil {
		p = new(packing)
	}
	var ok bool
	if p.tail, p.json, ok = packTask(p.tail[:0], p.json, t); !ok {
		m.release(p)
		return nil
	}
	return p
}

type packing struct{ tail, json []byte }

// release returns p's buffers for reuse, unless they grew large.
func (m *Memory) release(p *packing) {
	if p != nil && cap(p.json) <= 64<<10 {
		m.buffers.Put(p)
	}
}

// storeLocked holds e, packed if p is not nil and there is room, as version
// v of the task.
func (m *Memory) storeLocked(e Entry, v uint64, p *packing) {
	id := e.Task.ID
	if p != nil {
		if b, err := m.done.Set(id, headSize(e.Seq, v, e.Owner)+len(p.tail)); err == nil {
			appendHead(b[:0], e.Seq, v, e.Owner, p.tail)
			return
		}
	}
	m.tasks[id] = Entry{Task: e.Task, Seq: e.Seq, Version: v, Owner: e.Owner}
}

// Create implements Store.
func (m *Memory) Create(_ context.Context, e Entry) (uint64, error) {
	task := e.Task
	p := m.pack(task)
	defer m.release(p)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holdsLocked(task.ID) {
		return 0, fmt.Errorf("%w: %s", ErrExists, task.ID)
	}
	if m.tasks == nil {
		m.tasks = make(map[string]Entry)
		m.owners = make(map[string]*shard)
		m.seed = maphash.MakeSeed()
	}
	sh := m.owners[e.Owner]
	if sh == nil {
		sh = newShard()
		m.owners[e.Owner] = sh
	}
	m.version++
	m.storeLocked(e, m.version, p)
	m.indexLocked(sh, m.placeOf(task))
	return m.version, nil
}

func (m *Memory) holdsLocked(id string) bool {
	_, live := m.tasks[id]
	_, packed := m.done.Get(id)
	return live || packed
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (Entry, error) {
	m.mu.RLock()
	e, ok := m.tasks[id]
	var rec []byte
	if v, packed := m.done.Get(id); packed {
		// Copied, to be decoded once the lock is released.
		rec, ok = slices.Clone(v), true
	}
	m.mu.RUnlock()
	switch {
	case !ok:
		return Entry{}, fmt.Errorf("%w: %s", ErrNotFound, id)
	case rec != nil:
		r := readRecord(rec)
		return r.entry(id)
	}
	return e, nil
}

// Update implements Store. It refuses an entry naming another owner than
// the task's.
func (m *Memory) Update(_ context.Context, next Entry) (uint64, error) {
	task := next.Task
	p := m.pack(task)
	defer m.release(p)
	m.mu.Lock()
	defer m.mu.Unlock()
	var version uint64
	var owner string
	var old place
	e, live := m.tasks[task.ID]
	v, packed := m.done.Get(task.ID)
	switch {
	case live:
		version, owner, old = e.Version, e.Owner, m.placeOf(e.Task)
	case packed:
		r := readRecord(v)
		version, owner, old = r.version, string(r.owner), m.placeOfRecord(task.ID, &r)
	default:
		return 0, fmt.Errorf("%w: %s", ErrNotFound, task.ID)
	}
	switch {
	case version != next.Version:
		return 0, fmt.Errorf("%w: %s is at version %d, not %d", ErrConflict, task.ID, version, next.Version)
	case owner != next.Owner:
		return 0, fmt.Errorf("taskstore: task %s belongs to %q, and an update cannot give it to %q", task.ID, owner, next.Owner)
	}
	if packed {
		m.done.Delete(task.ID)
	}
	delete(m.tasks, task.ID)
	m.version++
	m.storeLocked(Entry{Task: task, Seq: next.Seq, Owner: owner}, m.version, p)
	// A change that leaves the task's place (an artifact update leaves
	// the status, which orders tasks, as it was) leaves the indexes.
	if now := m.placeOf(task); now != old {
		sh := m.owners[owner]
		sh.unindex(old)
		m.indexLocked(sh, now)
	}
	return m.version, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var owner string
	var at place
	if e, ok := m.tasks[id]; ok {
		delete(m.tasks, id)
		owner, at = e.Owner, m.placeOf(e.Task)
	} else if v, ok := m.done.Get(id); ok {
		r := readRecord(v)
		owner, at = string(r.owner), m.placeOfRecord(id, &r)
		m.done.Delete(id)
	} else {
		return nil
	}
	sh := m.owners[owner]
	sh.unindex(at)
	if sh.n == 0 && len(m.owners) > keptShards {
		delete(m.owners, owner)
	}
	return nil
}

// indexLocked adds a task, which is held, to every index of sh it belongs
// in.
func (m *Memory) indexLocked(sh *shard, p place) {
	sh.n++
	if ix := sh.byContext[p.ctx]; ix != nil {
		ix.insert(p.key)
	} else if id, ok := sh.oneTask[p.ctx]; ok {
		ix = new(index)
		ix.insert(m.keyLocked(id))
		ix.insert(p.key)
		delete(sh.oneTask, p.ctx)
		sh.byContext[p.ctx] = ix
	} else {
		sh.oneTask[p.ctx] = p.key.id
	}
	ix := sh.byState[p.state]
	if ix == nil {
		ix = new(index)
		sh.byState[p.state] = ix
	}
	ix.insert(p.key)
}

// unindex removes a task from every index it is in.
func (sh *shard) unindex(p place) {
	sh.n--
	if ix := sh.byContext[p.ctx]; ix != nil {
		if ix.remove(p.key); ix.len() == 0 {
			delete(sh.byContext, p.ctx)
		}
	} else if sh.oneTask[p.ctx] == p.key.id {
		delete(sh.oneTask, p.ctx)
	}
	if ix := sh.byState[p.state]; ix != nil {
		ix.remove(p.key) // there are few states: their indexes stay
	}
}

// keyLocked returns the key of a task held.
func (m *Memory) keyLocked(id string) ikey {
	if e, ok := m.tasks[id]; ok {
		return keyOf(CursorOf(e.Task))
	}
	v, _ := m.done.Get(id)
	r := readRecord(v)
	return ikey{r.ns, id}
}

// matchesLocked reports whether the task id, which is held, is of the
// context and (unless "") state.
func (m *Memory) matchesLocked(id, ctx string, state a2a.TaskState) bool {
	if e, ok := m.tasks[id]; ok {
		return e.Task.ContextID == ctx && (state == "" || e.Task.Status.State == state)
	}
	v, _ := m.done.Get(id)
	r := readRecord(v)
	return string(r.ctx) == ctx && (state == "" || r.state == state)
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
	keys, total, more := m.listKeysLocked(&q, after)
	page, recs := m.resolveLocked(keys, total, more)
	m.mu.RUnlock()
	for i, rec := range recs {
		if rec == nil {
			continue
		}
		r := readRecord(rec)
		e, err := r.entry(keys[i].id)
		if err != nil {
			return Page{}, err
		}
		page.Tasks[i] = e.Task
	}
	return page, nil
}

// listKeysLocked finds the keys of a page of q's tasks (after after), the
// number of tasks that match and whether more follow the page.
func (m *Memory) listKeysLocked(q *Query, after *Cursor) (keys []ikey, total int, more bool) {
	var sh *shard
	switch {
	case q.Owner != "":
		sh = m.owners[q.Owner]
	case len(m.owners) == 1:
		for _, sh = range m.owners {
		}
	case len(m.owners) > 1:
		return m.scanLocked(q, after)
	}
	if sh == nil {
		return nil, 0, false
	}
	since := q.UpdatedAfter.UnixNano()
	recent := func(k ikey) bool { return q.UpdatedAfter.IsZero() || k.ns >= since }
	size := max(q.PageSize, 1)
	if q.ContextID == "" {
		var ixs []*index
		if q.State != "" {
			ixs = []*index{sh.byState[q.State]}
		} else {
			for _, ix := range sh.byState {
				ixs = append(ixs, ix)
			}
		}
		return pageOf(ixs, after, recent, keyOf(Cursor{Time: q.UpdatedAfter}), q.UpdatedAfter.IsZero(), size)
	}
	// A context's index may hold another context's tasks (whose id has
	// the same hash), and is not by state: each task is checked.
	h := maphash.String(m.seed, q.ContextID)
	ix := sh.byContext[h]
	if ix == nil {
		id, ok := sh.oneTask[h]
		if !ok {
			return nil, 0, false
		}
		ix = new(index)
		ix.insert(m.keyLocked(id))
	}
	match := func(k ikey) bool { return m.matchesLocked(k.id, q.ContextID, q.State) }
	ix.ascend(nil, func(k ikey) bool {
		if recent(k) && match(k) {
			total++
		}
		return recent(k)
	})
	ix.ascend(after, func(k ikey) bool {
		if !recent(k) {
			return false
		}
		if !match(k) {
			return true
		}
		if len(keys) == size {
			more = true
			return false
		}
		keys = append(keys, k)
		return true
	})
	return keys, total, more
}

// pageOf returns the keys of a page of size after after, newest first, of
// the tasks in any of ixs (which hold a task each at most) that are recent
// (updated at or after since, unless all are), how many there are, and
// whether more follow the page.
func pageOf(ixs []*index, after *Cursor, recent func(ikey) bool, since ikey, all bool, size int) (keys []ikey, total int, more bool) {
	// Up to a page and one from each, merged.
	pages := make([][]ikey, 0, len(ixs))
	for _, ix := range ixs {
		if ix == nil {
			continue
		}
		if all {
			total += ix.len()
		} else {
			// Newest first: the tasks updated at or after the time
			// come before every other.
			total += ix.newerThan(since)
		}
		page := make([]ikey, 0, min(size+1, ix.len()))
		ix.ascend(after, func(k ikey) bool {
			if !recent(k) {
				return false
			}
			page = append(page, k)
			return len(page) <= size
		})
		pages = append(pages, page)
	}
	if len(pages) == 1 {
		keys = pages[0]
	}
	for len(pages) > 1 && len(keys) <= size {
		newest := -1
		for i, p := range pages {
			if len(p) > 0 && (newest < 0 || pages[newest][0].less(p[0])) {
				newest = i
			}
		}
		if newest < 0 {
			break
		}
		keys = append(keys, pages[newest][0])
		pages[newest] = pages[newest][1:]
	}
	if len(keys) > size {
		return keys[:size], total, true
	}
	return keys, total, false
}

// scanLocked is listKeys over every owner's tasks, each checked.
func (m *Memory) scanLocked(q *Query, after *Cursor) ([]ikey, int, bool) {
	var matched []ikey
	for _, e := range m.tasks {
		if q.Matches(e) {
			matched = append(matched, keyOf(CursorOf(e.Task)))
		}
	}
	m.done.All(func(id, v []byte) bool {
		if r := readRecord(v); r.matches(q) {
			matched = append(matched, ikey{r.ns, string(id)})
		}
		return true
	})
	// Newest first.
	slices.SortFunc(matched, func(a, b ikey) int {
		switch {
		case b.less(a):
			return -1
		case a.less(b):
			return 1
		}
		return 0
	})
	start := 0
	if after != nil {
		k := keyOf(*after)
		start, _ = slices.BinarySearchFunc(matched, k, func(e, k ikey) int {
			if e.less(k) {
				return 1 // after the cursor
			}
			return -1
		})
	}
	end := min(start+max(q.PageSize, 1), len(matched))
	return matched[start:end], len(matched), end < len(matched)
}

// resolveLocked makes the page of the tasks under keys, but for those
// held packed: their records are copied, to be decoded once the lock is
// released, into the page's Tasks at the same place.
func (m *Memory) resolveLocked(keys []ikey, total int, more bool) (page Page, recs [][]byte) {
	page = Page{Total: total, Tasks: make([]*a2a.Task, len(keys))}
	for i, k := range keys {
		if e, ok := m.tasks[k.id]; ok {
			page.Tasks[i] = e.Task
			continue
		}
		if recs == nil {
			recs = make([][]byte, len(keys))
		}
		v, _ := m.done.Get(k.id)
		recs[i] = slices.Clone(v)
	}
	if more {
		last := keys[len(keys)-1]
		page.NextPageToken = Cursor{Time: time.Unix(0, last.ns).UTC(), ID: last.id}.Token()
	}
	return page, recs
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
