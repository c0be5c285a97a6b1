package push

import (
	"context"
	"crypto/elliptic"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a/internal/jwks/jwkstest"
)

// agentJWKS is an agent's /.well-known/jwks.json.
type agentJWKS struct{ *jwkstest.Server }

func newAgentJWKS(t *testing.T, keys ...agentKey) agentJWKS {
	a := agentJWKS{jwkstest.NewServer(t, nil)}
	a.publish(t, keys...)
	return a
}

func (a agentJWKS) url() string { return a.URL + "/.well-known/jwks.json" }

// publish serves the public JWKS of keys.
func (a agentJWKS) publish(t *testing.T, keys ...agentKey) {
	t.Helper()
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{}}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.jwk())
	}
	doc, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	a.Answer(http.StatusOK, doc)
}

// jwksVerifier verifies with the keys of a's JWKS, on a clock of the
// test's.
func jwksVerifier(a agentJWKS) (*Verifier, *jwkstest.Clock) {
	clk := jwkstest.NewClock(time.Now())
	return &Verifier{JWKSURL: a.url(), HTTPClient: a.Client(), Audience: []string{hookURL}, now: clk.Now}, clk
}

// signedBy is a genuine notification of hookBody signed with k.
func signedBy(t *testing.T, k agentKey) string {
	return forge(t, k.alg, k.signer, k.kid, goodClaims(time.Now()), nil)
}

// refusal checks that err is want, or with want nil that it matches none
// of the Err variables (the receiver's fault), and that it says each of
// says.
func refusal(t *testing.T, what string, err, want error, says ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: verified, want %v", what, want)
	}
	for _, e := range verifyErrors {
		if errors.Is(err, e) != (e == want) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}
	for _, s := range says {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: %v, want it to say %q", what, err, s)
		}
	}
}

// TestVerifierJWKSRotation: the agent rotates its keys, a notification
// with the new kid makes the Verifier fetch the JWKS again (at most every
// 30 seconds), and once the agent drops the old key, the refresh after 10
// minutes refuses notifications signed with it.
func TestVerifierJWKSRotation(t *testing.T) {
	ctx := context.Background()
	oldKey, newKey := newEd25519(t, "2026-01"), newECDSA(t, "2026-11", elliptic.P256(), jose.ES256)
	a := newAgentJWKS(t, oldKey)
	v, clk := jwksVerifier(a)
	if _, err := v.Verify(ctx, signedBy(t, oldKey), hookBody); err != nil {
		t.Fatalf("old key: %v", err)
	}

	a.publish(t, oldKey, newKey)
	_, err := v.Verify(ctx, signedBy(t, newKey), hookBody)
	refusal(t, "new key within 30 s of the fetch", err, ErrUnknownKey, `"2026-11"`, a.url(), "no sooner than")
	clk.Advance(30 * time.Second)
	if _, err := v.Verify(ctx, signedBy(t, newKey), hookBody); err != nil {
		t.Fatalf("new key 30 s later: %v", err)
	}
	if _, err := v.Verify(ctx, signedBy(t, oldKey), hookBody); err != nil {
		t.Fatalf("old key, still published: %v", err)
	}
	if n := a.Fetches(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}

	a.publish(t, newKey)
	clk.Advance(10 * time.Minute)
	_, err = v.Verify(ctx, signedBy(t, oldKey), hookBody)
	refusal(t, "old key after it was removed", err, ErrUnknownKey, `kid "2026-01" is not in the JWKS at `+a.url())
	if _, err := v.Verify(ctx, signedBy(t, newKey), hookBody); err != nil {
		t.Fatalf("new key: %v", err)
	}
	if n := a.Fetches(); n != 3 {
		t.Errorf("%d fetches, want 3", n)
	}
}

// TestVerifierJWKSPinnedFirst: a kid among the pinned Keys is verified
// with them alone; the JWKS serves the others.
func TestVerifierJWKSPinnedFirst(t *testing.T) {
	ctx := context.Background()
	pinned, published, impostor := newEd25519(t, "p1"), newEd25519(t, "j1"), newEd25519(t, "p1")
	a := newAgentJWKS(t, published, impostor)
	v, _ := jwksVerifier(a)
	v.Keys = pinned.keySet()
	if _, err := v.Verify(ctx, signedBy(t, pinned), hookBody); err != nil {
		t.Fatalf("pinned key: %v", err)
	}
	if n := a.Fetches(); n != 0 {
		t.Fatalf("%d fetches for a pinned key, want none", n)
	}
	_, err := v.Verify(ctx, signedBy(t, impostor), hookBody)
	refusal(t, "a pinned kid, another key of the JWKS", err, ErrBadSignature)
	if _, err := v.Verify(ctx, signedBy(t, published), hookBody); err != nil {
		t.Fatalf("a key of the JWKS: %v", err)
	}
}

// TestVerifierJWKSUnavailable: when the JWKS gives no keys (unreachable,
// broken, publishing a private key, or its keys expired and it cannot be
// fetched again) a notification fails with an error that matches none of
// the refusals, names the URL and says why, and never quotes a key.
func TestVerifierJWKSUnavailable(t *testing.T) {
	ctx := context.Background()
	k := newEd25519(t, "k1")
	private, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: k.signer, KeyID: "k1"}}})
	if err != nil {
		t.Fatal(err)
	}
	var secret struct{ Keys []struct{ D, X string } }
	if err := json.Unmarshal(private, &secret); err != nil || len(secret.Keys) != 1 || secret.Keys[0].D == "" {
		t.Fatalf("the private JWKS %v: %v", secret, err)
	}
	for _, tc := range []struct {
		name   string
		status int
		doc    []byte
		says   string
	}{
		{"server error", http.StatusInternalServerError, []byte("oops"), "HTTP 500"},
		{"not a JWKS", http.StatusOK, []byte(`{"kid":"k1"}`), "not a JWKS"},
		{"a private key published", http.StatusOK, private, "publishes a private key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAgentJWKS(t)
			a.Answer(tc.status, tc.doc)
			v, _ := jwksVerifier(a)
			_, err := v.Verify(ctx, signedBy(t, k), hookBody)
			refusal(t, "Verify", err, nil, a.url(), tc.says)
			for _, material := range []string{secret.Keys[0].D, secret.Keys[0].X} {
				if strings.Contains(err.Error(), material) {
					t.Errorf("the error quotes the key: %v", err)
				}
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/.well-known/jwks.json"
		ln.Close()
		v := &Verifier{JWKSURL: url, Audience: []string{hookURL}}
		for range 2 { // fetched, then not again at once
			_, err := v.Verify(ctx, signedBy(t, k), hookBody)
			refusal(t, "Verify", err, nil, url)
		}
	})

	t.Run("keys expired, the JWKS down", func(t *testing.T) {
		a := newAgentJWKS(t, k)
		v, clk := jwksVerifier(a)
		if _, err := v.Verify(ctx, signedBy(t, k), hookBody); err != nil {
			t.Fatal(err)
		}
		a.Answer(http.StatusServiceUnavailable, nil)
		clk.Advance(5 * time.Minute)
		if _, err := v.Verify(ctx, signedBy(t, k), hookBody); err != nil {
			t.Fatalf("keys 5 minutes old: %v", err)
		}
		clk.Advance(5 * time.Minute)
		_, err := v.Verify(ctx, signedBy(t, k), hookBody)
		refusal(t, "keys 10 minutes old", err, nil, a.url(), "expired", "HTTP 503")
	})
}

func TestVerifierJWKSURLMisconfigured(t *testing.T) {
	k := newEd25519(t, "k1")
	v := &Verifier{JWKSURL: "/.well-known/jwks.json", Audience: []string{hookURL}}
	_, err := v.Verify(context.Background(), signedBy(t, k), hookBody)
	refusal(t, "relative JWKSURL", err, nil, "Verifier.JWKSURL", "absolute")
}
