package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

const (
	testIssuer   = "https://idp.test"
	testAudience = "https://agent.test"
)

// testKeys are one signing key of each kind the default allowlist takes.
type testKeys struct {
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
	ed  ed25519.PrivateKey
}

func newTestKeys(t testing.TB) testKeys {
	t.Helper()
	r, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	e, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, d, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKeys{rsa: r, ec: e, ed: d}
}

// jwks is the public JWKS of keys, named by their kids.
func jwks(keys map[string]any) *jose.JSONWebKeySet {
	set := &jose.JSONWebKeySet{}
	for kid, k := range keys {
		jwk := jose.JSONWebKey{Key: k, KeyID: kid, Use: "sig"}
		if _, ok := k.([]byte); !ok {
			jwk = jwk.Public()
		}
		set.Keys = append(set.Keys, jwk)
	}
	return set
}

// jwksServer serves a JWKS on 127.0.0.1 that the test may replace or
// break, and counts its requests.
type jwksServer struct {
	*httptest.Server
	doc  atomic.Pointer[[]byte]
	down atomic.Bool
	hits atomic.Int64
}

func newJWKSServer(t testing.TB, set *jose.JSONWebKeySet) *jwksServer {
	t.Helper()
	s := &jwksServer{}
	s.serve(t, set)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		if s.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(*s.doc.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) serve(t testing.TB, set *jose.JSONWebKeySet) {
	t.Helper()
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	s.doc.Store(&b)
}

// claims are a valid token's claims, with changes: a nil value deletes
// the claim.
func claims(changes map[string]any) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": testIssuer,
		"aud": testAudience,
		"sub": "alice",
		"iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(),
	}
	for k, v := range changes {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	return c
}

// mint signs claims with key by alg, naming kid in the header unless it
// is "".
func mint(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	var sk any = key
	if kid != "" {
		sk = jose.JSONWebKey{Key: key, KeyID: kid}
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: sk}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// unsigned is a token with alg none.
func unsigned(alg string, claims map[string]any) string {
	h, _ := json.Marshal(map[string]any{"alg": alg, "typ": "JWT", "kid": "rsa"})
	p, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc(h) + "." + enc(p) + "."
}

func bearer(v string) auth.Credentials {
	return auth.Credentials{Header: func(name string) string {
		if strings.EqualFold(name, "Authorization") {
			return v
		}
		return ""
	}}
}

func reasonOf(err error) string {
	_, reason, _ := strings.Cut(err.Error(), auth.ErrInvalidCredentials.Error()+": ")
	return reason
}

func TestJWTAuthenticate(t *testing.T) {
	k := newTestKeys(t)
	other := newTestKeys(t)
	hmacSecret := []byte("0123456789abcdef0123456789abcdef")
	srv := newJWKSServer(t, jwks(map[string]any{
		"rsa": &k.rsa.PublicKey, "ec": &k.ec.PublicKey, "ed": k.ed.Public(),
		"hmac": hmacSecret, // left out: no symmetric keys
	}))
	a, err := auth.NewJWT(auth.JWTConfig{Scheme: "oidc", Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.rsa.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	now := time.Now()
	valid := mint(t, jose.RS256, k.rsa, "rsa", claims(nil))
	head, _, _ := strings.Cut(valid, ".")

	for _, tc := range []struct {
		name   string
		header string
		want   error  // nil: admitted
		reason string // of a refusal
	}{
		{name: "RS256", header: "Bearer " + valid},
		{name: "ES256", header: "Bearer " + mint(t, jose.ES256, k.ec, "ec", claims(nil))},
		{name: "EdDSA", header: "Bearer " + mint(t, jose.EdDSA, k.ed, "ed", claims(nil))},
		{name: "scheme in any case", header: "bEARER " + valid},
		{name: "audience among several", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"aud": []string{"x", testAudience}}))},
		{name: "expired within the skew", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"exp": now.Add(-30 * time.Second).Unix()}))},
		{name: "no kid, one key fits", header: "Bearer " + mint(t, jose.ES256, k.ec, "", claims(nil))},

		{name: "no header", header: "", want: auth.ErrNoCredentials},
		{name: "another scheme", header: "Basic YWxpY2U6c2VjcmV0", want: auth.ErrNoCredentials},
		{name: "scheme without separator", header: "Bearer" + valid, want: auth.ErrNoCredentials},

		{name: "empty token", header: "Bearer ", want: auth.ErrInvalidCredentials, reason: "malformed token"},
		{name: "empty parts", header: "Bearer ..", want: auth.ErrInvalidCredentials, reason: "malformed token"},
		{name: "two parts", header: "Bearer abc.def", want: auth.ErrInvalidCredentials, reason: "malformed token"},
		{name: "not base64", header: "Bearer a!b.c$d.e%f", want: auth.ErrInvalidCredentials, reason: "malformed token"},
		{name: "header not JSON", header: "Bearer " + base64.RawURLEncoding.EncodeToString([]byte("{")) + ".e30.AA", want: auth.ErrInvalidCredentials, reason: "malformed token"},
		{name: "space inside", header: "Bearer " + head + " x", want: auth.ErrInvalidCredentials, reason: "malformed token"},
		{name: "oversized", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"pad": strings.Repeat("x", 8<<10)})), want: auth.ErrInvalidCredentials, reason: "token too large"},

		{name: "expired", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"exp": now.Add(-2 * time.Minute).Unix()})), want: auth.ErrInvalidCredentials, reason: "token expired"},
		{name: "not yet valid", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"nbf": now.Add(2 * time.Minute).Unix()})), want: auth.ErrInvalidCredentials, reason: "token not yet valid"},
		{name: "issued in the future", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"iat": now.Add(2 * time.Minute).Unix()})), want: auth.ErrInvalidCredentials, reason: "token issued in the future"},
		{name: "no expiry", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"exp": nil})), want: auth.ErrInvalidCredentials, reason: "token has no expiry"},
		{name: "no subject", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"sub": nil})), want: auth.ErrInvalidCredentials, reason: "token has no subject"},
		{name: "wrong issuer", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"iss": testIssuer + "/"})), want: auth.ErrInvalidCredentials, reason: "wrong issuer"},
		{name: "no issuer", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"iss": nil})), want: auth.ErrInvalidCredentials, reason: "wrong issuer"},
		{name: "wrong audience", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"aud": "https://other.test"})), want: auth.ErrInvalidCredentials, reason: "wrong audience"},
		{name: "no audience", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"aud": nil})), want: auth.ErrInvalidCredentials, reason: "wrong audience"},
		{name: "exp not a number", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"exp": "tomorrow"})), want: auth.ErrInvalidCredentials, reason: "malformed claims"},
		{name: "claims not an object", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", nil), want: auth.ErrInvalidCredentials, reason: "malformed claims"},
		{name: "tenant not a string", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"tenant": 7})), want: auth.ErrInvalidCredentials, reason: "malformed tenant claim"},
		{name: "scope not a string", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"scope": map[string]any{}})), want: auth.ErrInvalidCredentials, reason: "malformed scope claim"},
		{name: "scp with a number", header: "Bearer " + mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"scp": []any{"a", 1}})), want: auth.ErrInvalidCredentials, reason: "malformed scope claim"},

		{name: "alg none", header: "Bearer " + unsigned("none", claims(nil)), want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},
		{name: "alg None", header: "Bearer " + unsigned("None", claims(nil)), want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},
		{name: "alg none with a signature", header: "Bearer " + unsigned("none", claims(nil)) + "AAAA", want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},
		{name: "HS256 keyed by the RSA public key's PEM", header: "Bearer " + mint(t, jose.HS256, pubPEM, "rsa", claims(nil)), want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},
		{name: "HS256 keyed by the RSA public key's DER", header: "Bearer " + mint(t, jose.HS256, pubDER, "rsa", claims(nil)), want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},
		{name: "HS256 keyed by a secret in the JWKS", header: "Bearer " + mint(t, jose.HS256, hmacSecret, "hmac", claims(nil)), want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},
		{name: "PS256, not in the allowlist", header: "Bearer " + mint(t, jose.PS256, k.rsa, "rsa", claims(nil)), want: auth.ErrInvalidCredentials, reason: "algorithm not allowed"},

		{name: "unknown kid", header: "Bearer " + mint(t, jose.RS256, k.rsa, "gone", claims(nil)), want: auth.ErrInvalidCredentials, reason: "unknown key id"},
		{name: "EC signature naming the RSA key", header: "Bearer " + mint(t, jose.ES256, k.ec, "rsa", claims(nil)), want: auth.ErrInvalidCredentials, reason: "key does not fit the algorithm"},
		{name: "EdDSA signature naming the EC key", header: "Bearer " + mint(t, jose.EdDSA, k.ed, "ec", claims(nil)), want: auth.ErrInvalidCredentials, reason: "key does not fit the algorithm"},
		{name: "signed by another key under our kid", header: "Bearer " + mint(t, jose.RS256, other.rsa, "rsa", claims(nil)), want: auth.ErrInvalidCredentials, reason: "bad signature"},
		{name: "no kid, signed by another key", header: "Bearer " + mint(t, jose.EdDSA, other.ed, "", claims(nil)), want: auth.ErrInvalidCredentials, reason: "bad signature"},
		{name: "payload swapped", header: "Bearer " + swapPayload(valid, mint(t, jose.RS256, k.rsa, "rsa", claims(map[string]any{"sub": "root"}))), want: auth.ErrInvalidCredentials, reason: "bad signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := a.Authenticate(context.Background(), bearer(tc.header))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.Scheme != "oidc" || p.Issuer != testIssuer || p.Subject != "alice" {
					t.Errorf("principal = %+v", p)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.want == auth.ErrInvalidCredentials && reasonOf(err) != tc.reason {
				t.Errorf("err = %q, want the reason %q", err, tc.reason)
			}
			if _, token, _ := strings.Cut(tc.header, " "); len(token) > 8 && strings.Contains(err.Error(), token) {
				t.Errorf("err repeats the token: %v", err)
			}
		})
	}
	if n := srv.hits.Load(); n > 3 {
		t.Errorf("the JWKS was fetched %d times; the unknown kid may fetch it once, rate limiting the rest", n)
	}
}

// swapPayload is signed's header and signature around other's payload.
func swapPayload(signed, other string) string {
	parts, with := strings.Split(signed, "."), strings.Split(other, ".")
	return parts[0] + "." + with[1] + "." + parts[2]
}

func TestJWTPrincipal(t *testing.T) {
	k := newTestKeys(t)
	keys := jwks(map[string]any{"ed": k.ed.Public()})
	for _, tc := range []struct {
		name   string
		cfg    auth.JWTConfig
		claims map[string]any
		want   auth.Principal
	}{{
		name:   "scope string, tenant",
		claims: claims(map[string]any{"scope": "tasks:read  tasks:write", "tenant": "acme", "jti": "1"}),
		want:   auth.Principal{Tenant: "acme", Scopes: []string{"tasks:read", "tasks:write"}, Claims: map[string]any{"jti": "1"}},
	}, {
		name:   "scp array beside scope, duplicates once",
		claims: claims(map[string]any{"scope": "a b", "scp": []any{"b", "c"}}),
		want:   auth.Principal{Scopes: []string{"a", "b", "c"}},
	}, {
		name:   "scp string",
		claims: claims(map[string]any{"scp": "a b"}),
		want:   auth.Principal{Scopes: []string{"a", "b"}},
	}, {
		name:   "claims named in the config",
		cfg:    auth.JWTConfig{TenantClaim: "org", ScopeClaim: "roles"},
		claims: claims(map[string]any{"roles": []any{"admin"}, "org": "acme", "tenant": "ignored", "scope": "x"}),
		want:   auth.Principal{Tenant: "acme", Scopes: []string{"admin"}, Claims: map[string]any{"tenant": "ignored", "scope": "x"}},
	}, {
		name:   "null tenant",
		claims: claims(map[string]any{"tenant": json.RawMessage("null")}),
		want:   auth.Principal{},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Issuer, cfg.Audience, cfg.Keys = testIssuer, testAudience, keys
			a, err := auth.NewJWT(cfg)
			if err != nil {
				t.Fatal(err)
			}
			token := mint(t, jose.EdDSA, k.ed, "ed", tc.claims)
			p, err := a.Authenticate(context.Background(), bearer("Bearer "+token))
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.Issuer, want.Subject, want.Token = testIssuer, "alice", token
			if want.Claims == nil {
				want.Claims = map[string]any{}
			}
			for _, c := range []string{"aud", "iat", "exp"} {
				var v any
				json.Unmarshal(must(json.Marshal(tc.claims[c])), &v)
				want.Claims[c] = v
			}
			if !reflect.DeepEqual(*p, want) {
				t.Errorf("principal\n got %#v\nwant %#v", *p, want)
			}
			// The token is kept to forward, never shown.
			if b := must(json.Marshal(p)); strings.Contains(string(b), token) {
				t.Errorf("the principal's JSON holds its token: %s", b)
			}
			if s := fmt.Sprintf("%v %+v %s", p, p, p); strings.Contains(s, token) {
				t.Errorf("the principal prints its token: %s", s)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestJWTConfig(t *testing.T) {
	k := newTestKeys(t)
	keys := jwks(map[string]any{"rsa": &k.rsa.PublicKey})
	ok := func(c auth.JWTConfig) auth.JWTConfig {
		if c.Issuer == "" {
			c.Issuer = testIssuer
		}
		if c.Audience == "" {
			c.Audience = testAudience
		}
		if c.Keys == nil && c.JWKSURL == "" {
			c.Keys = keys
		}
		return c
	}
	for _, tc := range []struct {
		name  string
		cfg   auth.JWTConfig
		field string // in the error; "" for a good config
	}{
		{name: "pinned keys", cfg: ok(auth.JWTConfig{})},
		{name: "JWKS URL", cfg: ok(auth.JWTConfig{JWKSURL: "https://idp.test/jwks", RefreshInterval: time.Minute, HTTPClient: http.DefaultClient})},
		{name: "private keys serve by their public half", cfg: ok(auth.JWTConfig{Keys: jwks(map[string]any{"rsa": k.rsa})})},
		{name: "all asymmetric algorithms", cfg: ok(auth.JWTConfig{Algorithms: []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}})},
		{name: "most skew", cfg: ok(auth.JWTConfig{Skew: 5 * time.Minute})},
		{name: "no issuer", cfg: auth.JWTConfig{Audience: testAudience, Keys: keys}, field: "Issuer"},
		{name: "no audience", cfg: auth.JWTConfig{Issuer: testIssuer, Keys: keys}, field: "Audience"},
		{name: "no keys", cfg: auth.JWTConfig{Issuer: testIssuer, Audience: testAudience}, field: "Keys"},
		{name: "empty key set", cfg: ok(auth.JWTConfig{Keys: &jose.JSONWebKeySet{}}), field: "Keys"},
		{name: "symmetric key", cfg: ok(auth.JWTConfig{Keys: jwks(map[string]any{"h": []byte("0123456789abcdef0123456789abcdef")})}), field: "Keys"},
		{name: "encryption key", cfg: ok(auth.JWTConfig{Keys: &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.rsa.PublicKey, Use: "enc"}}}}), field: "Keys"},
		{name: "alg none", cfg: ok(auth.JWTConfig{Algorithms: []string{"RS256", "none"}}), field: "Algorithms"},
		{name: "HS256", cfg: ok(auth.JWTConfig{Algorithms: []string{"HS256"}}), field: "Algorithms"},
		{name: "unknown alg", cfg: ok(auth.JWTConfig{Algorithms: []string{"rs256"}}), field: "Algorithms"},
		{name: "too much skew", cfg: ok(auth.JWTConfig{Skew: 6 * time.Minute}), field: "Skew"},
		{name: "negative skew", cfg: ok(auth.JWTConfig{Skew: -time.Second}), field: "Skew"},
		{name: "negative MaxTokenBytes", cfg: ok(auth.JWTConfig{MaxTokenBytes: -1}), field: "MaxTokenBytes"},
		{name: "negative RefreshInterval", cfg: ok(auth.JWTConfig{JWKSURL: "https://idp.test/jwks", RefreshInterval: -1}), field: "RefreshInterval"},
		{name: "negative MinRefreshInterval", cfg: ok(auth.JWTConfig{JWKSURL: "https://idp.test/jwks", MinRefreshInterval: -1}), field: "MinRefreshInterval"},
		{name: "refresh without a URL", cfg: ok(auth.JWTConfig{RefreshInterval: time.Minute}), field: "JWKSURL"},
		{name: "client without a URL", cfg: ok(auth.JWTConfig{HTTPClient: http.DefaultClient}), field: "JWKSURL"},
		{name: "relative URL", cfg: ok(auth.JWTConfig{JWKSURL: "/jwks"}), field: "JWKSURL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := auth.NewJWT(tc.cfg)
			switch {
			case tc.field == "" && err != nil:
				t.Fatal(err)
			case tc.field != "" && (err == nil || !strings.Contains(err.Error(), "JWTConfig."+tc.field+":")):
				t.Fatalf("err = %v, want one naming JWTConfig.%s", err, tc.field)
			}
		})
	}
}

func TestJWTAlgorithms(t *testing.T) {
	k := newTestKeys(t)
	// A JWK naming an alg verifies that one only.
	a, err := auth.NewJWT(auth.JWTConfig{
		Issuer: testIssuer, Audience: testAudience,
		Algorithms: []string{"RS384", "PS256"},
		Keys: &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
			{Key: &k.rsa.PublicKey, KeyID: "any"},
			{Key: &k.rsa.PublicKey, KeyID: "rs384", Algorithm: "RS384"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		token  string
		reason string
	}{
		{"RS384", mint(t, jose.RS384, k.rsa, "any", claims(nil)), ""},
		{"PS256", mint(t, jose.PS256, k.rsa, "any", claims(nil)), ""},
		{"RS384 with the RS384 key", mint(t, jose.RS384, k.rsa, "rs384", claims(nil)), ""},
		{"PS256 with the RS384 key", mint(t, jose.PS256, k.rsa, "rs384", claims(nil)), "key does not fit the algorithm"},
		{"RS256, a default left out", mint(t, jose.RS256, k.rsa, "any", claims(nil)), "algorithm not allowed"},
		{"ES256, a default left out", mint(t, jose.ES256, k.ec, "any", claims(nil)), "algorithm not allowed"},
		{"no kid and two keys fit", mint(t, jose.RS384, k.rsa, "", claims(nil)), "token names no key id and several keys fit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := a.Authenticate(context.Background(), bearer("Bearer "+tc.token))
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, auth.ErrInvalidCredentials) || reasonOf(err) != tc.reason {
				t.Fatalf("err = %v, want the reason %q", err, tc.reason)
			}
		})
	}
}

func TestJWTMaxTokenBytes(t *testing.T) {
	k := newTestKeys(t)
	token := mint(t, jose.EdDSA, k.ed, "ed", claims(nil))
	header := "Bearer " + token
	for _, tc := range []struct {
		max    int
		reason string
	}{
		{len(header), ""},
		{len(header) - 1, "token too large"},
	} {
		a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, Keys: jwks(map[string]any{"ed": k.ed.Public()}), MaxTokenBytes: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.Authenticate(context.Background(), bearer(header))
		if tc.reason == "" && err != nil || tc.reason != "" && reasonOf(err) != tc.reason {
			t.Errorf("MaxTokenBytes %d (header %d): err = %v", tc.max, len(header), err)
		}
	}
}

func TestJWTChallenge(t *testing.T) {
	k := newTestKeys(t)
	keys := jwks(map[string]any{"ed": k.ed.Public()})
	named, err := auth.NewJWT(auth.JWTConfig{Scheme: `corp "sso" \ π`, Issuer: testIssuer, Audience: testAudience, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	refusal := func(a *auth.JWT, header string) error {
		_, err := a.Authenticate(context.Background(), bearer(header))
		return err
	}
	expired := "Bearer " + mint(t, jose.EdDSA, k.ed, "ed", claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}))
	for _, tc := range []struct {
		name string
		a    *auth.JWT
		err  error
		want string
	}{
		{"no credentials", plain, refusal(plain, ""), `Bearer realm="a2a"`},
		{"the sentinel", plain, auth.ErrNoCredentials, `Bearer realm="a2a"`},
		{"expired", plain, refusal(plain, expired), `Bearer realm="a2a", error="invalid_token", error_description="token expired"`},
		{"malformed", plain, refusal(plain, "Bearer x"), `Bearer realm="a2a", error="invalid_token", error_description="malformed token"`},
		{"another invalid credential", plain, auth.ErrInvalidCredentials, `Bearer realm="a2a", error="invalid_token"`},
		{"quoted realm", named, refusal(named, ""), `Bearer realm="corp \"sso\" \\ ?"`},
		{"quoted realm with an error", named, refusal(named, expired), `Bearer realm="corp \"sso\" \\ ?", error="invalid_token", error_description="token expired"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Challenge(tc.err); got != tc.want {
				t.Errorf("Challenge(%v)\n got %s\nwant %s", tc.err, got, tc.want)
			}
		})
	}
}

// TestJWTConcurrentRotation has many requests meet a rotation at once
// (under -race): all see the new key, the JWKS fetched once per request
// at most.
func TestJWTConcurrentRotation(t *testing.T) {
	k, next := newTestKeys(t), newTestKeys(t)
	srv := newJWKSServer(t, jwks(map[string]any{"old": k.ec.Public()}))
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL, MinRefreshInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(context.Background(), bearer("Bearer "+mint(t, jose.ES256, k.ec, "old", claims(nil)))); err != nil {
		t.Fatal(err)
	}
	srv.serve(t, jwks(map[string]any{"old": k.ec.Public(), "new": next.ec.Public()}))
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		token := mint(t, jose.ES256, next.ec, "new", claims(map[string]any{"sub": "alice"}))
		wg.Go(func() {
			_, errs[i] = a.Authenticate(context.Background(), bearer("Bearer "+token))
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if hits := srv.hits.Load(); hits < 2 || hits > 1+n {
		t.Errorf("%d fetches", hits)
	}
}

// BenchmarkJWTAuthenticate is the cost of authenticating one request's
// token with its key cached (fetched from a JWKS once): "verify" is a
// token not seen before (header, signature, claims and principal),
// "cached" one presented again, as a client does with every request.
func BenchmarkJWTAuthenticate(b *testing.B) {
	k := newTestKeys(b)
	srv := newJWKSServer(b, jwks(map[string]any{"rsa": &k.rsa.PublicKey, "ec": k.ec.Public(), "ed": k.ed.Public()}))
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	c := claims(map[string]any{"scope": "tasks:read tasks:write", "tenant": "acme", "jti": "b1f0c0de"})
	for _, tc := range []struct {
		alg jose.SignatureAlgorithm
		key any
		kid string
	}{
		{jose.RS256, k.rsa, "rsa"},
		{jose.ES256, k.ec, "ec"},
		{jose.EdDSA, k.ed, "ed"},
	} {
		creds := bearer("Bearer " + mint(b, tc.alg, tc.key, tc.kid, c))
		for _, run := range []struct {
			name  string
			authn func(context.Context, auth.Credentials) (*auth.Principal, error)
		}{{"verify", a.AuthenticateUncached}, {"cached", a.Authenticate}} {
			authn := run.authn
			b.Run(string(tc.alg)+"/"+run.name, func(b *testing.B) {
				if _, err := authn(context.Background(), creds); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := authn(context.Background(), creds); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
	if n := srv.hits.Load(); n != 1 {
		b.Errorf("%d fetches, want 1", n)
	}
}
