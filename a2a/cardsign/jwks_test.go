package cardsign

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/jwks/jwkstest"
)

// jwksServer is an agent's JWKS endpoint, publishing keys.
type jwksServer struct {
	*jwkstest.Server
	t *testing.T
}

func newJWKSServer(t *testing.T, keys ...PublicKey) *jwksServer {
	s := &jwksServer{Server: jwkstest.NewServer(t, nil), t: t}
	s.publish(keys...)
	return s
}

func (s *jwksServer) url() string { return s.URL + "/.well-known/jwks.json" }

func (s *jwksServer) publish(keys ...PublicKey) {
	data, err := PublicJWKS(keys...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.Answer(http.StatusOK, data)
}

// jwksVerifier trusts the server's JWKS, on a clock of the test's.
func jwksVerifier(t *testing.T, s *jwksServer, cfg VerifierConfig) (*Verifier, *jwkstest.Clock) {
	t.Helper()
	cfg.JWKSURL = s.url()
	cfg.HTTPClient = s.Client()
	clk := jwkstest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
	v, err := newVerifier(cfg, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	return v, clk
}

// signedBy returns the test card signed by key under kid.
func signedBy(t *testing.T, key crypto.Signer, kid string) *a2a.AgentCard {
	t.Helper()
	card, err := SignCard(testCard(), key, kid, SignOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return card
}

func TestJWKSFetchedOnceAndCached(t *testing.T) {
	ctx := context.Background()
	key := newECKey(t)
	s := newJWKSServer(t, PublicKey{ID: "a", Key: key.Public()})
	v, _ := jwksVerifier(t, s, VerifierConfig{})
	card := signedBy(t, key, "a")
	for range 5 {
		if err := v.Verify(ctx, card); err != nil {
			t.Fatalf("Verify: %v", err)
		}
	}
	if n := s.Fetches(); n != 1 {
		t.Errorf("%d fetches for 5 verifications, want 1", n)
	}
}

func TestJWKSRotationAndRevocation(t *testing.T) {
	ctx := context.Background()
	oldKey, newKey := newECKey(t), newEdKey(t)
	oldPub, newPub := PublicKey{ID: "2026-01", Key: oldKey.Public()}, PublicKey{ID: "2026-11", Key: newKey.Public()}
	s := newJWKSServer(t, oldPub)
	v, clk := jwksVerifier(t, s, VerifierConfig{MinRefetchInterval: time.Minute, MaxAge: time.Hour})
	oldCard, newCard := signedBy(t, oldKey, oldPub.ID), signedBy(t, newKey, newPub.ID)

	if err := v.Verify(ctx, oldCard); err != nil {
		t.Fatalf("old key: %v", err)
	}
	// The agent rotates: it publishes the new key beside the old one.
	s.publish(oldPub, newPub)
	err := v.Verify(ctx, newCard)
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "no sooner than") {
		t.Fatalf("new key within a minute of the last fetch: %v, want ErrUnknownKey saying when it will look again", err)
	}
	if n := s.Fetches(); n != 1 {
		t.Fatalf("%d fetches, want 1: an unknown kid refetched before MinRefetchInterval", n)
	}
	clk.Advance(time.Minute)
	if err := v.Verify(ctx, newCard); err != nil {
		t.Fatalf("new key a minute later: %v", err)
	}
	if err := v.Verify(ctx, oldCard); err != nil {
		t.Fatalf("old key, still published: %v", err)
	}
	if n := s.Fetches(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}

	// The agent revokes the old key. Cached keys are trusted until MaxAge.
	s.publish(newPub)
	clk.Advance(30 * time.Minute)
	if err := v.Verify(ctx, oldCard); err != nil {
		t.Fatalf("old key before MaxAge: %v", err)
	}
	clk.Advance(31 * time.Minute)
	err = v.Verify(ctx, oldCard)
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), `kid "2026-01" is not in the JWKS`) {
		t.Fatalf("old key after MaxAge and its revocation: %v, want ErrUnknownKey", err)
	}
	if err := v.Verify(ctx, newCard); err != nil {
		t.Fatalf("new key: %v", err)
	}
	if n := s.Fetches(); n != 3 {
		t.Errorf("%d fetches, want 3", n)
	}
}

func TestJWKSUnknownKidsRateLimited(t *testing.T) {
	ctx := context.Background()
	key := newECKey(t)
	s := newJWKSServer(t, PublicKey{ID: "a", Key: key.Public()})
	v, clk := jwksVerifier(t, s, VerifierConfig{})
	for i := range 50 {
		card := signedBy(t, key, fmt.Sprintf("made-up-%d", i))
		if err := v.Verify(ctx, card); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("made-up kid: %v", err)
		}
		clk.Advance(time.Second)
	}
	// 50 seconds: the first fetch only.
	if n := s.Fetches(); n != 1 {
		t.Errorf("%d fetches for 50 made-up kids in 50 s, want 1", n)
	}
	clk.Advance(10 * time.Second)
	if err := v.Verify(ctx, signedBy(t, key, "another")); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("made-up kid: %v", err)
	}
	if n := s.Fetches(); n != 2 {
		t.Errorf("%d fetches after a minute, want 2", n)
	}
}

func TestJWKSFailures(t *testing.T) {
	ctx := context.Background()
	key := newECKey(t)
	pub := PublicKey{ID: "a", Key: key.Public()}
	good, err := PublicJWKS(pub)
	if err != nil {
		t.Fatal(err)
	}
	private, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: key, KeyID: "a", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   []byte
		why    string
	}{
		{"server error", http.StatusInternalServerError, []byte("oops"), "HTTP 500"},
		{"not found", http.StatusNotFound, nil, "HTTP 404"},
		{"not JSON", http.StatusOK, []byte("<html>"), "not a JWKS"},
		{"keys not an array", http.StatusOK, []byte(`{"keys":"a"}`), "not a JWKS"},
		{"no keys member", http.StatusOK, []byte(`{"kid":"a"}`), "not a JWKS"},
		{"too large", http.StatusOK, []byte(`{"keys":[],"pad":"` + strings.Repeat("x", 1<<20) + `"}`), "larger than"},
		{"private key published", http.StatusOK, private, "publishes a private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newJWKSServer(t, pub)
			s.Answer(tc.status, tc.body)
			pinnedKey := newEdKey(t)
			v, clk := jwksVerifier(t, s, VerifierConfig{Keys: keySet(t, PublicKey{ID: "pinned", Key: pinnedKey.Public()})})
			card := signedBy(t, key, "a")
			err := v.Verify(ctx, card)
			if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Verify: %v, want ErrUnknownKey saying %q", err, tc.why)
			}
			// Pinned keys do not need the JWKS.
			if err := v.Verify(ctx, signedBy(t, pinnedKey, "pinned")); err != nil {
				t.Errorf("pinned key while the JWKS fails: %v", err)
			}
			// A failed fetch is not retried at once, and the error says why.
			s.Answer(http.StatusOK, good)
			err = v.Verify(ctx, card)
			if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("Verify right after the failure: %v, want the failure again", err)
			}
			clk.Advance(DefaultMinRefetchInterval)
			if err := v.Verify(ctx, card); err != nil {
				t.Errorf("Verify once the JWKS is fixed: %v", err)
			}
			if n := s.Fetches(); n != 2 {
				t.Errorf("%d fetches, want 2", n)
			}
		})
	}

	t.Run("server down", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/.well-known/jwks.json"
		ln.Close()
		hc := &http.Client{Transport: &http.Transport{}}
		t.Cleanup(hc.CloseIdleConnections)
		v, err := NewVerifier(VerifierConfig{JWKSURL: url, HTTPClient: hc})
		if err != nil {
			t.Fatal(err)
		}
		err = v.Verify(ctx, signedBy(t, key, "a"))
		if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "fetch JWKS") {
			t.Errorf("Verify: %v, want ErrUnknownKey from the failed fetch", err)
		}
	})

	t.Run("a refetch for a new kid fails while the keys are fresh", func(t *testing.T) {
		s := newJWKSServer(t, pub)
		v, clk := jwksVerifier(t, s, VerifierConfig{})
		card := signedBy(t, key, "a")
		if err := v.Verify(ctx, card); err != nil {
			t.Fatal(err)
		}
		s.Answer(http.StatusBadGateway, nil)
		clk.Advance(DefaultMinRefetchInterval)
		newCard := signedBy(t, key, "b")
		for _, want := range []string{"fetching it again failed", "could not be fetched"} {
			err := v.Verify(ctx, newCard)
			if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "HTTP 502") {
				t.Errorf("Verify of a new kid: %v, want ErrUnknownKey saying %q and why", err, want)
			}
		}
		if err := v.Verify(ctx, card); err != nil {
			t.Errorf("a fetched key, still fresh: %v", err)
		}
		if n := s.Fetches(); n != 2 {
			t.Errorf("%d fetches, want 2", n)
		}
	})

	t.Run("expired keys are not used when the refetch fails", func(t *testing.T) {
		s := newJWKSServer(t, pub)
		v, clk := jwksVerifier(t, s, VerifierConfig{})
		card := signedBy(t, key, "a")
		if err := v.Verify(ctx, card); err != nil {
			t.Fatal(err)
		}
		s.Answer(http.StatusServiceUnavailable, nil)
		clk.Advance(DefaultMaxAge)
		if err := v.Verify(ctx, card); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "HTTP 503") {
			t.Fatalf("Verify with expired keys and a failing JWKS: %v, want ErrUnknownKey", err)
		}
		if err := v.Verify(ctx, card); !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("Verify again: %v, want ErrUnknownKey", err)
		}
		if n := s.Fetches(); n != 2 {
			t.Errorf("%d fetches, want 2", n)
		}
	})
}

func TestJWKSSkipsKeysItCannotUse(t *testing.T) {
	ctx := context.Background()
	key := newECKey(t)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good, err := PublicJWKS(PublicKey{ID: "a", Key: key.Public()})
	if err != nil {
		t.Fatal(err)
	}
	others, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: p384.Public(), KeyID: "p384", Use: "sig"},
		{Key: key.Public(), KeyID: "enc", Use: "enc"},
		{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "hmac"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var a, b struct{ Keys []json.RawMessage }
	if err := json.Unmarshal(good, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(others, &b); err != nil {
		t.Fatal(err)
	}
	keys := append(b.Keys, json.RawMessage(`{"kty":"future","kid":"x"}`), a.Keys[0])
	mixed, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	s := newJWKSServer(t)
	s.Answer(http.StatusOK, mixed)
	v, _ := jwksVerifier(t, s, VerifierConfig{})
	if err := v.Verify(ctx, signedBy(t, key, "a")); err != nil {
		t.Fatalf("Verify with the usable key: %v", err)
	}
	for _, kid := range []string{"enc", "hmac"} {
		if err := v.Verify(ctx, signedBy(t, key, kid)); !errors.Is(err, ErrUnknownKey) {
			t.Errorf("kid %q of an unusable key: %v, want ErrUnknownKey", kid, err)
		}
	}
}

func TestJWKSConcurrentVerify(t *testing.T) {
	key := newECKey(t)
	s := newJWKSServer(t, PublicKey{ID: "a", Key: key.Public()})
	v, _ := jwksVerifier(t, s, VerifierConfig{})
	known, unknown := signedBy(t, key, "a"), signedBy(t, key, "b")
	var wg sync.WaitGroup
	errs := make(chan error, 8*20)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				card, want := known, error(nil)
				if (g+i)%3 == 0 {
					card, want = unknown, ErrUnknownKey
				}
				if err := v.Verify(context.Background(), card); !errors.Is(err, want) {
					errs <- fmt.Errorf("goroutine %d, call %d: %v, want %v", g, i, err, want)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := s.Fetches(); n != 1 {
		t.Errorf("%d fetches, want 1", n)
	}
}

// TestJWKSFetchOutlivesCaller: a Verify waiting for another's fetch of
// the JWKS gives up with its own context, and the fetch runs to its end
// though the Verify that started it has gone, so that its keys serve the
// next verifications (a caller going away must not make the keys
// unfetchable for MinRefetchInterval).
func TestJWKSFetchOutlivesCaller(t *testing.T) {
	key := newECKey(t)
	doc, err := PublicJWKS(PublicKey{ID: "a", Key: key.Public()})
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
		w.Write(doc)
	}))
	t.Cleanup(srv.Close)
	v, err := NewVerifier(VerifierConfig{JWKSURL: srv.URL + "/jwks.json", HTTPClient: srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	card := signedBy(t, key, "a")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Verify(ctx, card) }()
	<-started
	waiting, stop := context.WithCancel(context.Background())
	stop()
	if err := v.Verify(waiting, card); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Verify waiting for the fetch with a canceled context: %v", err)
	}
	cancel()
	close(release)
	if err := <-done; err != nil {
		t.Errorf("Verify whose context ended during its fetch: %v", err)
	}
	if err := v.Verify(context.Background(), card); err != nil {
		t.Errorf("Verify after the fetch: %v", err)
	}
}
