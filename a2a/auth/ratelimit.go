package auth

import (
	"fmt"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/internal/ratelimit"
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

// limiter holds the buckets.
type limiter struct {
	principal, tenant Rate
	max               int
	mu                sync.Mutex
	buckets           map[string]*ratelimit.Bucket
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
	return &limiter{principal: l.PerPrincipal, tenant: l.PerTenant, max: m, buckets: make(map[string]*ratelimit.Bucket)}, nil
}

// take spends a request of p's buckets at now. When one is empty it
// returns how long until it holds a request again, and which limit that
// is (a bucket checked before it has spent its request: a refused request
// still counts against the caller).
func (l *limiter) take(p *Principal, now time.Time) (time.Duration, string) {
	if l == nil {
		return 0, ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.principal.PerSecond > 0 {
		if w := l.bucket("p:"+p.ID()).Take(now, l.principal.PerSecond, l.principal.Burst); w > 0 {
			return w, "caller"
		}
	}
	if l.tenant.PerSecond > 0 && p != nil && p.Tenant != "" {
		if w := l.bucket("t:"+p.Tenant).Take(now, l.tenant.PerSecond, l.tenant.Burst); w > 0 {
			return w, "tenant"
		}
	}
	return 0, ""
}

// bucket returns key's bucket, making room for it when full.
func (l *limiter) bucket(key string) *ratelimit.Bucket {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.max {
			l.evict()
		}
		b = new(ratelimit.Bucket)
		l.buckets[key] = b
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
		if oldest == "" || b.Idle().Before(at) {
			oldest, at = k, b.Idle()
		}
		if n++; n == 16 {
			break
		}
	}
	delete(l.buckets, oldest)
}
