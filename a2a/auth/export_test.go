package auth

import (
	"context"
	"time"
)

// Cached reports whether j would admit token from its cache, exp aside,
// for the tests.
func (j *JWT) Cached(token string) bool {
	ks := j.jwksKeys(context.Background())
	e, ok := j.cache.get(digest(token), time.Now())
	return ok && ks.err == nil && e.epoch == ks.Epoch
}

// CachedTokens is how many tokens j's cache holds, for the tests.
func (j *JWT) CachedTokens() int {
	n := 0
	for i := range j.cache.shards {
		s := &j.cache.shards[i]
		s.mu.Lock()
		n += len(s.index)
		s.mu.Unlock()
	}
	return n
}

// AuthenticateUncached is Authenticate without the cache of verified
// tokens, for the benchmark.
func (j *JWT) AuthenticateUncached(ctx context.Context, creds Credentials) (*Principal, error) {
	token, err := j.bearer(creds)
	if err != nil {
		return nil, err
	}
	return j.verified(ctx, token, j.jwksKeys(ctx))
}
