package natsstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/adk"
)

// CheckPointStoreConfig configures a CheckPointStore.
type CheckPointStoreConfig struct {
	// Namespace keeps one agent's checkpoints apart from other agents' in
	// the shared bucket: replicas of one agent use the same namespace.
	// Required.
	Namespace string
	// Bucket configures the KV bucket; its default name is
	// CheckpointsBucket.
	Bucket BucketConfig
	// LockTTL is how long a lock outlives its holder's last renewal: a
	// holder that dies (kill -9) frees the checkpoint within LockTTL.
	// Default 10s; the holder renews every LockTTL/3. The NATS server
	// counts TTLs in whole seconds, so LockTTL is rounded up to them.
	LockTTL time.Duration
}

// DefaultLockTTL is CheckPointStoreConfig.LockTTL's default.
const DefaultLockTTL = 10 * time.Second

// markerTTL is how long the delete marker of a deleted checkpoint or a
// released lock stays: long enough for a KV watcher to see the deletion,
// and then it goes, so a bucket that has seen millions of runs does not
// keep a marker for each.
const markerTTL = time.Minute

// CheckPointStore is an adk.CheckPointStore on a JetStream KV bucket,
// shared by every replica of an agent (the same Namespace) and by every
// agent of the NATS server (different Namespaces), and an
// adk.CheckPointLocker whose locks hold across processes and hosts.
//
// A checkpoint is one KV value, so it can be at most as large as the NATS
// server's max_payload (1 MB by default; raise it in the server's
// configuration for larger runs): Set refuses a larger one with
// ErrTooLarge.
//
// A lock is a KV key with a per-key TTL (a lease) that the holder renews
// in the background until it unlocks. A holder that dies without unlocking
// frees the checkpoint within LockTTL; one that is cut off from NATS for
// longer than LockTTL loses the lock while it may still be running, so
// LockTTL trades how long a crashed run blocks its checkpoint against how
// long a network partition may last without two runs of it.
type CheckPointStore struct {
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	ns      string // the namespace's key token
	lockTTL time.Duration
	// putPrefix is the subject prefix of writes to the bucket's keys:
	// renewals publish there themselves, as KeyValue has no update that
	// keeps a per-key TTL.
	putPrefix string
}

var (
	_ adk.CheckPointStore  = (*CheckPointStore)(nil)
	_ adk.CheckPointLocker = (*CheckPointStore)(nil)
)

// NewCheckPointStore opens the checkpoint store of cfg.Namespace, creating
// its bucket or updating the bucket's configuration if needed; every
// replica may call it at once.
func NewCheckPointStore(ctx context.Context, js jetstream.JetStream, cfg CheckPointStoreConfig) (*CheckPointStore, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("natsstore: a checkpoint store needs a namespace")
	}
	if cfg.LockTTL < 0 {
		return nil, fmt.Errorf("natsstore: negative lock TTL %v", cfg.LockTTL)
	}
	ttl := cfg.LockTTL
	if ttl == 0 {
		ttl = DefaultLockTTL
	}
	// Rounded up, not down: a lease shorter than asked could expire
	// between two renewals.
	ttl = (ttl + time.Second - 1) / time.Second * time.Second
	kv, err := ensureKV(ctx, js, CheckpointsBucket, cfg.Bucket, "a2amesh adk checkpoints and their locks: <namespace>.c.<id>, <namespace>.l.<id>", true)
	if err != nil {
		return nil, err
	}
	return &CheckPointStore{js: js, kv: kv, ns: keyToken(cfg.Namespace), lockTTL: ttl, putPrefix: putPrefix(js) + "$KV." + kv.Bucket() + "."}, nil
}

// putPrefix is what jetstream's KeyValue puts before "$KV." when it
// writes: the JetStream API prefix of a context made for another domain or
// account.
func putPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	case o.APIPrefix != "" && o.APIPrefix != jetstream.DefaultAPIPrefix:
		if !strings.HasSuffix(o.APIPrefix, ".") {
			return o.APIPrefix + "."
		}
		return o.APIPrefix
	}
	return ""
}

// Checkpoints and locks live in different sub-trees of the namespace, so
// no id's checkpoint key is another id's lock key (keyToken yields "lock"
// for the id "lock").
func (s *CheckPointStore) dataKey(id string) string { return s.ns + ".c." + keyToken(id) }
func (s *CheckPointStore) lockKey(id string) string { return s.ns + ".l." + keyToken(id) }

// Get returns the checkpoint saved under id; ok is false when there is
// none.
func (s *CheckPointStore) Get(ctx context.Context, id string) ([]byte, bool, error) {
	ctx, cancel, err := call(ctx, s.js.Conn())
	if err != nil {
		return nil, false, err
	}
	defer cancel()
	e, err := s.kv.Get(ctx, s.dataKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("natsstore: get checkpoint %s: %w", id, unanswered(ctx, err))
	}
	return e.Value(), true, nil
}

// Set saves data under id, replacing any other checkpoint; data may be at
// most the NATS server's max payload.
func (s *CheckPointStore) Set(ctx context.Context, id string, data []byte) error {
	ctx, cancel, err := call(ctx, s.js.Conn())
	if err != nil {
		return err
	}
	defer cancel()
	// Checked here too so the error says what was too large; the client's
	// own check only names the limit. A put has no headers.
	if err := fits(s.js.Conn(), len(data), func() string { return "checkpoint " + id }); err != nil {
		return err
	}
	if _, err := s.kv.Put(ctx, s.dataKey(id), data); err != nil {
		return fmt.Errorf("natsstore: save checkpoint %s: %w", id, unanswered(ctx, err))
	}
	return nil
}

// Delete removes the checkpoint saved under id; deleting a missing one is
// not an error.
func (s *CheckPointStore) Delete(ctx context.Context, id string) error {
	ctx, cancel, err := call(ctx, s.js.Conn())
	if err != nil {
		return err
	}
	defer cancel()
	// A purge whose marker expires leaves nothing of the key behind, where a
	// delete would leave its marker for good.
	if err := s.kv.Purge(ctx, s.dataKey(id), jetstream.PurgeTTL(markerTTL)); err != nil {
		return fmt.Errorf("natsstore: delete checkpoint %s: %w", id, unanswered(ctx, err))
	}
	return nil
}

// Lock claims id for one run, across every process using the namespace:
// it fails at once with adk.ErrCheckPointBusy while another claim holds.
// ctx bounds the claiming only; the claim holds, renewed in the
// background, until unlock is called (which must be, or a goroutine
// stays) or the NATS server stops hearing from the holder for LockTTL.
// unlock waits until the renewal has stopped and releases the claim; it
// may be called more than once.
func (s *CheckPointStore) Lock(ctx context.Context, id string) (func(), error) {
	ctx, cancel, err := call(ctx, s.js.Conn())
	if err != nil {
		return nil, err
	}
	defer cancel()
	key := s.lockKey(id)
	// Each claim writes its own value, so a holder can tell its claim
	// from a later one of the same key.
	holder := []byte(rand.Text())
	rev, err := s.kv.Create(ctx, key, holder, jetstream.KeyTTL(s.lockTTL))
	if casConflict(err) {
		return nil, fmt.Errorf("%w: %s", adk.ErrCheckPointBusy, id)
	}
	if err != nil {
		return nil, fmt.Errorf("natsstore: lock checkpoint %s: %w", id, err)
	}
	rctx, cancel := context.WithCancel(context.Background())
	l := &lease{s: s, key: key, subject: s.putPrefix + key, holder: holder, rev: rev, ctx: rctx, cancel: cancel, done: make(chan struct{})}
	go l.renew()
	return l.unlock, nil
}

// lease is a held lock and the goroutine renewing it.
type lease struct {
	s       *CheckPointStore
	key     string
	subject string
	holder  []byte
	rev     uint64 // the lock's latest revision; the renewer's until done is closed
	ctx     context.Context
	cancel  context.CancelFunc // stops the renewer, in the middle of a renewal too
	done    chan struct{}      // the renewer has ended
	once    sync.Once
}

func (l *lease) renew() {
	defer close(l.done)
	t := time.NewTicker(l.s.lockTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-t.C:
		}
		if !l.extend() {
			return
		}
	}
}

// extend renews the lease for another LockTTL, and reports whether it may
// still be held.
func (l *lease) extend() bool {
	ctx, cancel := context.WithTimeout(l.ctx, l.s.lockTTL/3)
	defer cancel()
	// KeyValue.Update would write the key without a TTL, turning the lease
	// into a lock that outlives a dead holder; this is Update with one.
	ack, err := l.s.js.PublishMsg(ctx, &nats.Msg{Subject: l.subject, Data: l.holder},
		jetstream.WithExpectLastSequencePerSubject(l.rev), jetstream.WithMsgTTL(l.s.lockTTL))
	switch {
	case err == nil:
		l.rev = ack.Sequence
		return true
	case casConflict(err):
		// A renewal whose acknowledgement was lost may have been stored
		// all the same; then the lease is still ours, at a newer revision.
		if rev, ok := l.current(ctx); ok {
			l.rev = rev
			return true
		}
		return false // expired, and maybe claimed by another run
	case errors.Is(err, nats.ErrConnectionClosed):
		return false
	}
	// Timed out or disconnected: the lease lasts a while longer, and the
	// next tick tries again.
	return true
}

// current returns the lock's revision if it is still this lease's.
func (l *lease) current(ctx context.Context) (uint64, bool) {
	e, err := l.s.kv.Get(ctx, l.key)
	if err != nil || !bytes.Equal(e.Value(), l.holder) {
		return 0, false
	}
	return e.Revision(), true
}

func (l *lease) unlock() {
	l.once.Do(func() {
		l.cancel()
		<-l.done
		// Past LockTTL the lease has expired anyway: no point in waiting
		// longer for a server that does not answer.
		ctx, cancel := context.WithTimeout(context.Background(), l.s.lockTTL)
		defer cancel()
		// Only at the lease's revision: if it expired, the key may be
		// another run's lock by now.
		err := l.s.kv.Purge(ctx, l.key, jetstream.LastRevision(l.rev), jetstream.PurgeTTL(markerTTL))
		if casConflict(err) {
			if rev, ok := l.current(ctx); ok {
				_ = l.s.kv.Purge(ctx, l.key, jetstream.LastRevision(rev), jetstream.PurgeTTL(markerTTL))
			}
		}
		// Other errors leave the key to expire within LockTTL: unlock has
		// no one to report them to.
	})
}
