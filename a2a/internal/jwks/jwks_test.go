package jwks

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a/internal/jwks/jwkstest"
)

// TestMain fails the run if a test leaves a goroutine behind: a Cache
// starts none, and its fetches end with the calls that make them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// server is a JWKS endpoint publishing keys.
type server struct{ *jwkstest.Server }

func newServer(t *testing.T, keys map[string]any) server {
	t.Helper()
	s := server{jwkstest.NewServer(t, nil)}
	s.publish(t, keys)
	return s
}

// publish serves the public JWKS of keys, by kid.
func (s server) publish(t *testing.T, keys map[string]any) {
	t.Helper()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for kid, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k, KeyID: kid, Use: "sig"})
	}
	doc, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	s.Answer(http.StatusOK, doc)
}

func newCache(t *testing.T, cfg Config) *Cache {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func kids(keys []Key) []string {
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	slices.Sort(ids)
	return ids
}

func newEC(t *testing.T, curve elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestParse(t *testing.T) {
	ec := newEC(t, elliptic.P256())
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk := func(k jose.JSONWebKey) string {
		b, err := k.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	good := jwk(jose.JSONWebKey{Key: ec.Public(), KeyID: "ec", Use: "sig"})
	for _, tc := range []struct {
		name string
		doc  string
		kids []string // kept
		err  string   // or the failure
	}{
		{"empty set", `{"keys": []}`, nil, ""},
		{"keys it cannot use are left out", `{"keys": [` +
			`{"kty":"oct","kid":"hmac","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"}, ` +
			`{"kty":"EC","kid":"broken","crv":"P-256","x":"AA"}, ` +
			`{"kty":"OKP","kid":"x25519","crv":"X25519","x":"3p7bfXt9wbTTW2HC7OQ1Nz-DQ8hbeGdNrfx-FG-IK08"}, ` +
			`{"kty":"future","kid":"future"}, ` +
			jwk(jose.JSONWebKey{Key: ec.Public(), KeyID: "enc", Use: "enc"}) + `, ` +
			jwk(jose.JSONWebKey{Key: pub, KeyID: "ed"}) + `, ` + good + `]}`, []string{"ec", "ed"}, ""},
		{"a private key refuses the set", `{"keys": [` + good + `, ` + jwk(jose.JSONWebKey{Key: priv, KeyID: "leaked"}) + `]}`, nil, `it publishes a private key (kid "leaked")`},
		{"not JSON", `<html>`, nil, "not a JWKS"},
		{"keys not an array", `{"keys": "no"}`, nil, "not a JWKS"},
		{"keys null", `{"keys": null}`, nil, "not a JWKS"},
		{"no keys", `{"other": []}`, nil, "not a JWKS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := parse([]byte(tc.doc))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parse: %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := kids(keys); !slices.Equal(got, tc.kids) {
				t.Errorf("kept %q, want %q", got, tc.kids)
			}
		})
	}
}

func TestFits(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	edPub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p256, p384 := newEC(t, elliptic.P256()).Public(), newEC(t, elliptic.P384()).Public()
	for _, tc := range []struct {
		key  Key
		alg  string
		want bool
	}{
		{Key{Public: &rsaKey.PublicKey}, "RS256", true},
		{Key{Public: &rsaKey.PublicKey}, "PS512", true},
		{Key{Public: &rsaKey.PublicKey, Alg: "RS256"}, "PS256", false},
		{Key{Public: &rsaKey.PublicKey}, "ES256", false},
		{Key{Public: &rsaKey.PublicKey}, "HS256", false},
		{Key{Public: p256}, "ES256", true},
		{Key{Public: p256}, "ES384", false},
		{Key{Public: p384}, "ES384", true},
		{Key{Public: p384, Alg: "ES256"}, "ES256", false},
		{Key{Public: edPub}, "EdDSA", true},
		{Key{Public: edPub}, "none", false},
	} {
		if got := tc.key.Fits(tc.alg); got != tc.want {
			t.Errorf("a %T key (alg %q) fits %s: %v, want %v", tc.key.Public, tc.key.Alg, tc.alg, got, tc.want)
		}
	}
}

// TestExpire runs one story under both values of Config.Expire: the keys
// are fetched, age past Refresh while the JWKS is down, then the JWKS
// comes back without one of them. Without Expire the old keys serve
// throughout; with it none serves until a fetch succeeds.
func TestExpire(t *testing.T) {
	a, b := newEC(t, elliptic.P256()), newEC(t, elliptic.P256())
	const refresh, interval = 10 * time.Minute, 30 * time.Second
	type step struct {
		advance time.Duration
		down    bool     // the JWKS answers 503 from this step on
		publish []string // or publishes these keys (of a and b)
		refetch bool
		kids    []string // served; nil: none, an error
		says    string   // what the error says
		epoch   uint64
		fetches int
	}
	for _, tc := range []struct {
		expire bool
		steps  []step
	}{{
		expire: false,
		steps: []step{
			{kids: []string{"a", "b"}, fetches: 1},
			{advance: refresh, down: true, kids: []string{"a", "b"}, fetches: 2},
			{refetch: true, kids: []string{"a", "b"}, fetches: 2}, // within MinInterval
			{advance: interval, refetch: true, kids: []string{"a", "b"}, fetches: 3},
			{publish: []string{"b"}, advance: interval, kids: []string{"b"}, epoch: 1, fetches: 4},
		},
	}, {
		expire: true,
		steps: []step{
			{kids: []string{"a", "b"}, fetches: 1},
			{advance: refresh, down: true, says: "expired, and fetching them again failed: HTTP 503", fetches: 2},
			{refetch: true, says: "no sooner than in 30s", fetches: 2},
			{advance: interval, refetch: true, says: "expired, and fetching them again failed", fetches: 3},
			{publish: []string{"b"}, advance: interval, kids: []string{"b"}, epoch: 1, fetches: 4},
		},
	}} {
		t.Run(map[bool]string{false: "keep", true: "expire"}[tc.expire], func(t *testing.T) {
			s := newServer(t, map[string]any{"a": a.Public(), "b": b.Public()})
			clk := jwkstest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
			c := newCache(t, Config{URL: s.URL, Client: s.Client(), Refresh: refresh, MinInterval: interval, Expire: tc.expire, Now: clk.Now})
			for i, st := range tc.steps {
				clk.Advance(st.advance)
				switch {
				case st.down:
					s.Answer(http.StatusServiceUnavailable, nil)
				case st.publish != nil:
					keys := map[string]any{}
					for _, kid := range st.publish {
						keys[kid] = map[string]any{"a": a.Public(), "b": b.Public()}[kid]
					}
					s.publish(t, keys)
				}
				set, err := c.Keys(context.Background(), st.refetch)
				switch {
				case st.kids == nil && (err == nil || !Unavailable(err) || !strings.Contains(err.Error(), st.says) || !strings.Contains(err.Error(), s.URL)):
					t.Errorf("step %d: %v, want an error naming the URL and saying %q", i, err, st.says)
				case st.kids != nil && err != nil:
					t.Errorf("step %d: %v", i, err)
				case st.kids != nil && (!slices.Equal(kids(set.Keys), st.kids) || set.Epoch != st.epoch):
					t.Errorf("step %d: keys %q in epoch %d, want %q in %d", i, kids(set.Keys), set.Epoch, st.kids, st.epoch)
				}
				if n := s.Fetches(); n != st.fetches {
					t.Errorf("step %d: %d fetches, want %d", i, n, st.fetches)
				}
			}
		})
	}
}

// TestRefreshWithinMinInterval: when Refresh is shorter than
// MinInterval, keys past Refresh are fetched at once with Expire (else
// none would serve until MinInterval), and serve stale without it.
func TestRefreshWithinMinInterval(t *testing.T) {
	k := newEC(t, elliptic.P256())
	for _, tc := range []struct {
		expire  bool
		fetches int
	}{{false, 1}, {true, 2}} {
		s := newServer(t, map[string]any{"k": k.Public()})
		clk := jwkstest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
		c := newCache(t, Config{URL: s.URL, Client: s.Client(), Refresh: 10 * time.Second, MinInterval: time.Minute, Expire: tc.expire, Now: clk.Now})
		for range 2 {
			if _, err := c.Lookup(context.Background(), "k"); err != nil {
				t.Fatalf("Expire %v: %v", tc.expire, err)
			}
			clk.Advance(10 * time.Second)
		}
		if n := s.Fetches(); n != tc.fetches {
			t.Errorf("Expire %v: %d fetches, want %d", tc.expire, n, tc.fetches)
		}
	}
}

// TestEpoch: a fetch that drops a key, or changes one under its kid,
// starts an epoch; one that adds a key, or publishes the same, does not.
func TestEpoch(t *testing.T) {
	a, b, a2 := newEC(t, elliptic.P256()).Public(), newEC(t, elliptic.P256()).Public(), newEC(t, elliptic.P256()).Public()
	s := newServer(t, map[string]any{"a": a})
	c := newCache(t, Config{URL: s.URL, Client: s.Client(), Refresh: time.Nanosecond, MinInterval: time.Nanosecond})
	for i, st := range []struct {
		keys  map[string]any
		epoch uint64
	}{
		{map[string]any{"a": a}, 0},
		{map[string]any{"a": a}, 0},
		{map[string]any{"a": a, "b": b}, 0},
		{map[string]any{"b": b}, 1},
		{map[string]any{"a": a2, "b": b}, 1},
		{map[string]any{"a": a, "b": b}, 2},
		{map[string]any{}, 3},
	} {
		s.publish(t, st.keys)
		set, err := c.Keys(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		if set.Epoch != st.epoch {
			t.Errorf("step %d: epoch %d, want %d", i, set.Epoch, st.epoch)
		}
	}
}

// TestSingleFlight: the calls that need keys while a fetch is under way
// wait for it, each giving up with its own context, and the fetch runs to
// its end though the call that started it has gone: one fetch serves all.
func TestSingleFlight(t *testing.T) {
	k := newEC(t, elliptic.P256())
	doc, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k.Public(), KeyID: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		arrived <- struct{}{}
		<-release
		w.Write(doc)
	}))
	t.Cleanup(srv.Close)
	c := newCache(t, Config{URL: srv.URL, Client: srv.Client()})

	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := c.Lookup(ctx, "k")
		first <- err
	}()
	<-arrived
	const waiters = 4
	var wg sync.WaitGroup
	errs := make([]error, waiters)
	for i := range waiters {
		wg.Go(func() { _, errs[i] = c.Lookup(context.Background(), "k") })
	}
	gone, stop := context.WithCancel(context.Background())
	stop()
	if _, err := c.Lookup(gone, "k"); !errors.Is(err, context.Canceled) || !Unavailable(err) || !strings.Contains(err.Error(), srv.URL) {
		t.Errorf("a waiter whose context ended: %v", err)
	}
	cancel()
	close(release)
	if err := <-first; err != nil {
		t.Errorf("the call that fetched, its context ended: %v", err)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// TestFetchErrors: what a fetch refuses, each error naming the URL, its
// password redacted, and never the document.
func TestFetchErrors(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	private, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: priv, KeyID: "k"}}})
	if err != nil {
		t.Fatal(err)
	}
	var leaked struct{ Keys []struct{ D string } }
	if err := json.Unmarshal(private, &leaked); err != nil || leaked.Keys[0].D == "" {
		t.Fatalf("%s: %v", private, err)
	}
	for _, tc := range []struct {
		name   string
		status int
		doc    []byte
		says   string
	}{
		{"not found", http.StatusNotFound, []byte("no"), "HTTP 404 Not Found"},
		{"over 1 MiB", http.StatusOK, []byte(`{"keys":[],"pad":"` + strings.Repeat("x", maxBytes) + `"}`), "larger than 1048576 bytes"},
		{"a private key", http.StatusOK, private, "it publishes a private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, nil)
			s.Answer(tc.status, tc.doc)
			url := strings.Replace(s.URL, "http://", "http://reader:hunter2@", 1) + "/jwks.json"
			c := newCache(t, Config{URL: url, Client: s.Client()})
			_, err := c.Keys(context.Background(), false)
			if err == nil || !Unavailable(err) {
				t.Fatalf("Keys: %v, want it unavailable", err)
			}
			msg := err.Error()
			redacted := strings.Replace(url, "hunter2", "xxxxx", 1)
			if !strings.Contains(msg, "fetch JWKS from "+redacted+": "+tc.says) {
				t.Errorf("Keys: %v, want it to name %s and say %q", err, redacted, tc.says)
			}
			if strings.Contains(msg, "hunter2") || strings.Contains(msg, leaked.Keys[0].D) {
				t.Errorf("Keys: %v quotes a secret", err)
			}
		})
	}
}

func TestNew(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{URL: "/jwks.json"},
		{URL: "file:///etc/jwks.json"},
		{URL: "https://idp.test/jwks", Refresh: -1},
		{URL: "https://idp.test/jwks", MinInterval: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
