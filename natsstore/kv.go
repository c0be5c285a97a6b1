package natsstore

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The KV buckets of the durable stores. One bucket holds the state of
// every agent that shares the NATS server; keys start with the agent's
// namespace, so replicas of one agent (the same namespace) share state and
// different agents do not see each other's.
const (
	TasksBucket       = "A2AMESH_TASKS"
	PushBucket        = "A2AMESH_PUSH"
	CheckpointsBucket = "A2AMESH_CHECKPOINTS"
)

// BucketConfig configures a store's KV bucket. The zero value is a
// single-replica bucket on file storage that keeps entries until they are
// deleted.
type BucketConfig struct {
	// Name overrides the store's default bucket name.
	Name string
	// Replicas is how many servers of a NATS cluster hold the bucket
	// (default 1; at most 5).
	Replicas int
	// TTL drops an entry that has not been written for this long (0: keep
	// entries until they are deleted). A task store's TTL bounds how long
	// a task nobody deletes (its server died before its retention ran out)
	// stays listed.
	TTL time.Duration
	// Memory keeps the bucket in the NATS server's memory instead of on
	// disk: faster, lost when the server stops.
	Memory bool
}

// ensureKV creates the bucket, or updates its configuration if it exists;
// every replica of every agent calls it at start, at once, and each gets
// the same bucket.
func ensureKV(ctx context.Context, js jetstream.JetStream, def string, cfg BucketConfig, description string, ttlKeys bool) (jetstream.KeyValue, error) {
	kc := jetstream.KeyValueConfig{
		Bucket:      cfg.Name,
		Description: description,
		TTL:         cfg.TTL,
		Replicas:    max(cfg.Replicas, 1),
		Storage:     jetstream.FileStorage,
	}
	if kc.Bucket == "" {
		kc.Bucket = def
	}
	if cfg.Memory {
		kc.Storage = jetstream.MemoryStorage
	}
	if ttlKeys {
		// Per-key TTLs (leases) need the bucket to allow message TTLs,
		// which a limit marker TTL switches on.
		kc.LimitMarkerTTL = time.Minute
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, kc)
	for range 3 {
		// Another replica created the bucket between this one's update
		// (not found) and create (a stream of that name with another
		// configuration: withoutExpiryMarkers changes it): it exists now,
		// so an update takes.
		var apiErr *jetstream.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode != jetstream.JSErrCodeStreamNameInUse {
			break
		}
		kv, err = js.CreateOrUpdateKeyValue(ctx, kc)
	}
	if err != nil {
		return nil, fmt.Errorf("natsstore: bucket %s: %w", kc.Bucket, err)
	}
	return kv, nil
}

// withoutExpiryMarkers keeps the bucket's per-key TTLs but stops the server
// from writing a marker each time one runs out: a marker is one more write
// and, later, one more removal for every expired key, which for the task
// bucket (a TTL on every ended task) cost about a seventh of the NATS
// server's CPU under load, and nothing here reads them (a key that expired
// is simply absent). ensureKV, which every start calls, turns them back
// on, so this runs after it each time.
func withoutExpiryMarkers(ctx context.Context, js jetstream.JetStream, bucket string) error {
	st, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return fmt.Errorf("natsstore: bucket %s: %w", bucket, err)
	}
	cfg := st.CachedInfo().Config
	if cfg.SubjectDeleteMarkerTTL == 0 {
		return nil
	}
	cfg.SubjectDeleteMarkerTTL = 0
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("natsstore: bucket %s: %w", bucket, err)
	}
	return nil
}

// casConflict reports whether a write conditioned on a key's (or a
// subject's) last revision failed because it had moved on. nats.go reports
// it as ErrKeyRevisionMismatch after Update and ErrKeyExists after Create,
// but Create over a delete marker returns the server's bare "wrong last
// sequence" error, whose code is 10071 on a single-replica stream and
// 10164 on a replicated one (which ErrKeyExists does not match).
func casConflict(err error) bool {
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		return true
	}
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) &&
		(apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}

// keyToken makes s one token of a KV key or subject, of at most
// maxTokenLen bytes whatever s is. Keys may hold only A-Z, a-z, 0-9, '-',
// '_', '/', '=' and '.' between tokens; identifiers made of letters,
// digits, '-' and '_' (UUIDs, agent names) stay readable, and anything
// else becomes '=' and its base64url form, which no readable token starts
// with. A token that would be longer than maxTokenLen becomes '/' and the
// base64url SHA-256 of s, which neither other form starts with: a key
// goes out in the line that starts a NATS message, and a line longer than
// the server's max_control_line (4 KiB by default) makes the server close
// the connection. Nothing reads an id back from its key (the values hold
// the ids), so the hash loses nothing.
func keyToken(s string) string {
	switch {
	case s != "" && len(s) <= maxTokenLen && plainToken(s):
		return s
	case 1+base64.RawURLEncoding.EncodedLen(len(s)) <= maxTokenLen:
		return "=" + base64.RawURLEncoding.EncodeToString([]byte(s))
	}
	sum := sha256.Sum256([]byte(s))
	return "/" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// maxTokenLen bounds a key token: a key has at most three (namespace,
// task, webhook), and the longest subject made of one, a KV read's with
// its reply inbox, stays far below the server's 4 KiB control line.
const maxTokenLen = 128

func plainToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
