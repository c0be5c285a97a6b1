package jwks

import (
	"context"
	"crypto/elliptic"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a/internal/jwks/jwkstest"
)

// issuer is an OpenID Connect issuer on 127.0.0.1 whose discovery
// document a test changes; its JWKS is a jwkstest.Server.
type issuer struct {
	*httptest.Server
	jwks server

	mu  sync.Mutex
	doc func(self string) (int, any) // the document's status and body
}

func newIssuer(t *testing.T, keys map[string]any) *issuer {
	t.Helper()
	is := &issuer{jwks: newServer(t, keys)}
	is.answer(func(self string) (int, any) {
		return http.StatusOK, map[string]string{"issuer": self, "jwks_uri": is.jwks.URL + "/jwks.json"}
	})
	is.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		is.mu.Lock()
		status, body := is.doc(is.URL)
		is.mu.Unlock()
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(is.Close)
	return is
}

func (is *issuer) answer(doc func(self string) (int, any)) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.doc = doc
}

// TestDiscovery: a Cache given an OpenID Connect issuer finds the JWKS
// its discovery document names, and refuses a document of another
// issuer, one naming no usable jwks_uri, or none at all, saying why;
// until a fetch reads the document, each due fetch tries again.
func TestDiscovery(t *testing.T) {
	ctx := context.Background()
	key := newEC(t, elliptic.P256())
	is := newIssuer(t, map[string]any{"k1": key.Public()})
	clock := jwkstest.NewClock(time.Now())
	c := newCache(t, Config{Issuer: is.URL, Now: clock.Now, MinInterval: time.Minute})

	for _, tc := range []struct {
		name string
		doc  func(self string) (int, any)
		want string
	}{
		{"no document", func(string) (int, any) { return http.StatusNotFound, nil }, "discovery document: HTTP 404"},
		{"another issuer", func(string) (int, any) {
			return http.StatusOK, map[string]string{"issuer": "https://evil.example", "jwks_uri": is.jwks.URL}
		}, `names the issuer "https://evil.example"`},
		{"a jwks_uri that is not http(s)", func(self string) (int, any) {
			return http.StatusOK, map[string]string{"issuer": self, "jwks_uri": "file:///etc/keys"}
		}, "jwks_uri"},
		{"not an object", func(string) (int, any) { return http.StatusOK, []int{1} }, "not a JSON object"},
	} {
		is.answer(tc.doc)
		_, err := c.Keys(ctx, false)
		if err == nil || !Unavailable(err) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "openid-configuration") {
			t.Errorf("%s: Keys = %v; want it unavailable, naming the document and saying %q", tc.name, err, tc.want)
		}
		clock.Advance(time.Minute) // the next fetch is due
	}

	is.answer(func(self string) (int, any) {
		return http.StatusOK, map[string]string{"issuer": self, "jwks_uri": is.jwks.URL + "/jwks.json"}
	})
	s, err := c.Keys(ctx, false)
	if err != nil || len(s.Keys) != 1 || s.Keys[0].ID != "k1" {
		t.Fatalf("Keys once the document names the JWKS = %+v, %v; want k1", s, err)
	}
	// The JWKS's URL is kept: a refetch reads the JWKS alone.
	is.answer(func(string) (int, any) { return http.StatusInternalServerError, nil })
	is.jwks.publish(t, map[string]any{"k1": key.Public(), "k2": newEC(t, elliptic.P256()).Public()})
	clock.Advance(time.Minute)
	if keys, err := c.Lookup(ctx, "k2"); err != nil || len(keys) != 1 {
		t.Fatalf("Lookup of a key rotated in = %v, %v", keys, err)
	}
}

// New refuses a configuration naming both a URL and an issuer, or an
// issuer that is not an http(s) URL.
func TestDiscoveryConfig(t *testing.T) {
	for _, cfg := range []Config{
		{URL: "https://idp.example/jwks.json", Issuer: "https://idp.example"},
		{Issuer: "idp.example"},
		{},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error", cfg)
		}
	}
}
