package auth

import (
	"context"
	"time"
)

// Cached reports whether j would admit token from its cache, exp aside,
// for the tests.
func (j *JWT) Cached(token string) bool {
	e, ok := j.cache.get(digest(token), time.Now())
	if !ok || j.remote == nil {
		return ok
	}
	j.remote.mu.Lock()
	defer j.remote.mu.Unlock()
	return e.epoch == j.remote.epoch
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
	var ks jwksKeys
	if j.remote != nil {
		ks.remote, ks.epoch, ks.err = j.remote.get(ctx, false)
	}
	return j.verified(ctx, token, ks)
}
