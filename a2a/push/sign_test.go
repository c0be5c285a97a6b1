package push

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
)

// agentKey is an agent's signing key and the key set it publishes.
type agentKey struct {
	signer crypto.Signer
	alg    jose.SignatureAlgorithm
	kid    string
}

func (k agentKey) jwk() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.signer.Public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"}
}

func (k agentKey) keySet() *jose.JSONWebKeySet {
	return &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k.jwk()}}
}

func (k agentKey) signing() *Signing {
	return &Signing{Key: k.signer, KeyID: k.kid, Issuer: "https://agent.example.com", JWKSURL: "https://agent.example.com/jwks.json"}
}

func newEd25519(t testing.TB, kid string) agentKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return agentKey{priv, jose.EdDSA, kid}
}

func newECDSA(t testing.TB, kid string, curve elliptic.Curve, alg jose.SignatureAlgorithm) agentKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return agentKey{priv, alg, kid}
}

func newRSA(t testing.TB, kid string, bits int) agentKey {
	t.Helper()
	priv, err := rsa.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	return agentKey{priv, jose.RS256, kid}
}

// tokenParts decodes a compact JWS's header and claims, unverified.
func tokenParts(t *testing.T, tok string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a compact JWS", tok)
	}
	for i, dst := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return header, claims
}

func TestNotifySigned(t *testing.T) {
	keys := []agentKey{
		newEd25519(t, "ed"),
		newECDSA(t, "p256", elliptic.P256(), jose.ES256),
		newECDSA(t, "p384", elliptic.P384(), jose.ES384),
		newECDSA(t, "p521", elliptic.P521(), jose.ES512),
		newRSA(t, "rsa", 2048),
	}
	for _, k := range keys {
		t.Run(string(k.alg), func(t *testing.T) {
			h := newHook(t, statuses(http.StatusOK))
			s := newSender(t)
			s.Signing = k.signing()
			c := hookConfig(h.url())
			c.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "client-cred"}
			c.Token = "tok"
			before := time.Now()
			if err := s.Notify(context.Background(), c, statusEvent(a2a.TaskStateCompleted), nil); err != nil {
				t.Fatal(err)
			}
			reqs := h.requests()
			if len(reqs) != 1 {
				t.Fatalf("webhook got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			// The config's credentials and the agent's signature, side by side.
			if got := r.header.Get("Authorization"); got != "Bearer client-cred" {
				t.Errorf("Authorization %q, want the config's credentials", got)
			}
			if got := r.header.Get("A2A-Notification-Token"); got != "tok" {
				t.Errorf("A2A-Notification-Token %q, want the config's token", got)
			}
			sig := r.header.Get(SignatureHeader)
			if sig == "" {
				t.Fatalf("no %s header", SignatureHeader)
			}
			header, claims := tokenParts(t, sig)
			for name, want := range map[string]any{"alg": string(k.alg), "kid": k.kid, "typ": "JWT", "jku": "https://agent.example.com/jwks.json"} {
				if header[name] != want {
					t.Errorf("header %s = %v, want %v (header %v)", name, header[name], want, header)
				}
			}
			for name, want := range map[string]any{"iss": "https://agent.example.com", "aud": h.url(), "taskId": "t1", "request_body_sha256": bodyDigest(r.body)} {
				if claims[name] != want {
					t.Errorf("claim %s = %v, want %v (claims %v)", name, claims[name], want, claims)
				}
			}
			if exp, iat := claims["exp"].(float64), claims["iat"].(float64); exp-iat != signatureLifetime.Seconds() {
				t.Errorf("exp - iat = %v s, want %v", exp-iat, signatureLifetime.Seconds())
			}
			v := &Verifier{Keys: k.keySet(), Audience: []string{h.url()}, Issuers: []string{"https://agent.example.com"}}
			got, err := v.Verify(context.Background(), sig, r.body)
			if err != nil {
				t.Fatalf("Verify = %v", err)
			}
			if got.TaskID != "t1" || got.ID == "" || got.Issuer != "https://agent.example.com" ||
				got.IssuedAt.Before(before.Truncate(time.Second)) || got.Expiry.Sub(got.IssuedAt) != signatureLifetime {
				t.Errorf("claims %+v", got)
			}
		})
	}
}

// TestNotifySignsEachAttempt: each attempt is signed anew (so a late retry
// is not stale) with the notification's one ID (so a receiver can
// recognize the retry); another notification gets another ID.
func TestNotifySignsEachAttempt(t *testing.T) {
	k := newECDSA(t, "k1", elliptic.P256(), jose.ES256)
	h := newHook(t, statuses(http.StatusServiceUnavailable, http.StatusServiceUnavailable, http.StatusOK))
	s := newSender(t)
	s.Signing = k.signing()
	for range 2 {
		if err := s.Notify(context.Background(), hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := h.requests()
	if len(reqs) != 4 {
		t.Fatalf("webhook got %d requests, want 3 attempts at the first notification and 1 at the second", len(reqs))
	}
	v := &Verifier{Keys: k.keySet(), Audience: []string{h.url()}}
	var ids []string
	sigs := map[string]bool{}
	for i, r := range reqs {
		sig := r.header.Get(SignatureHeader)
		c, err := v.Verify(context.Background(), sig, r.body)
		if err != nil {
			t.Fatalf("attempt %d: Verify = %v", i+1, err)
		}
		ids = append(ids, c.ID)
		sigs[sig] = true
	}
	if ids[0] != ids[1] || ids[1] != ids[2] || ids[2] == ids[3] {
		t.Fatalf("jti per request %q, want the first three equal and the fourth different", ids)
	}
	if len(sigs) != len(reqs) {
		t.Fatalf("%d distinct signatures for %d requests, want one per attempt", len(sigs), len(reqs))
	}
}

func TestNotifySigningMisconfigured(t *testing.T) {
	ed := newEd25519(t, "k1")
	tests := []struct {
		name    string
		signing *Signing
		want    string
	}{
		{"no key", &Signing{KeyID: "k1", Issuer: "a"}, "no Key"},
		{"no key ID", &Signing{Key: ed.signer, Issuer: "a"}, "no KeyID"},
		{"no issuer", &Signing{Key: ed.signer, KeyID: "k1"}, "no Issuer"},
		{"weak RSA", newRSA(t, "k1", 1024).signing(), "1024 bits"},
		{"P-224", newECDSA(t, "k1", elliptic.P224(), "").signing(), "P-224"},
	}
	h := newHook(t, statuses(http.StatusOK))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSender(t)
			s.Signing = tt.signing
			err := s.Notify(context.Background(), hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "not attempted") {
				t.Fatalf("Notify = %v, want it not attempted, mentioning %q", err, tt.want)
			}
		})
	}
	if got := h.calls.Load(); got != 0 {
		t.Fatalf("webhook got %d requests, want none", got)
	}
}
