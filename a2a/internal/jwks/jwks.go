// Package jwks keeps the public keys an issuer publishes as a JSON Web
// Key Set (RFC 7517) at a URL, for the module's three verifiers: bearer
// tokens (a2a/auth), agent cards' signatures (a2a/cardsign) and push
// notifications' signatures (a2a/push). The keys a verifier pins in its
// configuration are its own business; a Cache holds the fetched ones.
//
// A Cache starts no goroutine: it fetches on its callers' path. The call
// that finds the keys older than Config.Refresh, or that needs a key they
// lack, fetches them, and the calls that need the new keys wait for that
// one fetch, each giving up when its own context ends. The fetch is
// detached from the context of the call that started it (it takes
// 10 seconds at most): the calls waiting for it must not fail because that
// one went away, nor may a client that cancels requests naming unknown
// keys keep the keys from ever being refreshed. Fetches start at most once
// per Config.MinInterval, however many calls need keys the set lacks.
//
// A fetched set holds the keys that can verify signatures: RSA, EC and
// Ed25519 public keys whose "use" is empty or "sig". The others
// (encryption keys, symmetric keys, types the module does not verify
// with, keys that do not parse) are left out without failing the set,
// which an issuer may share with other uses. A set that publishes private
// key material is refused whole: a key others may have read proves
// nothing. So is a document that is not a JWKS, is over 1 MiB, or comes
// with a status other than 200.
//
// When keys grow older than Config.Refresh and cannot be fetched again,
// Config.Expire decides whether they are still trusted. Errors name the
// URL (its password redacted) and never key material.
package jwks

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
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

const (
	// Config's defaults.
	defaultRefresh     = 10 * time.Minute
	defaultMinInterval = 30 * time.Second
	// maxBytes bounds a JWKS document: a few dozen keys fit many times.
	maxBytes = 1 << 20
	// fetchTimeout bounds one fetch whatever the HTTP client's timeout.
	fetchTimeout = 10 * time.Second
)

// Config says where a Cache fetches its keys and how it keeps them. URL
// or Issuer is required.
type Config struct {
	// URL is the JWKS's absolute http(s) URL.
	URL string
	// Issuer, without URL, is an OpenID Connect issuer whose JWKS is
	// the one its discovery document (Issuer +
	// "/.well-known/openid-configuration", OpenID Connect Discovery 1.0
	// section 4) names as jwks_uri. The first fetch reads the document,
	// and so does every fetch until one has read it; the document's
	// issuer must be Issuer exactly (section 4.3), or its keys could be
	// another issuer's.
	Issuer string
	// Client fetches URL; nil means a client with a 10 s timeout.
	Client *http.Client
	// Refresh is how old the keys may grow before the next call fetches
	// them again: 10 minutes when zero.
	Refresh time.Duration
	// MinInterval is the least time between the starts of two fetches,
	// however many calls need a key the set lacks: 30 seconds when zero.
	// With Expire, keys that grew older than Refresh after a good fetch
	// are fetched at once, whatever MinInterval.
	MinInterval time.Duration
	// Expire says what keys older than Refresh are worth until a fetch
	// replaces them.
	//
	// Without Expire they serve as before: while the fetch is under way
	// (the calls that do not need a new key do not wait for it), and for
	// as long as fetching fails. A verifier keeps working through an
	// outage of the issuer's JWKS, and a key the issuer withdrew stays
	// trusted until a fetch succeeds.
	//
	// With Expire they are trusted no more: the calls wait for the fetch,
	// and if it fails no fetched key is trusted until one succeeds, so
	// that a key the issuer removed (revoked) is trusted at most Refresh
	// after the last fetch that published it, whatever keeps the JWKS
	// from being fetched. Each user of the package says where it builds
	// its Cache why it chose one or the other.
	Expire bool
	// Now is the clock: time.Now when nil. Tests pass one they move.
	Now func() time.Time
}

// Key is a public key that verifies signatures.
type Key struct {
	// ID is the JWK's kid, "" when it has none.
	ID string
	// Alg is the JWK's alg, "" when it names none.
	Alg string
	// Public is an *rsa.PublicKey, an *ecdsa.PublicKey or an
	// ed25519.PublicKey.
	Public crypto.PublicKey
}

// SigningKey returns the key k verifies signatures with, or false when k
// cannot verify any: a symmetric key, a key for encryption, a key of
// another type. A private key verifies by its public half (a fetched set
// that holds one is refused before this is asked).
func SigningKey(k jose.JSONWebKey) (Key, bool) {
	if k.Use != "" && k.Use != "sig" {
		return Key{}, false
	}
	pub := k.Public()
	if !pub.Valid() {
		return Key{}, false
	}
	switch pub.Key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return Key{ID: k.KeyID, Alg: k.Algorithm, Public: pub.Key}, true
	}
	return Key{}, false
}

// Fits reports whether k may verify a signature made with the JWS
// algorithm alg: the key's type and curve are those alg uses and, when
// the JWK names an alg, it is this one. This is what keeps a signature
// from choosing how its key is used.
func (k Key) Fits(alg string) bool {
	if k.Alg != "" && k.Alg != alg {
		return false
	}
	switch key := k.Public.(type) {
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

// same reports whether k and o are the same key under the same kid and
// alg.
func (k Key) same(o Key) bool {
	pub, ok := k.Public.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.ID == o.ID && k.Alg == o.Alg && pub.Equal(o.Public)
}

// Named returns the keys of keys whose ID is kid.
func Named(keys []Key, kid string) []Key {
	var named []Key
	for _, k := range keys {
		if k.ID == kid {
			named = append(named, k)
		}
	}
	return named
}

// Set is the keys a call to Cache.Keys found.
type Set struct {
	// Keys are the keys of the last good fetch.
	Keys []Key
	// Epoch counts the fetches that dropped a key the fetch before had,
	// or changed it under its kid: what a verifier remembers having
	// verified holds only in the epoch it was verified in.
	Epoch uint64
	// lacking says why a key is not among Keys: the fetch this call made
	// or waited for, or why it made none. Only Keys(ctx, true) sets it.
	lacking error
}

// Cache holds the keys of one JWKS URL (see the package documentation).
// It is safe for concurrent use.
type Cache struct {
	issuer      string // to discover url from, "" when given
	client      *http.Client
	refresh     time.Duration
	minInterval time.Duration
	expire      bool
	now         func() time.Time

	mu sync.Mutex
	// url is the JWKS's, "" until discovered; name is url for messages,
	// its password redacted (the discovery document's before).
	url, name string
	keys      []Key
	fetched   time.Time // of keys; zero before the first good fetch
	tried     time.Time // when the last fetch started
	// fetching is closed when the fetch under way ends; nil without one.
	fetching chan struct{}
	// err is why the last fetch failed, nil after a good one.
	err   error
	epoch uint64
}

// New returns a Cache of cfg.URL, or an error saying which field of cfg
// cannot be used. It fetches nothing: the first call to Keys does.
func New(cfg Config) (*Cache, error) {
	if cfg.Refresh < 0 || cfg.MinInterval < 0 {
		return nil, errors.New("the refresh and minimum intervals cannot be negative")
	}
	c := &Cache{
		url:         cfg.URL,
		client:      cfg.Client,
		refresh:     or(cfg.Refresh, defaultRefresh),
		minInterval: or(cfg.MinInterval, defaultMinInterval),
		expire:      cfg.Expire,
		now:         cfg.Now,
	}
	switch {
	case cfg.URL != "" && cfg.Issuer != "":
		return nil, errors.New("give the JWKS URL or the issuer to discover it from, not both")
	case cfg.URL == "":
		doc, err := httpURL(DiscoveryURL(cfg.Issuer))
		if err != nil {
			return nil, fmt.Errorf("issuer: %w", err)
		}
		c.issuer, c.name = cfg.Issuer, doc.Redacted()
	default:
		u, err := httpURL(cfg.URL)
		if err != nil {
			return nil, err
		}
		c.name = u.Redacted()
	}
	if c.client == nil {
		c.client = &http.Client{Timeout: fetchTimeout}
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c, nil
}

// httpURL parses raw, an absolute http(s) URL.
func httpURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an absolute http(s) URL", raw)
	}
	return u, nil
}

// DiscoveryURL is where an OpenID Connect issuer publishes its discovery
// document.
func DiscoveryURL(issuer string) string {
	return strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration"
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Keys returns the keys, fetched first when they are older than Refresh
// or, with refetch (the caller needs a key they lack), whatever their
// age, unless a fetch started less than MinInterval ago. Its error is
// non-nil only when it has no keys to return: none were ever fetched,
// they expired (see Config.Expire), or ctx ended while it waited for a
// fetch; Unavailable reports that of it.
func (c *Cache) Keys(ctx context.Context, refetch bool) (Set, error) {
	c.mu.Lock()
	now := c.now()
	usable := c.usable(now)
	if usable && !refetch && now.Sub(c.fetched) < c.refresh {
		s := Set{Keys: c.keys, Epoch: c.epoch}
		c.mu.Unlock()
		return s, nil
	}
	if wait := c.fetching; wait != nil {
		if usable && !refetch {
			// Old keys serve until the fetch under way replaces them
			// (without Expire: with it, usable keys are not old).
			s := Set{Keys: c.keys, Epoch: c.epoch}
			c.mu.Unlock()
			return s, nil
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return Set{}, unavailable{fmt.Errorf("waiting for the JWKS at %s: %w", c.name, context.Cause(ctx))}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.result(c.now(), true)
	}
	if !c.due(now) {
		defer c.mu.Unlock()
		return c.result(now, false)
	}
	done := make(chan struct{})
	c.fetching, c.tried = done, now
	c.mu.Unlock()

	keys, err := c.fetch(ctx)

	c.mu.Lock()
	defer c.mu.Unlock()
	now = c.now()
	if err == nil {
		if dropsAny(c.keys, keys) {
			c.epoch++
		}
		c.keys, c.fetched = keys, now
	}
	c.err = err
	c.fetching = nil
	close(done)
	return c.result(now, true)
}

// usable reports whether the keys may be used at now; c.mu is held.
func (c *Cache) usable(now time.Time) bool {
	return !c.fetched.IsZero() && (!c.expire || now.Sub(c.fetched) < c.refresh)
}

// due reports whether a fetch may start at now; c.mu is held. Fetches
// are spaced by MinInterval, failed ones included, but with Expire keys
// that aged past Refresh after a good fetch are fetched at once: they
// would otherwise be missing for the rest of the interval.
func (c *Cache) due(now time.Time) bool {
	return c.tried.IsZero() || now.Sub(c.tried) >= c.minInterval ||
		c.expire && c.err == nil && !c.fetched.IsZero() && now.Sub(c.fetched) >= c.refresh
}

// result is what Keys returns at now once it fetched or waited for a
// fetch (fetched), or found none due; c.mu is held.
func (c *Cache) result(now time.Time, fetched bool) (Set, error) {
	age := now.Sub(c.fetched).Round(time.Second)
	wait := c.tried.Add(c.minInterval).Sub(now).Round(time.Second)
	if !c.usable(now) {
		switch {
		case c.fetched.IsZero() && fetched:
			return Set{}, unavailable{fmt.Errorf("fetch JWKS from %s: %w", c.name, c.err)}
		case c.fetched.IsZero():
			return Set{}, unavailable{fmt.Errorf("the JWKS at %s could not be fetched (trying again no sooner than in %s): %w", c.name, wait, c.err)}
		case c.err == nil: // Refresh is shorter than the wait for a fetch
			return Set{}, unavailable{fmt.Errorf("the keys fetched from %s expired at once", c.name)}
		case fetched:
			return Set{}, unavailable{fmt.Errorf("the keys fetched from %s %s ago expired, and fetching them again failed: %w", c.name, age, c.err)}
		}
		return Set{}, unavailable{fmt.Errorf("the keys fetched from %s %s ago expired, and it could not be fetched since (trying again no sooner than in %s): %w", c.name, age, wait, c.err)}
	}
	s := Set{Keys: c.keys, Epoch: c.epoch}
	switch {
	case fetched && c.err == nil:
		s.lacking = fmt.Errorf("is not in the JWKS at %s", c.name)
	case fetched:
		s.lacking = fmt.Errorf("is not in the JWKS fetched from %s %s ago, and fetching it again failed: %w", c.name, age, c.err)
	case c.err != nil:
		s.lacking = fmt.Errorf("is not in the JWKS fetched from %s %s ago, which could not be fetched again (trying again no sooner than in %s): %w", c.name, age, wait, c.err)
	default:
		s.lacking = fmt.Errorf("is not in the JWKS at %s (fetched again no sooner than in %s)", c.name, wait)
	}
	return s, nil
}

// Lookup returns the keys whose kid is kid, fetching the set again (as
// Keys does) when it lacks one. Its error names kid and says why there is
// none; Unavailable reports whether the cache has no keys at all.
func (c *Cache) Lookup(ctx context.Context, kid string) ([]Key, error) {
	s, err := c.Keys(ctx, false)
	if err == nil {
		if keys := Named(s.Keys, kid); len(keys) > 0 {
			return keys, nil
		}
		s, err = c.Keys(ctx, true)
	}
	if err != nil {
		return nil, fmt.Errorf("kid %q: %w", kid, err)
	}
	if keys := Named(s.Keys, kid); len(keys) > 0 {
		return keys, nil
	}
	return nil, fmt.Errorf("kid %q %w", kid, s.lacking)
}

// unavailable wraps the errors of a Cache that has no keys to offer.
type unavailable struct{ error }

func (u unavailable) Unwrap() error { return u.error }

// Unavailable reports whether err, from Keys or Lookup, says the cache has
// no keys at all: the fault is then the JWKS's (or the network's), not
// that of what names a key.
func Unavailable(err error) bool {
	_, ok := errors.AsType[unavailable](err)
	return ok
}

// dropsAny reports whether some key of old is not in keys: no key there
// has its kid, alg and public key.
func dropsAny(old, keys []Key) bool {
	for _, o := range old {
		if !slices.ContainsFunc(keys, o.same) {
			return true
		}
	}
	return false
}

// fetch reads the JWKS, discovering its URL first if it has none yet.
// Its errors do not name the JWKS's URL: the messages of Keys do.
func (c *Cache) fetch(ctx context.Context) ([]Key, error) {
	// Detached from ctx's end (see the package documentation).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fetchTimeout)
	defer cancel()
	c.mu.Lock()
	jwksURL := c.url
	c.mu.Unlock()
	if jwksURL == "" { // one fetch at a time: no other sets it meanwhile
		u, err := c.discover(ctx)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.url, c.name = u.String(), u.Redacted()
		c.mu.Unlock()
		jwksURL = u.String()
	}
	body, err := c.get(ctx, jwksURL, "application/jwk-set+json, application/json")
	if err != nil {
		return nil, err
	}
	return parse(body)
}

// discover reads the issuer's discovery document for its JWKS's URL.
func (c *Cache) discover(ctx context.Context) (*url.URL, error) {
	doc := DiscoveryURL(c.issuer)
	body, err := c.get(ctx, doc, "application/json")
	if err != nil {
		return nil, fmt.Errorf("the OpenID Connect discovery document: %w", err)
	}
	var meta struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(body, &meta); err != nil {
		return nil, errors.New("the OpenID Connect discovery document is not a JSON object")
	}
	if meta.Issuer != c.issuer {
		return nil, fmt.Errorf("the OpenID Connect discovery document names the issuer %q, not %q", meta.Issuer, c.issuer)
	}
	u, err := httpURL(meta.JWKSURI)
	if err != nil {
		return nil, fmt.Errorf("the OpenID Connect discovery document's jwks_uri: %w", err)
	}
	return u, nil
}

// get reads the document at raw, at most maxBytes of it. Its errors do
// not name raw.
func (c *Cache) get(ctx context.Context, raw, accept string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	resp, err := c.client.Do(req)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			return nil, ue.Err // without the URL again
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading it: %w", err)
	}
	if len(body) > maxBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxBytes)
	}
	return body, nil
}

// parse returns the keys of a JWKS document that verify signatures.
func parse(doc []byte) ([]Key, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(doc, &set); err != nil || set.Keys == nil {
		return nil, errors.New(`not a JWKS (want {"keys": [...]})`)
	}
	var keys []Key
	for _, raw := range set.Keys {
		var k jose.JSONWebKey
		if k.UnmarshalJSON(raw) != nil {
			continue
		}
		if _, symmetric := k.Key.([]byte); !symmetric && !k.IsPublic() {
			return nil, fmt.Errorf("it publishes a private key (kid %q)", k.KeyID)
		}
		if vk, ok := SigningKey(k); ok {
			keys = append(keys, vk)
		}
	}
	return keys, nil
}
