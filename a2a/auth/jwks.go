package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// verifyKey is a public key a JWT may be signed with.
type verifyKey struct {
	kid string
	// alg is the JWK's alg, "" when it names none.
	alg string
	// key is an *rsa.PublicKey, an *ecdsa.PublicKey or an ed25519.PublicKey.
	key any
}

// publicSigningKey returns the public key of k for verifying signatures,
// or false when k cannot serve: a symmetric key, a key for encryption, a
// key of a type no allowed algorithm uses. A private key serves by its
// public half.
func publicSigningKey(k jose.JSONWebKey) (verifyKey, bool) {
	if k.Use != "" && k.Use != "sig" {
		return verifyKey{}, false
	}
	pub := k.Public()
	if !pub.Valid() {
		return verifyKey{}, false
	}
	switch pub.Key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return verifyKey{kid: k.KeyID, alg: k.Algorithm, key: pub.Key}, true
	}
	return verifyKey{}, false
}

// fits reports whether k may verify a signature made with alg: the key's
// type and curve are those alg uses and, when the JWK names an alg, it is
// this one. This is what keeps a token from choosing how its key is used.
func (k verifyKey) fits(alg string) bool {
	if k.alg != "" && k.alg != alg {
		return false
	}
	switch key := k.key.(type) {
	case *rsa.PublicKey:
		switch jose.SignatureAlgorithm(alg) {
		case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512:
			return true
		}
	case *ecdsa.PublicKey:
		switch jose.SignatureAlgorithm(alg) {
		case jose.ES256:
			return key.Curve == elliptic.P256()
		case jose.ES384:
			return key.Curve == elliptic.P384()
		case jose.ES512:
			return key.Curve == elliptic.P521()
		}
	case ed25519.PublicKey:
		return jose.SignatureAlgorithm(alg) == jose.EdDSA
	}
	return false
}

// maxJWKSBytes bounds a JWKS document: a few dozen keys fit many times.
const maxJWKSBytes = 1 << 20

// fetchTimeout bounds one JWKS fetch whatever the HTTP client's timeout.
const fetchTimeout = 10 * time.Second

// remoteKeys is the cache of a JWKS URL's keys. It refreshes on the
// request path, never in the background: the request that finds the keys
// older than refresh, or that needs a key they lack, fetches them while
// the requests that need the new keys wait for that one fetch, and the
// rest go on with the keys they have. Fetches start at most once per
// minRefresh however many tokens name unknown keys, and a failed fetch
// keeps the last good keys.
type remoteKeys struct {
	url        string
	client     *http.Client
	refresh    time.Duration
	minRefresh time.Duration

	mu      sync.Mutex
	keys    []verifyKey
	fetched time.Time // of the keys; zero before the first good fetch
	tried   time.Time // when the last fetch started
	// fetching is closed when the fetch under way ends; nil without one.
	fetching chan struct{}
	// err is why the last fetch failed, nil after a good one.
	err error
	// epoch counts the fetches that dropped a key the one before had (or
	// changed it under its kid): the cache of verified tokens trusts only
	// the tokens verified in the current epoch.
	epoch uint64
}

// get returns the cached keys and their epoch, refreshed first if they
// are older than refresh or, with stale, whatever their age (the caller
// needs a key they lack), unless a fetch started less than minRefresh
// ago. Its error is non-nil only when it has no keys to return: none were
// ever fetched, or ctx ended while it waited for a fetch.
func (r *remoteKeys) get(ctx context.Context, stale bool) ([]verifyKey, uint64, error) {
	r.mu.Lock()
	now := time.Now()
	have := !r.fetched.IsZero()
	if have && !stale && now.Sub(r.fetched) < r.refresh {
		defer r.mu.Unlock()
		return r.keys, r.epoch, nil
	}
	if wait := r.fetching; wait != nil {
		if have && !stale {
			// Old keys serve until the fetch under way replaces them.
			defer r.mu.Unlock()
			return r.keys, r.epoch, nil
		}
		r.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("auth: waiting for the JWKS: %w", ctx.Err())
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.result()
	}
	if !r.tried.IsZero() && now.Sub(r.tried) < r.minRefresh {
		defer r.mu.Unlock()
		return r.result()
	}
	done := make(chan struct{})
	r.fetching, r.tried = done, now
	r.mu.Unlock()

	keys, err := r.fetch(ctx)

	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		if dropsAny(r.keys, keys) {
			r.epoch++
		}
		r.keys, r.fetched = keys, time.Now()
	}
	r.err = err
	r.fetching = nil
	close(done)
	return r.result()
}

// dropsAny reports whether some key of old is not in keys: no key there
// has its kid, alg and public key.
func dropsAny(old, keys []verifyKey) bool {
	for _, o := range old {
		if !slices.ContainsFunc(keys, o.same) {
			return true
		}
	}
	return false
}

// same reports whether k and o are the same key under the same kid and
// alg.
func (k verifyKey) same(o verifyKey) bool {
	pub, ok := k.key.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.kid == o.kid && k.alg == o.alg && pub.Equal(o.key)
}

// result is what get returns without fetching; r.mu is held.
func (r *remoteKeys) result() ([]verifyKey, uint64, error) {
	if r.fetched.IsZero() {
		return nil, 0, r.err // a fetch ended, and none well
	}
	return r.keys, r.epoch, nil
}

// fetch reads the JWKS. It is detached from ctx's end (though bounded by
// fetchTimeout): other requests wait for the fetch, and one caller going
// away must not fail it for them, or a client cancelling requests with
// unknown key ids could keep the keys from ever refreshing.
func (r *remoteKeys) fetch(ctx context.Context) ([]verifyKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, fmt.Errorf("auth: fetching the JWKS: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: fetching the JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("auth: fetching the JWKS: %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("auth: reading the JWKS: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return nil, fmt.Errorf("auth: the JWKS is over %d bytes", maxJWKSBytes)
	}
	return parseJWKS(body)
}

// parseJWKS returns the signing keys of a JWKS document. A key that does
// not parse or cannot verify signatures is left out rather than failing
// the set: an issuer may publish kinds of keys this package does not use
// beside the ones it does.
func parseJWKS(doc []byte) ([]verifyKey, error) {
	var set struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil {
		return nil, fmt.Errorf("auth: parsing the JWKS: %w", err)
	}
	if set.Keys == nil {
		return nil, errors.New("auth: the JWKS has no \"keys\"")
	}
	var keys []verifyKey
	for _, raw := range *set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			continue
		}
		if vk, ok := publicSigningKey(k); ok {
			keys = append(keys, vk)
		}
	}
	return keys, nil
}
