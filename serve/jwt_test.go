package serve_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/serve"
)

const (
	testIssuer   = "https://idp.team-a.test"
	testAudience = "https://agents.team-a.test/research"
)

// issuer is a test identity provider: signing keys, the JWKS it
// publishes (which a test may rotate) and tokens it mints.
type issuer struct {
	mu   sync.Mutex
	keys map[string]crypto.Signer // by kid
	live []string                 // the kids the JWKS publishes
	srv  *httptest.Server
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{keys: map[string]crypto.Signer{}}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	is.keys["rsa-1"], is.keys["ec-2"] = rk, ek
	is.live = []string{"rsa-1"}
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		var set jose.JSONWebKeySet
		for _, kid := range is.live {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: is.keys[kid].Public(), KeyID: kid, Use: "sig", Algorithm: alg(is.keys[kid])})
		}
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(is.srv.Close)
	return is
}

func alg(k crypto.Signer) string {
	if _, ok := k.(*rsa.PrivateKey); ok {
		return string(jose.RS256)
	}
	return string(jose.ES256)
}

// rotate publishes only kid from now on.
func (is *issuer) rotate(kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.live = []string{kid}
}

// claims are a token's, valid for the agent unless a case changes them.
func validClaims(sub string) jwt.Claims {
	now := time.Now()
	return jwt.Claims{Issuer: testIssuer, Audience: jwt.Audience{testAudience}, Subject: sub,
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(5 * time.Minute))}
}

// mint signs claims (and extra claims) with the key kid.
func (is *issuer) mint(t *testing.T, kid string, c jwt.Claims, extra map[string]any) string {
	t.Helper()
	k := is.keys[kid]
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(alg(k)), Key: jose.JSONWebKey{Key: k, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	b := jwt.Signed(s).Claims(c)
	if extra != nil {
		b = b.Claims(extra)
	}
	tok, err := b.Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// forge writes a token by hand: header and claims as given, signed by
// sign over the signing input.
func forge(t *testing.T, header map[string]any, c jwt.Claims, sign func([]byte) []byte) string {
	t.Helper()
	h, _ := json.Marshal(header)
	p, _ := json.Marshal(c)
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(p)
	return in + "." + base64.RawURLEncoding.EncodeToString(sign([]byte(in)))
}

// TestJWTOnEveryBinding: an agent whose gate takes the issuer's JWTs
// (keys from its JWKS URL) refuses, as unauthenticated, on JSON-RPC,
// HTTP+JSON and gRPC alike, every token that is not the issuer's, for
// this agent, and current; and takes a token of a rotated key once the
// issuer publishes it.
func TestJWTOnEveryBinding(t *testing.T) {
	is := newIssuer(t)
	verifier, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: is.srv.URL,
		MinRefreshInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	audit := new(a2atest.LogBuffer)
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{verifier}, Audit: slog.New(slog.NewJSONHandler(audit, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s, _, logs := start(t, serve.Config{GRPCAddr: "127.0.0.1:0", Gate: gate})
	if sc := s.Card().SecuritySchemes["bearer"].HTTPAuth; sc == nil || sc.Scheme != "Bearer" || sc.BearerFormat != "JWT" {
		t.Fatalf("card's bearer scheme: %+v", s.Card().SecuritySchemes)
	}

	rsaPub, _ := x509.MarshalPKIXPublicKey(is.keys["rsa-1"].Public())
	now := time.Now()
	with := func(f func(c *jwt.Claims)) jwt.Claims { c := validClaims("alice"); f(&c); return c }
	refused := map[string]string{
		"expired":             is.mint(t, "rsa-1", with(func(c *jwt.Claims) { c.Expiry = jwt.NewNumericDate(now.Add(-2 * time.Minute)) }), nil),
		"not yet valid":       is.mint(t, "rsa-1", with(func(c *jwt.Claims) { c.NotBefore = jwt.NewNumericDate(now.Add(10 * time.Minute)) }), nil),
		"without an expiry":   is.mint(t, "rsa-1", with(func(c *jwt.Claims) { c.Expiry = nil }), nil),
		"another issuer":      is.mint(t, "rsa-1", with(func(c *jwt.Claims) { c.Issuer = "https://idp.team-b.test" }), nil),
		"another audience":    is.mint(t, "rsa-1", with(func(c *jwt.Claims) { c.Audience = jwt.Audience{"https://elsewhere.test"} }), nil),
		"a key not published": is.mint(t, "ec-2", validClaims("alice"), nil),
		"alg none": forge(t, map[string]any{"alg": "none", "typ": "JWT", "kid": "rsa-1"}, validClaims("alice"),
			func([]byte) []byte { return nil }),
		"HS256 keyed with the RSA public key": forge(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, validClaims("alice"),
			func(in []byte) []byte { m := hmac.New(sha256.New, rsaPub); m.Write(in); return m.Sum(nil) }),
		"a tampered payload": func() string {
			tok := is.mint(t, "rsa-1", validClaims("alice"), nil)
			parts := strings.Split(tok, ".")
			p, _ := json.Marshal(validClaims("mallory"))
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString(p) + "." + parts[2]
		}(),
		"oversized":   is.mint(t, "rsa-1", validClaims("alice"), map[string]any{"pad": strings.Repeat("x", 10<<10)}),
		"not a token": "not.a.token",
	}
	valid := is.mint(t, "rsa-1", validClaims("alice"), nil)
	bindings := map[string]client.Binding{"JSONRPC": client.JSONRPC, "HTTP+JSON": client.HTTPJSON, "GRPC": grpcclient.Binding(grpcclient.Config{})}
	for name, b := range bindings {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{b}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for why, tok := range refused {
				if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}, client.BearerToken(tok)); !errors.Is(err, a2a.ErrUnauthenticated) {
					t.Errorf("a token %s: %v, want unauthenticated", why, err)
				}
			}
			ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")}, client.BearerToken(valid))
			if err != nil {
				t.Fatalf("a valid token: %v", err)
			}
			task := ev.(*a2a.Task)
			bob := is.mint(t, "rsa-1", validClaims("bob"), nil)
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, client.BearerToken(bob)); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("bob's GetTask of alice's task: %v, want task not found", err)
			}
		})
	}

	// Every decision is in the audit log, and no token is in any log.
	if a := audit.String(); !strings.Contains(a, `"decision":"admitted"`) || !strings.Contains(a, `"decision":"refused"`) || !strings.Contains(a, "token expired") {
		t.Errorf("the audit log lacks the decisions:\n%s", a)
	}
	for why, tok := range refused {
		sig := tok[strings.LastIndexByte(tok, '.')+1:]
		if len(sig) < 16 {
			sig = tok // the forgeries without a signature: the whole token
		}
		if strings.Contains(audit.String(), sig) || strings.Contains(logs.String(), sig) {
			t.Errorf("a log holds the token %s", why)
		}
	}
	if strings.Contains(audit.String(), valid) || strings.Contains(logs.String(), valid) {
		t.Error("a log holds the valid token")
	}

	// The issuer rotates to its EC key: its tokens verify once it is
	// published (the unknown kid refetches the JWKS), the retired key's
	// no longer do.
	is.rotate("ec-2")
	ctx := context.Background()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}, client.BearerToken(is.mint(t, "ec-2", validClaims("alice"), nil))); err != nil {
		t.Fatalf("a token of the rotated-in key: %v", err)
	}
	if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}, client.BearerToken(is.mint(t, "rsa-1", validClaims("alice"), nil))); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("a token of the retired key: %v, want unauthenticated", err)
	}
}
