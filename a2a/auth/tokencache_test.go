package auth

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"testing"
	"time"
)

// digestIn returns the nth digest of shard (distinct for distinct n).
func digestIn(shard, n int) tokenDigest {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	d := sha256.Sum256(b[:])
	d[0] = byte(shard)
	return d
}

func (c *tokenCache) count() (total, fullest int) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		total += len(s.index)
		fullest = max(fullest, len(s.index), len(s.slots))
		s.mu.Unlock()
	}
	return total, fullest
}

func TestTokenCacheBound(t *testing.T) {
	var c tokenCache
	now := time.Now()
	exp := now.Add(time.Hour)
	const n = 3 * tokenCacheShards * tokenCacheSlots
	for i := range n {
		d := digestIn(i%tokenCacheShards, i)
		c.put(d, &Principal{Subject: "x"}, exp, 0, now)
		if i%7 == 0 {
			c.get(d, now) // some entries are hit, and spared once
		}
	}
	total, fullest := c.count()
	if total != tokenCacheShards*tokenCacheSlots || fullest != tokenCacheSlots {
		t.Errorf("%d entries, %d in the fullest shard; want %d, %d", total, fullest, tokenCacheShards*tokenCacheSlots, tokenCacheSlots)
	}
	// The index and the slots agree.
	for i := range c.shards {
		s := &c.shards[i]
		for d, slot := range s.index {
			if e := s.slots[slot]; !e.used || e.digest != d {
				t.Fatalf("shard %d: the index has slot %d for a digest the slot does not hold", i, slot)
			}
		}
	}
}

// TestTokenCacheClock fills one shard many times over while one token is
// hit between insertions: the hot token stays, and cold ones go first.
func TestTokenCacheClock(t *testing.T) {
	var c tokenCache
	now := time.Now()
	exp := now.Add(time.Hour)
	hot, cold := digestIn(3, -1), digestIn(3, -2)
	c.put(hot, &Principal{Subject: "hot"}, exp, 0, now)
	c.put(cold, &Principal{Subject: "cold"}, exp, 0, now)
	for i := range 4 * tokenCacheSlots {
		c.put(digestIn(3, i), &Principal{}, exp, 0, now)
		if e, ok := c.get(hot, now); !ok || e.p.Subject != "hot" {
			t.Fatalf("after %d insertions the hot token is gone", i+1)
		}
	}
	if _, ok := c.get(cold, now); ok {
		t.Error("the cold token outlived four fillings of its shard")
	}
}

func TestTokenCacheTTL(t *testing.T) {
	var c tokenCache
	now := time.Now()
	d := digestIn(0, 1)
	c.put(d, &Principal{}, now.Add(time.Hour), 7, now)
	if e, ok := c.get(d, now.Add(tokenCacheTTL-time.Nanosecond)); !ok || e.epoch != 7 || !e.exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("within the TTL: %+v, %v", e, ok)
	}
	if _, ok := c.get(d, now.Add(tokenCacheTTL)); ok {
		t.Fatal("served past its TTL")
	}
	if total, _ := c.count(); total != 0 {
		t.Errorf("%d entries after the TTL, want the entry dropped", total)
	}
	c.put(d, &Principal{}, now.Add(time.Hour), 0, now)
	c.remove(d)
	if _, ok := c.get(d, now); ok {
		t.Error("served after remove")
	}
}

// TestTokenCacheConcurrent puts, gets and removes from many goroutines
// at once, past the bound (under -race).
func TestTokenCacheConcurrent(t *testing.T) {
	var c tokenCache
	now := time.Now()
	exp := now.Add(time.Hour)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 2 * tokenCacheSlots {
				d := digestIn(i%4, w*10_000+i)
				c.put(d, &Principal{}, exp, 0, now)
				c.get(d, now)
				if i%5 == 0 {
					c.remove(digestIn(i%4, w*10_000+i/2))
				}
			}
		})
	}
	wg.Wait()
	if _, fullest := c.count(); fullest > tokenCacheSlots {
		t.Errorf("a shard holds %d entries, over %d", fullest, tokenCacheSlots)
	}
}
