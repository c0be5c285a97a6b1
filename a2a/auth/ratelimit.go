package auth

import (
	"fmt"
	"sync"
	"time"
)

// RateLimits bound how often callers may call: each principal (each API
// key, each token subject) and each tenant has a token bucket. A zero Rate
// does not limit.
type RateLimits struct {
	PerPrincipal Rate `json:"perPrincipal,omitzero"`
	PerTenant    Rate `json:"perTenant,omitzero"`
	// MaxKeys bounds the buckets kept; when full, the idlest of a few
	// taken at random is dropped (it was full again, or soon would be).
	// 0 means 100,000.
	MaxKeys int `json:"maxKeys,omitempty"`
}

// Rate is a sustained number of requests per second with a burst.
type Rate struct {
	PerSecond float64 `json:"perSecond"`
	// Burst is how many requests may come at once; 0 means one second's
	// worth (at least 1).
	Burst int `json:"burst,omitempty"`
}

func (r Rate) burst() float64 {
	if r.Burst > 0 {
		return float64(r.Burst)
	}
	return max(1, r.PerSecond)
}

// limiter holds the buckets.
type limiter struct {
	principal, tenant Rate
	max               int
	mu                sync.Mutex
	buckets           map[string]*bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newLimiter(l RateLimits) (*limiter, error) {
	for name, r := range map[string]Rate{"PerPrincipal": l.PerPrincipal, "PerTenant": l.PerTenant} {
		if r.PerSecond < 0 || r.Burst < 0 {
			return nil, fmt.Errorf("auth: rate limit %s is negative", name)
		}
	}
	if l.PerPrincipal.PerSecond == 0 && l.PerTenant.PerSecond == 0 {
		return nil, nil
	}
	m := l.MaxKeys
	if m <= 0 {
		m = 100_000
	}
	return &limiter{principal: l.PerPrincipal, tenant: l.PerTenant, max: m, buckets: make(map[string]*bucket)}, nil
}

// take spends a request of p's buckets at now. When one is empty it spends
// nothing and returns how long until it holds a request again, and which
// limit that is.
func (l *limiter) take(p *Principal, now time.Time) (time.Duration, string) {
	if l == nil {
		return 0, ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	type use struct {
		key, which string
		rate       Rate
	}
	var uses [2]use
	n := 0
	if l.principal.PerSecond > 0 {
		uses[n] = use{"p:" + p.ID(), "caller", l.principal}
		n++
	}
	if l.tenant.PerSecond > 0 && p != nil && p.Tenant != "" {
		uses[n] = use{"t:" + p.Tenant, "tenant", l.tenant}
		n++
	}
	var bs [2]*bucket
	for i, u := range uses[:n] {
		b := l.bucket(u.key, u.rate, now)
		if b.tokens < 1 {
			return time.Duration((1 - b.tokens) / u.rate.PerSecond * float64(time.Second)), u.which
		}
		bs[i] = b
	}
	for _, b := range bs[:n] {
		b.tokens--
	}
	return 0, ""
}

// bucket returns key's bucket refilled to now.
func (l *limiter) bucket(key string, r Rate, now time.Time) *bucket {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evict()
		}
		b = &bucket{tokens: r.burst(), at: now}
		l.buckets[key] = b
		return b
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = min(r.burst(), b.tokens+d.Seconds()*r.PerSecond)
		b.at = now
	}
	return b
}

// evict drops the idlest of a sample of buckets: map iteration starts at
// random, and a sample keeps a flood of new callers from costing a scan
// of every bucket each.
func (l *limiter) evict() {
	var oldest string
	var at time.Time
	n := 0
	for k, b := range l.buckets {
		if oldest == "" || b.at.Before(at) {
			oldest, at = k, b.at
		}
		if n++; n == 16 {
			break
		}
	}
	delete(l.buckets, oldest)
}
