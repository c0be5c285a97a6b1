// Package ratelimit is a token bucket: a sustained rate with a burst, the
// rate limits of an agent's callers (a2a/auth) and of a gateway's calls to
// another team's agents (bridge).
package ratelimit

import "time"

// Bucket holds up to Burst requests and refills at PerSecond. Its zero
// time is full. A Bucket is not safe for concurrent use: its owner locks.
type Bucket struct {
	tokens float64
	at     time.Time
}

// Take spends one request at now from a bucket refilling at perSecond up to
// burst (0: one second's worth, at least 1). When the bucket is empty it
// spends nothing and returns how long until it holds a request.
func (b *Bucket) Take(now time.Time, perSecond float64, burst int) time.Duration {
	full := float64(burst)
	if burst <= 0 {
		full = max(1, perSecond)
	}
	if b.at.IsZero() {
		b.tokens = full
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(full, b.tokens+d.Seconds()*perSecond)
	}
	if now.After(b.at) {
		b.at = now
	}
	if b.tokens < 1 {
		return time.Duration((1 - b.tokens) / perSecond * float64(time.Second))
	}
	b.tokens--
	return 0
}

// Idle is when the bucket was last used.
func (b *Bucket) Idle() time.Time { return b.at }
