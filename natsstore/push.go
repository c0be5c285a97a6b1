package natsstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/push"
)

// PushStoreConfig configures a PushStore.
type PushStoreConfig struct {
	// Namespace keeps one agent's webhooks apart from other agents' in the
	// shared bucket: replicas of one agent use the same namespace (usually
	// the agent's name). Required.
	Namespace string
	// Bucket configures the KV bucket; its default name is PushBucket.
	Bucket BucketConfig
}

// PushStore is a push.ConfigStore kept in a JetStream KV bucket, so every
// replica of an agent sees the webhooks any of them registered, and they
// outlive the process. Each config is one key,
// <namespace>.<task>.<config id>; its value is the config as JSON.
type PushStore struct {
	kv jetstream.KeyValue
	nc *nats.Conn
	// stream is the bucket's stream, and subjects the prefix that makes a
	// key its subject: List looks there first (see live).
	stream   jetstream.Stream
	subjects string
	ns       string // the namespace's key token
}

var _ push.ConfigStore = (*PushStore)(nil)

// pushTombstoneTTL is how long the marker a deleted config leaves in the
// bucket lives. Nothing reads the markers (List and Get skip them), so
// they only need to expire: kept for ever, every webhook ever deleted would
// hold a key.
const pushTombstoneTTL = time.Minute

// NewPushStore creates the bucket, or updates its configuration, and
// returns a store in cfg.Namespace. Every replica may call it at once.
func NewPushStore(ctx context.Context, js jetstream.JetStream, cfg PushStoreConfig) (*PushStore, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("natsstore: push store: namespace required")
	}
	// Per-message TTLs let deletion markers expire (pushTombstoneTTL).
	kv, err := ensureKV(ctx, js, PushBucket, cfg.Bucket, "a2amesh push notification configs: <namespace>.<task>.<config>", true)
	if err != nil {
		return nil, err
	}
	// nats.go keeps bucket B in stream KV_B, key k on subject $KV.B.k.
	stream, err := js.Stream(ctx, "KV_"+kv.Bucket())
	if err != nil {
		return nil, fmt.Errorf("natsstore: bucket %s: %w", kv.Bucket(), err)
	}
	return &PushStore{kv: kv, nc: js.Conn(), stream: stream, subjects: "$KV." + kv.Bucket() + ".", ns: keyToken(cfg.Namespace)}, nil
}

// pushRecord is a config as stored.
type pushRecord struct {
	Config          a2a.TaskPushNotificationConfig `json:"config"`
	ProtocolVersion string                         `json:"protocolVersion,omitempty"`
	// First is the revision of the config's first save, which orders
	// List; 0 means the entry holding the record is that first save (a
	// create cannot know its own revision before it is written).
	First uint64 `json:"first,omitempty"`
}

func (r *pushRecord) config() push.Config {
	return push.Config{TaskPushNotificationConfig: r.Config, ProtocolVersion: r.ProtocolVersion}
}

func (s *PushStore) taskPrefix(taskID string) string {
	return s.ns + "." + keyToken(taskID) + "."
}

func (s *PushStore) key(taskID, id string) string {
	return s.taskPrefix(taskID) + keyToken(id)
}

// Save implements push.ConfigStore. A replace writes only if the config
// has not changed since it was read (and retries otherwise), so a
// concurrent save cannot lose the config's place in List order.
func (s *PushStore) Save(ctx context.Context, c push.Config) error {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return err
	}
	defer cancel()
	switch {
	case c.TaskID == "":
		return fmt.Errorf("natsstore: cannot save a push notification config without a task id")
	case c.ID == "":
		return fmt.Errorf("natsstore: cannot save a push notification config for task %s without a config id", c.TaskID)
	}
	key := s.key(c.TaskID, c.ID)
	rec := pushRecord{Config: c.TaskPushNotificationConfig, ProtocolVersion: c.ProtocolVersion}
	encode := func() ([]byte, error) {
		v, err := json.Marshal(&rec)
		if err != nil {
			return nil, fmt.Errorf("natsstore: push config %s/%s: %w", c.TaskID, c.ID, err)
		}
		return v, fits(s.nc, len(v)+kvHeaderRoom, func() string { return "push config " + c.TaskID + "/" + c.ID })
	}
	for {
		e, err := s.kv.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rec.First = 0
			v, err := encode()
			if err != nil {
				return err
			}
			_, err = s.kv.Create(ctx, key, v)
			if err == nil {
				return nil
			}
			if !casConflict(err) {
				return fmt.Errorf("natsstore: push config %s/%s: %w", c.TaskID, c.ID, err)
			}
			// Another replica saved it first: replace theirs.
		case err != nil:
			return fmt.Errorf("natsstore: push config %s/%s: %w", c.TaskID, c.ID, err)
		default:
			var old pushRecord
			// A record that does not decode is overwritten, keeping
			// at least the place of the entry holding it.
			if json.Unmarshal(e.Value(), &old) != nil || old.First == 0 {
				old.First = e.Revision()
			}
			rec.First = old.First
			v, err := encode()
			if err != nil {
				return err
			}
			_, err = s.kv.Update(ctx, key, v, e.Revision())
			if err == nil {
				return nil
			}
			if !casConflict(err) {
				return fmt.Errorf("natsstore: push config %s/%s: %w", c.TaskID, c.ID, err)
			}
			// Changed or deleted since the read: read again.
		}
	}
}

// Get implements push.ConfigStore.
func (s *PushStore) Get(ctx context.Context, taskID, id string) (push.Config, error) {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return push.Config{}, err
	}
	defer cancel()
	e, err := s.kv.Get(ctx, s.key(taskID, id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return push.Config{}, fmt.Errorf("natsstore: push config %s/%s: %w", taskID, id, push.ErrNotFound)
	}
	if err != nil {
		return push.Config{}, fmt.Errorf("natsstore: push config %s/%s: %w", taskID, id, err)
	}
	var rec pushRecord
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return push.Config{}, fmt.Errorf("natsstore: push config %s/%s: %w", taskID, id, err)
	}
	return rec.config(), nil
}

// List implements push.ConfigStore. It reads the task's configs in one
// pass over the bucket (a watch of the task's keys) rather than a Get per
// key.
func (s *PushStore) List(ctx context.Context, taskID string) ([]push.Config, error) {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return nil, err
	}
	defer cancel()
	entries, err := s.live(ctx, taskID, false)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, nil
	}
	type ordered struct {
		first uint64
		c     push.Config
	}
	cs := make([]ordered, 0, len(entries))
	for _, e := range entries {
		var rec pushRecord
		if err := json.Unmarshal(e.Value(), &rec); err != nil {
			return nil, fmt.Errorf("natsstore: push configs of task %s: key %s: %w", taskID, e.Key(), err)
		}
		first := rec.First
		if first == 0 {
			first = e.Revision()
		}
		cs = append(cs, ordered{first, rec.config()})
	}
	slices.SortFunc(cs, func(a, b ordered) int { return cmp.Compare(a.first, b.first) })
	out := make([]push.Config, len(cs))
	for i, o := range cs {
		out[i] = o.c
	}
	return out, nil
}

// Delete implements push.ConfigStore.
func (s *PushStore) Delete(ctx context.Context, taskID, id string) error {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return err
	}
	defer cancel()
	// An unconditional purge, even of a missing key, costs one round trip
	// and is idempotent; its marker expires.
	if err := s.kv.Purge(ctx, s.key(taskID, id), jetstream.PurgeTTL(pushTombstoneTTL)); err != nil {
		return fmt.Errorf("natsstore: push config %s/%s: %w", taskID, id, err)
	}
	return nil
}

// DeleteTask implements push.ConfigStore. A config saved while it runs
// may survive it.
func (s *PushStore) DeleteTask(ctx context.Context, taskID string) error {
	ctx, cancel, err := call(ctx, s.nc)
	if err != nil {
		return err
	}
	defer cancel()
	entries, err := s.live(ctx, taskID, true)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := s.kv.Purge(ctx, e.Key(), jetstream.PurgeTTL(pushTombstoneTTL)); err != nil {
			return fmt.Errorf("natsstore: push configs of task %s: key %s: %w", taskID, e.Key(), err)
		}
	}
	return nil
}

// live returns the latest entry of each of the task's keys that is not
// deleted, in no particular order; metaOnly leaves their values out.
func (s *PushStore) live(ctx context.Context, taskID string, metaOnly bool) (map[string]jetstream.KeyValueEntry, error) {
	filter := s.taskPrefix(taskID) + ">"
	// Most tasks have no webhooks, and List runs as each run of a task
	// starts. A watch costs a consumer (0.4 ms on a local server); a
	// direct get of the last entry of any of the task's keys costs a
	// tenth of that and, when there is none, proves the task has no
	// configs.
	if _, err := s.stream.GetLastMsgForSubject(ctx, s.subjects+filter); errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("natsstore: push configs of task %s: %w", taskID, err)
	}
	var opts []jetstream.WatchOpt
	if metaOnly {
		opts = append(opts, jetstream.MetaOnly())
	}
	// Deletion markers are delivered too, not ignored: a key written and
	// then deleted while the watch catches up arrives twice, and only its
	// last entry tells whether it is gone.
	w, err := s.kv.Watch(ctx, filter, opts...)
	if err != nil {
		return nil, fmt.Errorf("natsstore: push configs of task %s: %w", taskID, err)
	}
	defer func() {
		// The watcher's callback blocks sending on the updates channel
		// while holding a lock its close needs; draining after Stop lets
		// it finish and the channel close, or it would leak a goroutine
		// whenever a watch is abandoned with a full channel.
		_ = w.Stop()
		for range w.Updates() {
		}
	}()
	latest := make(map[string]jetstream.KeyValueEntry)
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("natsstore: push configs of task %s: %w", taskID, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("natsstore: push configs of task %s: watch ended early", taskID)
			}
			if e == nil { // all current entries delivered
				for k, e := range latest {
					if e.Operation() != jetstream.KeyValuePut {
						delete(latest, k)
					}
				}
				return latest, nil
			}
			if prev, ok := latest[e.Key()]; !ok || e.Revision() > prev.Revision() {
				latest[e.Key()] = e
			}
		}
	}
}
