package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// TaskStoreConfig configures a TaskStore.
type TaskStoreConfig struct {
	// Log is the log of the agent's tasks, whose messages hold their
	// snapshots; the store is its namespace's. Required.
	Log *Log
	// Bucket is the KV bucket of snapshots written by a2amesh builds that
	// kept them apart from the log; its default name is TasksBucket. The
	// store reads a task there when the log has no snapshot of it, and
	// never writes one there. Bucket.TTL is also how long a snapshot of an
	// unfinished task is kept (0: until the task ends or is deleted).
	Bucket BucketConfig
	// KeepEnded is how long a task is kept after it ends: the message that
	// ends it has this TTL, and the task is gone when it runs out, whichever
	// replica wrote it and whether or not that replica still runs. It is
	// at most the events stream's MaxAge, and 0 means that: an ended task
	// is kept as long as events are. Keeping ended tasks as long as events
	// also costs the NATS server the least, since it then removes them in
	// order, with the events. (An A2A server on these stores need not
	// evict tasks itself: give it a negative server.Config.Retention.)
	KeepEnded time.Duration
}

// TaskStore is a taskstore.Store whose snapshots live in the log of their
// tasks, so that every replica of an agent reads and writes the same tasks
// and a server's commit, its events and the snapshot they lead to, is one
// acknowledged JetStream write (Commit). Every message a TaskStore writes
// carries the task's snapshot after its events (the record {"seq": N,
// "owner": …, "task": <the task's 1.0 JSON>}); a task's version is the
// stream sequence of its last message, which a write expects (the
// stream's compare-and-swap). Get reads the last message; List, the last
// message of each of the namespace's tasks.
//
// Retention: a message that leaves its task unfinished never expires
// (Bucket.TTL, when set, is its TTL), so an unfinished task and its whole
// log are kept whatever the events stream's age limit; the message that
// ends a task replaces its others and lives KeepEnded. A message must fit
// the NATS server's max_payload (1 MiB by default), which bounds how much
// history and artifacts one task can carry: writes refuse a larger one with
// ErrTooLarge.
type TaskStore struct {
	log *Log
	// kv holds the snapshots of builds that wrote them apart from the log.
	kv        jetstream.KeyValue
	nc        *nats.Conn
	keepEnded string // the Nats-TTL of a message that ends its task
	keepLive  string // and of one that leaves it unfinished
	// prefix is the namespace's key token and the dot before a task's.
	prefix string
}

var (
	_ taskstore.Store     = (*TaskStore)(nil)
	_ taskstore.Committer = (*TaskStore)(nil)
)

// deleteMarkerTTL is how long the marker a Delete leaves in the bucket
// stays. Without one, markers would pile up for every task ever deleted.
const deleteMarkerTTL = time.Minute

// NewTaskStore creates the bucket, or updates its configuration, and
// returns the store of cfg.Log's namespace. Every replica may call it at
// once.
func NewTaskStore(ctx context.Context, js jetstream.JetStream, cfg TaskStoreConfig) (*TaskStore, error) {
	if cfg.Log == nil {
		return nil, errors.New("natsstore: a task store needs a log")
	}
	// ttlKeys lets Delete give its marker a TTL (deleteMarkerTTL).
	kv, err := ensureKV(ctx, js, TasksBucket, cfg.Bucket, "a2amesh task snapshots of earlier builds: <namespace>.<task id>", true)
	if err != nil {
		return nil, err
	}
	if err := withoutExpiryMarkers(ctx, js, kv.Bucket()); err != nil {
		return nil, err
	}
	if cfg.KeepEnded < 0 || cfg.KeepEnded > 0 && cfg.KeepEnded < time.Second {
		return nil, fmt.Errorf("natsstore: task store: KeepEnded %v is not 0 or at least a second (the smallest JetStream TTL)", cfg.KeepEnded)
	}
	keepEnded := msgTTL(cfg.KeepEnded)
	if cfg.KeepEnded == 0 || cfg.KeepEnded >= cfg.Log.maxAge {
		// The stream's age limit removes the message as soon: left to
		// it, which removes messages in order, the server spends far less
		// than on a TTL, which removes them one by one (a tombstone each).
		keepEnded = ""
	}
	return &TaskStore{log: cfg.Log, kv: kv, nc: js.Conn(), keepEnded: keepEnded, keepLive: msgTTL(cfg.Bucket.TTL),
		prefix: keyToken(cfg.Log.ns) + "."}, nil
}

// msgTTL is a Nats-TTL header's value: d, or never for 0.
func msgTTL(d time.Duration) string {
	if d <= 0 {
		return "never"
	}
	return d.String()
}

func (s *TaskStore) key(id string) string { return s.prefix + keyToken(id) }

// Events returns the log the store's commits append to.
func (s *TaskStore) Events() eventlog.Log { return s.log }

// Create implements taskstore.Store.
func (s *TaskStore) Create(ctx context.Context, e taskstore.Entry) (uint64, error) {
	e.Version = 0
	return s.Commit(ctx, e)
}

// Update implements taskstore.Store. It writes e.Owner as the task's
// owner without reading the stored one: the caller's entry must be one Get
// returned, or made from one.
func (s *TaskStore) Update(ctx context.Context, e taskstore.Entry) (uint64, error) {
	if e.Version == 0 {
		// Only a snapshot of an earlier build, in the bucket, has no
		// message: the update moves it to the log.
		if _, err := s.legacy(ctx, e.Task.ID); err != nil {
			return 0, err
		}
		v, err := s.Commit(ctx, e)
		if errors.Is(err, taskstore.ErrExists) {
			err = fmt.Errorf("%w: %s changed since it was read", taskstore.ErrConflict, e.Task.ID)
		}
		return v, err
	}
	return s.Commit(ctx, e)
}

// Commit implements taskstore.Committer: the events, numbered up to e.Seq,
// and the snapshot e after them, in one message of the task's log.
func (s *TaskStore) Commit(ctx context.Context, e taskstore.Entry, events ...a2a.Event) (uint64, error) {
	if uint64(len(events)) > e.Seq {
		return 0, fmt.Errorf("natsstore: task %s: %d events cannot lead to event %d", e.Task.ID, len(events), e.Seq)
	}
	if len(events) > 0 {
		if err := eventlog.CheckBatch(e.Task.ID, e.Seq+1-uint64(len(events)), events); err != nil {
			return 0, err
		}
	}
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return 0, err
	}
	defer cancel()
	rec, err := encodeRecord(e)
	if err != nil {
		return 0, err
	}
	ttl := s.keepLive
	if e.Task.Status.State.Terminal() {
		ttl = s.keepEnded
	}
	return s.log.commit(ctx, e, events, rec, ttl)
}

// Get implements taskstore.Store. The task is decoded afresh on every
// call. Its version is the stream sequence of the task's last message; if
// that message holds no snapshot (events a Log appended alone), the
// entry is the latest snapshot, and its Seq tells which events are past it.
func (s *TaskStore) Get(ctx context.Context, id string) (taskstore.Entry, error) {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return taskstore.Entry{}, err
	}
	defer cancel()
	last, err := s.log.last(ctx, s.log.subject(id))
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		return s.legacy(ctx, id)
	case err != nil:
		return taskstore.Entry{}, fmt.Errorf("natsstore: task %s: %w", id, unanswered(ctx, err))
	}
	rec := last.snapshot
	if rec == nil {
		if rec, err = s.latest(ctx, id, last.streamSeq); err != nil {
			return taskstore.Entry{}, err
		}
		if rec == nil {
			e, err := s.legacy(ctx, id)
			e.Version = last.streamSeq
			return e, err
		}
	}
	e, err := decodeRecord(rec)
	if err != nil {
		return taskstore.Entry{}, fmt.Errorf("natsstore: task %s: %w", id, err)
	}
	e.Version = last.streamSeq
	return e, nil
}

// latest returns the task's latest snapshot record in the messages up to
// the one numbered upTo; nil if none holds one.
func (s *TaskStore) latest(ctx context.Context, id string, upTo uint64) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cons, err := s.log.js.OrderedConsumer(ctx, EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{s.log.subject(id)}})
	if err != nil {
		return nil, fmt.Errorf("natsstore: task %s: %w", id, err)
	}
	var rec []byte
	for m, err := range messages(ctx, cons) {
		if err != nil {
			return nil, fmt.Errorf("natsstore: task %s: %w", id, unanswered(ctx, err))
		}
		msg, err := readMessage(m.Headers(), m.Data(), decodeNone)
		if err != nil {
			return nil, fmt.Errorf("natsstore: task %s: %w", id, err)
		}
		if msg.snapshot != nil {
			rec = msg.snapshot
		}
		if md, err := m.Metadata(); err != nil || md.Sequence.Stream >= upTo || md.NumPending == 0 {
			break
		}
	}
	return rec, nil
}

// legacy reads a task from the bucket of earlier builds; its version is 0,
// since it has no message.
func (s *TaskStore) legacy(ctx context.Context, id string) (taskstore.Entry, error) {
	e, err := s.kv.Get(ctx, s.key(id))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return taskstore.Entry{}, fmt.Errorf("%w: %s", taskstore.ErrNotFound, id)
	case err != nil:
		return taskstore.Entry{}, fmt.Errorf("natsstore: task %s: %w", id, unanswered(ctx, err))
	}
	stored, err := decodeRecord(e.Value())
	if err != nil {
		return taskstore.Entry{}, fmt.Errorf("natsstore: task %s: %w", id, err)
	}
	return stored, nil
}

// Delete implements taskstore.Store.
func (s *TaskStore) Delete(ctx context.Context, id string) error {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return err
	}
	defer cancel()
	if err := s.log.Delete(ctx, id); err != nil {
		return err
	}
	// Purge, not Delete: nothing reads a task's old revisions, so the
	// bucket need not keep them.
	if err := s.kv.Purge(ctx, s.key(id), jetstream.PurgeTTL(deleteMarkerTTL)); err != nil {
		return fmt.Errorf("natsstore: task %s: %w", id, err)
	}
	return nil
}

// List implements taskstore.Store. Each call reads and decodes every task
// of the namespace from the server (the last message of each, and the
// bucket of earlier builds: O(n) in the namespace's tasks, however small
// the page), then filters, sorts and pages them as taskstore.Memory does.
func (s *TaskStore) List(ctx context.Context, q taskstore.Query) (taskstore.Page, error) {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return taskstore.Page{}, err
	}
	defer cancel()
	var after *taskstore.Cursor
	if q.PageToken != "" {
		c, err := taskstore.ParseToken(q.PageToken)
		if err != nil {
			return taskstore.Page{}, err
		}
		after = &c
	}
	var matched []*a2a.Task
	err = s.each(ctx, func(e taskstore.Entry) {
		if q.Matches(e) {
			matched = append(matched, e.Task)
		}
	})
	if err != nil {
		return taskstore.Page{}, err
	}
	return taskstore.Paginate(matched, after, q.PageSize), nil
}

// each calls fn with every task of the namespace, read from the server:
// one pass over their last messages and the bucket of earlier builds.
func (s *TaskStore) each(ctx context.Context, fn func(taskstore.Entry)) error {
	values, err := s.values(ctx)
	if err != nil {
		return err
	}
	if err := s.lastSnapshots(ctx, values); err != nil {
		return err
	}
	for key, value := range values {
		e, err := decodeRecord(value)
		if err != nil {
			return fmt.Errorf("natsstore: task key %s: %w", key, err)
		}
		fn(e)
	}
	return nil
}

// lastSnapshots puts the snapshot of each of the namespace's tasks in the
// log in values, by key, over any the bucket holds.
func (s *TaskStore) lastSnapshots(ctx context.Context, values map[string][]byte) error {
	// A consumer of no message would wait for one: first, is there any?
	switch _, err := s.log.stream.GetLastMsgForSubject(ctx, s.log.prefix+">"); {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("natsstore: list tasks: %w", unanswered(ctx, err))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cons, err := s.log.js.OrderedConsumer(ctx, EventsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{s.log.prefix + ">"}, DeliverPolicy: jetstream.DeliverLastPerSubjectPolicy})
	if err != nil {
		return fmt.Errorf("natsstore: list tasks: %w", err)
	}
	for m, err := range messages(ctx, cons) {
		if err != nil {
			return fmt.Errorf("natsstore: list tasks: %w", unanswered(ctx, err))
		}
		msg, err := readMessage(m.Headers(), m.Data(), decodeNone)
		if err != nil {
			return fmt.Errorf("natsstore: list tasks: %s: %w", m.Subject(), err)
		}
		if msg.snapshot != nil {
			values[s.prefix+strings.TrimPrefix(m.Subject(), s.log.prefix)] = msg.snapshot
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("natsstore: list tasks: %w", err)
		}
		if md.NumPending == 0 {
			return nil
		}
	}
	return nil
}

// values returns the current value of every key of the namespace in the
// bucket.
func (s *TaskStore) values(ctx context.Context) (map[string][]byte, error) {
	// Deletes are not ignored: the watcher would drop them on this side
	// anyway, and a key deleted while the initial values arrive must go.
	w, err := s.kv.WatchFiltered(ctx, []string{s.prefix + ">"})
	if err != nil {
		return nil, fmt.Errorf("natsstore: list tasks: %w", err)
	}
	defer stopWatcher(w)
	values := make(map[string][]byte)
	for {
		select {
		case e, ok := <-w.Updates():
			switch {
			case !ok:
				return nil, errors.New("natsstore: list tasks: the watch ended early")
			case e == nil: // the initial values are all in
				return values, nil
			case e.Operation() == jetstream.KeyValuePut:
				values[e.Key()] = e.Value()
			default:
				delete(values, e.Key())
			}
		case <-ctx.Done():
			return nil, fmt.Errorf("natsstore: list tasks: %w", context.Cause(ctx))
		}
	}
}

// stopWatcher stops w and waits for its subscription to end. The watcher
// delivers from the subscription's goroutine, which blocks on a full
// Updates channel; draining the channel until the subscription's close
// handler closes it lets that goroutine finish instead of leaking.
func stopWatcher(w jetstream.KeyWatcher) {
	_ = w.Stop() // an error means the subscription has ended already
	for range w.Updates() {
	}
}

// record is a KV value: the task, the sequence number of the last event
// folded into it, and its owner (absent in values written before tasks had
// owners, which read as owner "").
type record struct {
	Seq   uint64          `json:"seq"`
	Owner string          `json:"owner,omitempty"`
	Task  json.RawMessage `json:"task"`
}

func encodeRecord(e taskstore.Entry) ([]byte, error) {
	b := append(make([]byte, 0, 1024), `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	if e.Owner != "" {
		b = append(b, `,"owner":`...)
		b = fastjson.AppendString(b, e.Owner)
	}
	b = append(b, `,"task":`...)
	b, err := a2a.AppendJSON(b, e.Task)
	if err != nil {
		return nil, fmt.Errorf("natsstore: task %s: encode: %w", e.Task.ID, err)
	}
	return append(b, '}'), nil
}

// decodeRecord decodes a KV value into an entry with a new task (and no
// version).
func decodeRecord(data []byte) (taskstore.Entry, error) {
	rec, ok := readRecord(data)
	if !ok {
		if err := fastjson.Unmarshal(data, &rec); err != nil {
			return taskstore.Entry{}, fmt.Errorf("decode: %w", err)
		}
	}
	if len(rec.Task) == 0 || string(rec.Task) == "null" {
		return taskstore.Entry{}, errors.New("decode: the value holds no task")
	}
	task := new(a2a.Task)
	if err := a2a.Unmarshal(rec.Task, task); err != nil {
		return taskstore.Entry{}, fmt.Errorf("decode: %w", err)
	}
	return taskstore.Entry{Task: task, Seq: rec.Seq, Owner: rec.Owner}, nil
}

// readRecord reads the values encodeRecord writes without reflection, since
// List decodes a whole namespace per call; it reports false for anything
// else, which encoding/json then reads or rejects.
func readRecord(data []byte) (rec record, ok bool) {
	if !fastjson.Enabled {
		return rec, false
	}
	r := fastjson.New(data)
	if !r.Open('{') {
		return rec, false
	}
	var seen uint32
	for n := 0; r.Next('}', &n); {
		switch key := r.Key(); string(key) {
		case "seq":
			r.Seen(&seen, 1)
			v, err := strconv.ParseUint(string(r.Raw()), 10, 64)
			if err != nil {
				return rec, false
			}
			rec.Seq = v
		case "owner":
			r.Seen(&seen, 2)
			rec.Owner = r.String()
		case "task":
			r.Seen(&seen, 4)
			rec.Task = r.Raw()
		default:
			r.Unknown(key, "seq", "owner", "task")
		}
	}
	return rec, r.End()
}
