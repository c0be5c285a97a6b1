package auth

import (
	"crypto/sha256"
	"sync"
	"time"
)

// Bounds of a JWT authenticator's cache of verified tokens.
const (
	// tokenCacheTTL is how long a verified token is taken on trust before
	// its signature and claims are checked again, whatever its exp.
	tokenCacheTTL = 2 * time.Minute
	// tokenCacheShards × tokenCacheSlots tokens are held at most (4096):
	// a principal of a few hundred bytes each.
	tokenCacheShards = 16
	tokenCacheSlots  = 256
)

// tokenDigest keys the cache: the SHA-256 of the exact token, so that
// the cache holds no token and two tokens share an entry only if they are
// the same bytes.
type tokenDigest = [sha256.Size]byte

// digest returns the digest of token, hashed from a copy on the stack
// when it fits: every request brings its token, and a copy on the heap
// would be that much garbage per request.
func digest(token string) tokenDigest {
	var buf [2 << 10]byte
	if len(token) > len(buf) {
		return sha256.Sum256([]byte(token))
	}
	return sha256.Sum256(buf[:copy(buf[:], token)])
}

// tokenCache holds the principals of tokens verified recently, so that a
// client presenting the same token on every request pays for its
// signature and claims once. An entry serves until the first of its
// token's exp (checked at every hit, with the skew, by the caller),
// tokenCacheTTL after it was verified, and a JWKS refresh that no longer
// publishes a key it had (see jwks.Set.Epoch). Refused tokens are never
// put in it.
//
// It is split in shards, each under its own lock, and each shard evicts
// by the clock algorithm: a hand sweeps the slots, sparing once each
// entry hit since it last passed. Insertion is amortized O(1) and a
// lookup is a map access; nothing runs in the background. The zero value
// is an empty cache, safe for concurrent use.
type tokenCache struct {
	shards [tokenCacheShards]cacheShard
}

type cacheShard struct {
	mu    sync.Mutex
	index map[tokenDigest]int // slot of each digest held
	slots []cacheEntry        // grows to tokenCacheSlots, then entries are evicted
	hand  int                 // the clock's: the next slot considered for eviction
}

// cacheEntry is a verified token's principal and what bounds its use.
type cacheEntry struct {
	digest tokenDigest
	p      *Principal
	exp    time.Time // the token's exp
	until  time.Time // when it was verified, plus tokenCacheTTL
	// epoch is the JWKS's epoch before the token was verified: the entry
	// serves only while it is still the JWKS's (0 without a JWKS URL).
	epoch uint64
	used  bool // the slot holds an entry
	ref   bool // hit since the clock's hand last passed
}

func (c *tokenCache) shard(d tokenDigest) *cacheShard {
	return &c.shards[int(d[0])%tokenCacheShards]
}

// get returns the entry of d, unless it has none or the entry's TTL has
// run out (it is then dropped). The caller checks exp and the epoch.
func (c *tokenCache) get(d tokenDigest, now time.Time) (cacheEntry, bool) {
	s := c.shard(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.index[d]
	if !ok {
		return cacheEntry{}, false
	}
	e := &s.slots[i]
	if !now.Before(e.until) {
		s.drop(i)
		return cacheEntry{}, false
	}
	e.ref = true
	return *e, true
}

// put holds p for the token of digest d, verified at now with the JWKS at
// epoch, until exp at the latest.
func (c *tokenCache) put(d tokenDigest, p *Principal, exp time.Time, epoch uint64, now time.Time) {
	e := cacheEntry{digest: d, p: p, exp: exp, until: now.Add(tokenCacheTTL), epoch: epoch, used: true}
	s := c.shard(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[d]; ok { // verified by two requests at once
		s.slots[i] = e
		return
	}
	if s.index == nil {
		s.index = make(map[tokenDigest]int)
	}
	i := len(s.slots)
	if i < tokenCacheSlots {
		s.slots = append(s.slots, e)
	} else {
		i = s.victim()
		if s.slots[i].used {
			delete(s.index, s.slots[i].digest)
		}
		s.slots[i] = e
	}
	s.index[d] = i
}

// remove drops the entry of d, if any.
func (c *tokenCache) remove(d tokenDigest) {
	s := c.shard(d)
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[d]; ok {
		s.drop(i)
	}
}

// drop empties slot i, whose entry is in the index; s.mu is held.
func (s *cacheShard) drop(i int) {
	delete(s.index, s.slots[i].digest)
	s.slots[i] = cacheEntry{}
}

// victim moves the hand to the slot to reuse, a full shard's: the first
// that is free or not hit since the hand last passed, clearing the marks
// of those it passes. Within two turns every mark is cleared, so it
// returns by then. s.mu is held.
func (s *cacheShard) victim() int {
	for range 2 * len(s.slots) {
		i := s.hand
		s.hand = (s.hand + 1) % len(s.slots)
		e := &s.slots[i]
		if !e.used || !e.ref {
			return i
		}
		e.ref = false
	}
	return s.hand
}
