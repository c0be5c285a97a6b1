package bridge

import (
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/ratelimit"
)

// limiter is a RemoteAgent's rate limit.
type limiter struct {
	rate   Rate
	mu     sync.Mutex
	bucket ratelimit.Bucket
}

func newLimiter(r Rate) *limiter { return &limiter{rate: r} }

// admit takes a call of the agent's rate limit, or refuses the run with a
// retryable error that names the agent.
func (r *RemoteAgent) admit() error {
	l := r.limit
	if l == nil {
		return nil
	}
	l.mu.Lock()
	wait := l.bucket.Take(time.Now(), l.rate.PerSecond, l.rate.Burst)
	l.mu.Unlock()
	if wait > 0 {
		return a2a.Busy(wait, "agent %s (%s): this gateway's rate limit of %g calls per second to it is reached; retry in %v",
			r.name, r.url, l.rate.PerSecond, wait.Round(time.Millisecond))
	}
	return nil
}
