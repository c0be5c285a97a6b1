package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// TaskStoreConfig configures a TaskStore.
type TaskStoreConfig struct {
	// Namespace keeps one agent's tasks apart from other agents' in the
	// shared bucket: replicas of one agent use the same namespace (usually
	// the agent's name). Required.
	Namespace string
	// Bucket is the KV bucket; its default name is TasksBucket.
	Bucket BucketConfig
	// KeepEnded is how long the bucket keeps a task after it ends: a
	// snapshot in a terminal state is written with this TTL, and the
	// task is gone when it runs out, whichever replica wrote it and
	// whether or not that replica still runs. 0 keeps ended tasks until
	// they are deleted. (An A2A server on these stores need not evict
	// tasks itself: give it a negative server.Config.Retention.)
	KeepEnded time.Duration
}

// TaskStore is a taskstore.Store on a JetStream KV bucket, so that every
// replica of an agent reads and writes the same tasks. A task is the key
// <namespace>.<task id> (each made a key token); its value is the JSON
// object {"seq": N, "task": <the task's 1.0 JSON>}, and its version is the
// entry's KV revision, which Update compares and swaps. A value must fit
// the NATS server's max_payload (1 MiB by default), which bounds how much
// history and artifacts one task can carry: Create and Update refuse a
// larger one with ErrTooLarge.
type TaskStore struct {
	kv jetstream.KeyValue
	js jetstream.JetStream
	nc *nats.Conn
	// subjects is the bucket's subject prefix, for writes kv cannot make
	// (an update with a TTL).
	subjects  string
	keepEnded time.Duration
	// prefix is the namespace's key token and the dot before a task's.
	prefix string
}

var _ taskstore.Store = (*TaskStore)(nil)

// deleteMarkerTTL is how long the marker a Delete leaves stays in the
// bucket. Without one, markers would pile up for every task ever deleted,
// and List, which reads the namespace's markers as well as its tasks,
// would get slower for good; live watchers see a marker at once, so a
// short life loses nothing.
const deleteMarkerTTL = time.Minute

// NewTaskStore creates the bucket, or updates its configuration, and
// returns the store of cfg.Namespace in it. Every replica may call it at
// once.
func NewTaskStore(ctx context.Context, js jetstream.JetStream, cfg TaskStoreConfig) (*TaskStore, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("natsstore: a task store needs a namespace")
	}
	// ttlKeys lets Delete give its marker a TTL (deleteMarkerTTL).
	kv, err := ensureKV(ctx, js, TasksBucket, cfg.Bucket, "a2amesh task snapshots: <namespace>.<task id>", true)
	if err != nil {
		return nil, err
	}
	if err := withoutExpiryMarkers(ctx, js, kv.Bucket()); err != nil {
		return nil, err
	}
	if cfg.KeepEnded < 0 || cfg.KeepEnded > 0 && cfg.KeepEnded < time.Second {
		return nil, fmt.Errorf("natsstore: task store: KeepEnded %v is not 0 or at least a second (the smallest JetStream TTL)", cfg.KeepEnded)
	}
	return &TaskStore{kv: kv, js: js, nc: js.Conn(), subjects: "$KV." + kv.Bucket() + ".", keepEnded: cfg.KeepEnded,
		prefix: keyToken(cfg.Namespace) + "."}, nil
}

func (s *TaskStore) key(id string) string { return s.prefix + keyToken(id) }

// Create implements taskstore.Store.
func (s *TaskStore) Create(ctx context.Context, e taskstore.Entry) (uint64, error) {
	task := e.Task
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return 0, err
	}
	defer cancel()
	value, err := s.encode(e)
	if err != nil {
		return 0, err
	}
	key := s.key(task.ID)
	var opts []jetstream.KVCreateOpt
	if ttl := s.ttl(task); ttl > 0 {
		opts = append(opts, jetstream.KeyTTL(ttl))
	}
	for attempt := 0; ; attempt++ {
		rev, err := s.kv.Create(ctx, key, value, opts...)
		if err == nil {
			return rev, nil
		}
		if !casConflict(err) {
			return 0, fmt.Errorf("natsstore: task %s: %w", task.ID, unanswered(ctx, err))
		}
		// Over a delete marker kv.Create writes twice: it learns the
		// marker's revision from the first failure, then expects it. If
		// the marker expired in between, the second write fails although
		// the id is free.
		if attempt < 2 {
			if _, err := s.kv.Get(ctx, key); errors.Is(err, jetstream.ErrKeyNotFound) {
				continue
			}
		}
		return 0, fmt.Errorf("%w: %s", taskstore.ErrExists, task.ID)
	}
}

// Get implements taskstore.Store. The task is decoded afresh on every call.
func (s *TaskStore) Get(ctx context.Context, id string) (taskstore.Entry, error) {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return taskstore.Entry{}, err
	}
	defer cancel()
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
	stored.Version = e.Revision()
	return stored, nil
}

// Update implements taskstore.Store. It writes e.Owner as the task's
// owner without reading the stored one: the caller's entry must be one Get
// returned, or made from one.
func (s *TaskStore) Update(ctx context.Context, e taskstore.Entry) (uint64, error) {
	task, prev := e.Task, e.Version
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return 0, err
	}
	defer cancel()
	key := s.key(task.ID)
	// No entry has revision 0, and kv.Update expecting 0 would create a
	// missing key: skip straight to telling conflict from absence.
	if prev != 0 {
		value, err := s.encode(e)
		if err != nil {
			return 0, err
		}
		var rev uint64
		if ttl := s.ttl(task); ttl > 0 {
			// kv.Update takes no TTL: the same conditional write, by hand.
			var ack *jetstream.PubAck
			ack, err = s.js.PublishMsg(ctx, &nats.Msg{Subject: s.subjects + key, Data: value},
				jetstream.WithExpectLastSequencePerSubject(prev), jetstream.WithMsgTTL(ttl))
			if err == nil {
				rev = ack.Sequence
			}
		} else {
			rev, err = s.kv.Update(ctx, key, value, prev)
		}
		if err == nil {
			return rev, nil
		}
		if !casConflict(err) {
			return 0, fmt.Errorf("natsstore: task %s: %w", task.ID, unanswered(ctx, err))
		}
	}
	// The server answers a missing key and a newer revision alike.
	cur, err := s.kv.Get(ctx, key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return 0, fmt.Errorf("%w: %s", taskstore.ErrNotFound, task.ID)
	case err != nil:
		return 0, fmt.Errorf("natsstore: task %s: %w", task.ID, unanswered(ctx, err))
	}
	return 0, fmt.Errorf("%w: %s is at version %d, not %d", taskstore.ErrConflict, task.ID, cur.Revision(), prev)
}

// encode makes e's value, refusing with ErrTooLarge one the NATS server
// would refuse.
func (s *TaskStore) encode(e taskstore.Entry) ([]byte, error) {
	value, err := encodeRecord(e)
	if err != nil {
		return nil, err
	}
	return value, fits(s.nc, len(value)+kvHeaderRoom, func() string { return "task " + e.Task.ID })
}

// ttl is how long the bucket keeps the snapshot of task: KeepEnded once it
// has ended; 0 for ever.
func (s *TaskStore) ttl(task *a2a.Task) time.Duration {
	if task.Status.State.Terminal() {
		return s.keepEnded
	}
	return 0
}

// Delete implements taskstore.Store.
func (s *TaskStore) Delete(ctx context.Context, id string) error {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return err
	}
	defer cancel()
	// Purge, not Delete: nothing reads a task's old revisions, so the
	// bucket need not keep them.
	if err := s.kv.Purge(ctx, s.key(id), jetstream.PurgeTTL(deleteMarkerTTL)); err != nil {
		return fmt.Errorf("natsstore: task %s: %w", id, err)
	}
	return nil
}

// List implements taskstore.Store. Each call reads and decodes every task
// of the namespace from the server (O(n) in the namespace's tasks, however
// small the page), then filters, sorts and pages them as taskstore.Memory
// does.
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
	values, err := s.values(ctx)
	if err != nil {
		return taskstore.Page{}, err
	}
	var matched []*a2a.Task
	for key, value := range values {
		e, err := decodeRecord(value)
		if err != nil {
			return taskstore.Page{}, fmt.Errorf("natsstore: task key %s: %w", key, err)
		}
		if q.Matches(e) {
			matched = append(matched, e.Task)
		}
	}
	return taskstore.Paginate(matched, after, q.PageSize), nil
}

// values returns the current value of every key of the namespace.
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
