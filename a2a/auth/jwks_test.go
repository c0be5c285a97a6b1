package auth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

// unavailable stands for the error of an authenticator that has no keys:
// neither of the sentinels.
const unavailable = "(no keys)"

func TestJWKSRefresh(t *testing.T) {
	a, b, pinned := newTestKeys(t), newTestKeys(t), newTestKeys(t)
	tokA := mint(t, jose.RS256, a.rsa, "a", claims(nil))
	tokB := mint(t, jose.ES256, b.ec, "b", claims(nil))
	tokPinned := mint(t, jose.EdDSA, pinned.ed, "p", claims(nil))
	setA := jwks(map[string]any{"a": &a.rsa.PublicKey})
	setB := jwks(map[string]any{"b": b.ec.Public()})
	setAB := jwks(map[string]any{"a": &a.rsa.PublicKey, "b": b.ec.Public()})

	type step struct {
		serve  *jose.JSONWebKeySet // the JWKS from this step on; nil: as before
		raw    string              // or this document
		down   bool                // the server answers 503 from this step on (until up)
		up     bool
		closed bool // the server is gone
		token  string
		reason string // "" admitted; unavailable; else the refusal's reason
		hits   int64  // fetches so far
	}
	for _, tc := range []struct {
		name  string
		cfg   auth.JWTConfig
		first *jose.JSONWebKeySet
		steps []step
	}{{
		name:  "a token naming a new key fetches the keys at once",
		cfg:   auth.JWTConfig{MinRefreshInterval: time.Nanosecond},
		first: setA,
		steps: []step{
			{token: tokA, hits: 1},
			{token: tokA, hits: 1},
			{serve: setB, token: tokB, hits: 2},
			{token: tokA, reason: "unknown key id", hits: 3}, // the old key is gone
		},
	}, {
		name:  "unknown key ids fetch at most once per MinRefreshInterval",
		first: setA,
		steps: []step{
			{token: tokA, hits: 1},
			{serve: setAB, token: tokB, reason: "unknown key id", hits: 1},
			{token: mint(t, jose.RS256, a.rsa, "c", claims(nil)), reason: "unknown key id", hits: 1},
		},
	}, {
		name:  "keys older than RefreshInterval are fetched again",
		cfg:   auth.JWTConfig{RefreshInterval: time.Nanosecond, MinRefreshInterval: time.Nanosecond},
		first: setAB,
		steps: []step{
			{token: tokA, hits: 1},
			{token: tokA, hits: 2},
			{serve: setB, token: tokB, hits: 3},
			{token: tokA, reason: "unknown key id", hits: 5}, // stale, then unknown
		},
	}, {
		name:  "a failed fetch keeps the last good keys",
		cfg:   auth.JWTConfig{RefreshInterval: time.Nanosecond, MinRefreshInterval: time.Nanosecond},
		first: setA,
		steps: []step{
			{token: tokA, hits: 1},
			{down: true, serve: setB, token: tokA, hits: 2},
			{token: tokB, reason: "unknown key id", hits: 4},
			{raw: `{"keys": "no"}`, up: true, token: tokA, hits: 5},
			{raw: `not json`, token: tokA, hits: 6},
			{raw: `{"other": []}`, token: tokA, hits: 7},
			{raw: `{"keys": [` + strings.Repeat(`{"kty":"none"},`, 1<<17) + `{}]}`, token: tokA, hits: 8}, // over 1 MiB
			{serve: setAB, token: tokB, hits: 9},
			{closed: true, token: tokA, hits: 9},
			{token: tokB, hits: 9},
		},
	}, {
		name:  "no keys ever fetched",
		first: setA,
		steps: []step{
			{down: true, token: tokA, reason: unavailable, hits: 1},
			{up: true, token: tokA, reason: unavailable, hits: 1}, // rate limited
		},
	}, {
		name:  "no keys ever fetched, beside pinned ones",
		cfg:   auth.JWTConfig{Keys: jwks(map[string]any{"p": pinned.ed.Public()})},
		first: setA,
		steps: []step{
			{down: true, token: tokPinned, hits: 1},
			{token: tokA, reason: "unknown key id", hits: 1},
		},
	}, {
		name:  "keys of other kinds and broken keys are left out",
		first: setA,
		steps: []step{
			{raw: `{"keys": [{"kty":"oct","kid":"h","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}, {"kty":"EC","kid":"x","crv":"P-256","x":"AA"}, {"kty":"OKP","kid":"u","crv":"X25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08"}, ` + string(must(setA.Keys[0].MarshalJSON())) + `]}`, token: tokA, hits: 1},
		},
	}, {
		name:  "a key for encryption does not verify",
		first: &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &a.rsa.PublicKey, KeyID: "a", Use: "enc"}}},
		steps: []step{
			{token: tokA, reason: "unknown key id", hits: 1},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newJWKSServer(t, tc.first)
			cfg := tc.cfg
			cfg.Issuer, cfg.Audience, cfg.JWKSURL = testIssuer, testAudience, srv.URL
			au, err := auth.NewJWT(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tc.steps {
				switch {
				case s.serve != nil:
					srv.serve(t, s.serve)
				case s.raw != "":
					raw := []byte(s.raw)
					srv.doc.Store(&raw)
				}
				switch {
				case s.down:
					srv.down.Store(true)
				case s.up:
					srv.down.Store(false)
				case s.closed:
					srv.Close()
				}
				_, err := au.Authenticate(context.Background(), bearer("Bearer "+s.token))
				switch s.reason {
				case "":
					if err != nil {
						t.Errorf("step %d: %v", i, err)
					}
				case unavailable:
					if err == nil || errors.Is(err, auth.ErrInvalidCredentials) || errors.Is(err, auth.ErrNoCredentials) {
						t.Errorf("step %d: err = %v, want neither sentinel", i, err)
					}
				default:
					if !errors.Is(err, auth.ErrInvalidCredentials) || reasonOf(err) != s.reason {
						t.Errorf("step %d: err = %v, want the reason %q", i, err, s.reason)
					}
				}
				if got := srv.hits.Load(); got != s.hits {
					t.Errorf("step %d: %d fetches, want %d", i, got, s.hits)
				}
			}
		})
	}
}

// TestJWKSFetchOutlivesCaller: a request that waits for another's fetch
// leaves when its context ends, and the fetch itself runs to its end
// though the request that started it has gone, so that its keys serve the
// next requests.
func TestJWKSFetchOutlivesCaller(t *testing.T) {
	k := newTestKeys(t)
	doc := must(jwks(map[string]any{"a": &k.rsa.PublicKey}).Keys[0].MarshalJSON())
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		arrived <- struct{}{}
		<-release
		w.Write([]byte(`{"keys":[` + string(doc) + `]}`))
	}))
	defer srv.Close()
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	creds := bearer("Bearer " + mint(t, jose.RS256, k.rsa, "a", claims(nil)))

	firstCtx, cancelFirst := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := a.Authenticate(firstCtx, creds)
		first <- err
	}()
	<-arrived

	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Authenticate(gone, creds); !errors.Is(err, context.Canceled) {
		t.Errorf("a waiting request whose context ended: err = %v", err)
	}
	cancelFirst()
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the request that fetched: %v", err)
	}
	if _, err := a.Authenticate(context.Background(), creds); err != nil {
		t.Errorf("after the fetch: %v", err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// TestJWKSRefreshHoldsUpNoOne: while the keys are fetched again for their
// age, requests whose keys are cached go on with them.
func TestJWKSRefreshHoldsUpNoOne(t *testing.T) {
	k := newTestKeys(t)
	doc := must(json.Marshal(jwks(map[string]any{"a": &k.rsa.PublicKey})))
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) > 1 {
			arrived <- struct{}{}
			<-release
		}
		w.Write(doc)
	}))
	defer srv.Close()
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL,
		RefreshInterval: time.Nanosecond, MinRefreshInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	creds := bearer("Bearer " + mint(t, jose.RS256, k.rsa, "a", claims(nil)))
	if _, err := a.Authenticate(context.Background(), creds); err != nil {
		t.Fatal(err)
	}
	refreshing := make(chan error, 1)
	go func() {
		_, err := a.Authenticate(context.Background(), creds)
		refreshing <- err
	}()
	<-arrived
	other := make(chan error, 1)
	go func() {
		_, err := a.Authenticate(context.Background(), creds)
		other <- err
	}()
	held := false
	select {
	case err := <-other:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(10 * time.Second): // a bound on the wait, not a speed test
		held = true
		t.Error("a request with cached keys waited for the refresh")
	}
	close(release)
	if err := <-refreshing; err != nil {
		t.Error(err)
	}
	if held {
		<-other
	}
}
