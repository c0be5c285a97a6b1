package natsstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint/checkpointtest"
	"github.com/a2amesh/a2amesh/natsstore"
)

func newCheckPointStore(t *testing.T, js jetstream.JetStream, cfg natsstore.CheckPointStoreConfig) *natsstore.CheckPointStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := natsstore.NewCheckPointStore(ctx, js, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCheckPointStoreSuite(t *testing.T) {
	e := natsServer(t)
	var n atomic.Int64
	checkpointtest.Run(t, func(t *testing.T) adk.CheckPointStore {
		js := replica(t, e)
		return newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{
			Namespace: "agent",
			Bucket:    natsstore.BucketConfig{Name: fmt.Sprint("CP_SUITE_", n.Add(1))},
		})
	})
}

func TestCheckPointStoreConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	if _, err := natsstore.NewCheckPointStore(ctx, js, natsstore.CheckPointStoreConfig{}); err == nil {
		t.Error("a store without a namespace")
	}
	if _, err := natsstore.NewCheckPointStore(ctx, js, natsstore.CheckPointStoreConfig{Namespace: "a", LockTTL: -time.Second}); err == nil {
		t.Error("a store with a negative lock TTL")
	}
	newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "a"})
	kv, err := js.KeyValue(ctx, natsstore.CheckpointsBucket)
	if err != nil {
		t.Fatalf("the default bucket: %v", err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.LimitMarkerTTL() == 0 {
		t.Error("the bucket does not allow per-key TTLs")
	}
}

func TestCheckPointStoreReplicas(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	jsA := replica(t, e)
	jsB := replica(t, e)
	cfg := natsstore.CheckPointStoreConfig{Namespace: "weather"}
	a, b := newCheckPointStore(t, jsA, cfg), newCheckPointStore(t, jsB, cfg)

	if err := a.Set(ctx, "task-1", []byte("cp")); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := b.Get(ctx, "task-1"); !ok || err != nil || string(got) != "cp" {
		t.Fatalf("B reads A's checkpoint: %q, %v, %v", got, ok, err)
	}
	unlock, err := a.Lock(ctx, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, "task-1"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("B locks what A holds: %v", err)
	}
	unlock()
	again, err := b.Lock(ctx, "task-1")
	if err != nil {
		t.Fatalf("B locks after A unlocked: %v", err)
	}
	if _, err := a.Lock(ctx, "task-1"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("A locks what B holds: %v", err)
	}
	unlock() // A's unlock, again, must not release B's lock
	if _, err := a.Lock(ctx, "task-1"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("A's second unlock released B's lock: %v", err)
	}
	again()
	if err := b.Delete(ctx, "task-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Get(ctx, "task-1"); ok || err != nil {
		t.Fatalf("A reads what B deleted: %v, %v", ok, err)
	}
}

// A checkpoint and a lock of the same id, or of ids that name the other's
// key, are different keys.
func TestCheckPointStoreLockKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	s := newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "ns"})
	for _, id := range []string{"lock", "l", "c", "l.x", "lock.x"} {
		unlock, err := s.Lock(ctx, id)
		if err != nil {
			t.Fatalf("lock %q: %v", id, err)
		}
		if _, ok, err := s.Get(ctx, id); ok || err != nil {
			t.Fatalf("a lock of %q reads as its checkpoint: %v, %v", id, ok, err)
		}
		if err := s.Set(ctx, id, []byte(id)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lock(ctx, id); !errors.Is(err, adk.ErrCheckPointBusy) {
			t.Fatalf("saving %q's checkpoint changed its lock: %v", id, err)
		}
		unlock()
		if got, _, _ := s.Get(ctx, id); string(got) != id {
			t.Fatalf("unlocking %q changed its checkpoint: %q", id, got)
		}
	}
}

func TestCheckPointStoreHolderDies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	jsA := replica(t, e)
	ncA := jsA.Conn()
	jsB := replica(t, e)
	const ttl = time.Second
	cfg := natsstore.CheckPointStoreConfig{Namespace: "weather", LockTTL: ttl}
	a, b := newCheckPointStore(t, jsA, cfg), newCheckPointStore(t, jsB, cfg)

	unlockA, err := a.Lock(ctx, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(ttl / 2) // a renewal or so
	// As kill -9: no unlock, no renewal from now on.
	ncA.Close()
	killed := time.Now()
	if _, err := b.Lock(ctx, "task-1"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("B locks right after A died: %v", err)
	}
	var unlockB func()
	// The lease runs out LockTTL after A's last renewal at most.
	for deadline := killed.Add(3 * ttl); ; {
		unlockB, err = b.Lock(ctx, "task-1")
		if err == nil {
			break
		}
		if !errors.Is(err, adk.ErrCheckPointBusy) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead holder's lock is not freed %v after it died, with a LockTTL of %v", time.Since(killed).Round(time.Millisecond), ttl)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A renewed at most LockTTL/3 before dying, so its lease lasted at
	// least 2/3 LockTTL more.
	if freed := time.Since(killed); freed < ttl/2 {
		t.Errorf("the lock was freed %v after its holder died, before LockTTL/2", freed)
	} else {
		t.Logf("the lock was freed %v after its holder died", freed)
	}
	done := make(chan struct{})
	go func() {
		unlockA() // on a closed connection: the renewer has ended, or ends now
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("unlock on a closed connection hangs")
	}
	if _, err := a.Lock(ctx, "task-1"); err == nil {
		t.Fatal("A locks on a closed connection")
	}
	// A's late unlock did not release B's lock.
	jsC := replica(t, e)
	c := newCheckPointStore(t, jsC, cfg)
	if _, err := c.Lock(ctx, "task-1"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("C locks what B holds: %v", err)
	}
	unlockB()
}

func TestCheckPointStoreLockRenewed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	jsA := replica(t, e)
	jsB := replica(t, e)
	const ttl = time.Second
	cfg := natsstore.CheckPointStoreConfig{Namespace: "weather", LockTTL: ttl}
	a, b := newCheckPointStore(t, jsA, cfg), newCheckPointStore(t, jsB, cfg)

	unlock, err := a.Lock(ctx, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(3 * ttl); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if _, err := b.Lock(ctx, "task-1"); !errors.Is(err, adk.ErrCheckPointBusy) {
			t.Fatalf("B locks what A holds: %v", err)
		}
	}
	unlock()
	again, err := b.Lock(ctx, "task-1")
	if err != nil {
		t.Fatalf("B locks after A unlocked: %v", err)
	}
	again()
}

func TestCheckPointStoreNamespaces(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	weather := newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "weather"})
	travel := newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "travel"})
	odd := newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "weather.c"})
	if err := weather.Set(ctx, "task-1", []byte("weather")); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*natsstore.CheckPointStore{travel, odd} {
		if _, ok, err := s.Get(ctx, "task-1"); ok || err != nil {
			t.Fatalf("another namespace reads the checkpoint: %v, %v", ok, err)
		}
	}
	if err := travel.Set(ctx, "task-1", []byte("travel")); err != nil {
		t.Fatal(err)
	}
	if err := travel.Delete(ctx, "task-1"); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := weather.Get(ctx, "task-1"); string(got) != "weather" {
		t.Fatalf("another namespace's set and delete changed the checkpoint: %q", got)
	}
	unlock, err := weather.Lock(ctx, "task-1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other, err := travel.Lock(ctx, "task-1")
	if err != nil {
		t.Fatalf("a lock in another namespace: %v", err)
	}
	other()
}

func TestCheckPointStoreConcurrentOpen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	e := natsServer(t)
	var wg sync.WaitGroup
	stores := make([]*natsstore.CheckPointStore, 8)
	for i := range stores {
		js := replica(t, e)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := natsstore.NewCheckPointStore(ctx, js, natsstore.CheckPointStoreConfig{Namespace: "weather"})
			if err != nil {
				t.Error(err)
				return
			}
			stores[i] = s
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if err := stores[0].Set(ctx, "task-1", []byte("cp")); err != nil {
		t.Fatal(err)
	}
	for i, s := range stores {
		if got, ok, err := s.Get(ctx, "task-1"); !ok || err != nil || string(got) != "cp" {
			t.Fatalf("replica %d: %q, %v, %v", i, got, ok, err)
		}
	}
}

func TestCheckPointStoreLarge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e := natsServer(t)
	js := replica(t, e)
	nc := js.Conn()
	s := newCheckPointStore(t, js, natsstore.CheckPointStoreConfig{Namespace: "weather"})
	limit := int(nc.MaxPayload())
	big := bytes.Repeat([]byte("x"), limit)
	if err := s.Set(ctx, "big", big); err != nil {
		t.Fatalf("a checkpoint of max_payload bytes: %v", err)
	}
	if got, ok, err := s.Get(ctx, "big"); !ok || err != nil || !bytes.Equal(got, big) {
		t.Fatalf("reading it back: %d bytes, %v, %v", len(got), ok, err)
	}
	err := s.Set(ctx, "bigger", append(big, 'x'))
	if !errors.Is(err, nats.ErrMaxPayload) {
		t.Fatalf("a checkpoint over max_payload: %v", err)
	}
	t.Log(err)
}
