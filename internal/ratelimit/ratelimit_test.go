package ratelimit

import (
	"testing"
	"time"
)

func TestBucket(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var b Bucket
	for i := range 3 {
		if w := b.Take(t0, 2, 3); w != 0 {
			t.Fatalf("request %d of the burst waits %v", i, w)
		}
	}
	if w := b.Take(t0, 2, 3); w != 500*time.Millisecond {
		t.Fatalf("past the burst: wait %v, want 500ms", w)
	}
	if w := b.Take(t0.Add(500*time.Millisecond), 2, 3); w != 0 {
		t.Fatalf("after the refill: wait %v", w)
	}
	// A clock that steps back refills nothing and breaks nothing.
	if w := b.Take(t0, 2, 3); w <= 0 {
		t.Fatalf("going back in time: wait %v", w)
	}
	var d Bucket
	if w := d.Take(t0, 0.5, 0); w != 0 {
		t.Fatalf("a default burst of at least 1: wait %v", w)
	}
	if w := d.Take(t0, 0.5, 0); w != 2*time.Second {
		t.Fatalf("0.5/s: wait %v, want 2s", w)
	}
}
