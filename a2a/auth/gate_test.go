package auth_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
)

func headers(kv ...string) auth.Credentials {
	return auth.Credentials{Header: func(name string) string {
		for i := 0; i+1 < len(kv); i += 2 {
			if strings.EqualFold(kv[i], name) {
				return kv[i+1]
			}
		}
		return ""
	}}
}

func newKeys(t *testing.T) *auth.APIKeys {
	t.Helper()
	k, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{
		{Key: "reader-key-0123456789", Name: "reader", Tenant: "acme", Scopes: []string{"tasks:read"}},
		{Key: "writer-key-0123456789", Name: "writer", Tenant: "acme", Scopes: []string{"tasks:read", "messages:send"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestGate(t *testing.T) {
	var audit bytes.Buffer
	gate, err := auth.NewGate(auth.GateConfig{
		Authenticators: []auth.Authenticator{newKeys(t)},
		Policy: auth.Policy{Rules: []auth.Rule{
			{Methods: []string{"SendMessage", "SendStreamingMessage"}, Scopes: []string{"messages:send"}},
			{Methods: []string{"*"}, Scopes: []string{"tasks:read"}},
		}},
		Audit: slog.New(slog.NewJSONHandler(&audit, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method string
		creds        auth.Credentials
		code         a2a.ErrorCode // 0: admitted
		who          string
	}{
		{"no credential", "GetTask", headers(), a2a.CodeUnauthenticated, ""},
		{"unknown key", "GetTask", headers("X-API-Key", "guess-0123456789abcdef"), a2a.CodeUnauthenticated, ""},
		{"oversized key", "GetTask", headers("X-API-Key", strings.Repeat("k", 4096)), a2a.CodeUnauthenticated, ""},
		{"key as Authorization ApiKey", "GetTask", headers("Authorization", "ApiKey reader-key-0123456789"), 0, "reader"},
		{"reader reads", "GetTask", headers("X-API-Key", "reader-key-0123456789"), 0, "reader"},
		{"reader may not send", "SendMessage", headers("X-API-Key", "reader-key-0123456789"), a2a.CodePermissionDenied, ""},
		{"writer sends", "SendMessage", headers("x-api-key", "writer-key-0123456789"), 0, "writer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, err := gate.Admit(context.Background(), tt.method, tt.creds)
			if tt.code != 0 {
				var e *a2a.Error
				if !errors.As(err, &e) || e.Code != tt.code {
					t.Fatalf("Admit = %v, want code %d", err, tt.code)
				}
				if tt.code == a2a.CodeUnauthenticated && !strings.HasPrefix(e.Challenge, `ApiKey header="X-API-Key"`) {
					t.Errorf("challenge %q", e.Challenge)
				}
				if tt.code == a2a.CodePermissionDenied && !strings.Contains(e.Message, "scope messages:send") {
					t.Errorf("refusal %q does not say what is missing", e.Message)
				}
				return
			}
			if err != nil {
				t.Fatalf("Admit = %v", err)
			}
			if p := auth.FromContext(ctx); p == nil || p.Subject != tt.who || p.Tenant != "acme" || p.Scheme != "apiKey" {
				t.Fatalf("principal %+v, want %s of acme", p, tt.who)
			}
		})
	}
	if strings.Contains(audit.String(), "key-0123456789") {
		t.Errorf("the audit log holds a key:\n%s", audit.String())
	}
	// The client's address is in the record.
	from := headers("X-API-Key", "reader-key-0123456789")
	from.Remote = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 5555}
	if _, err := gate.Admit(context.Background(), "GetTask", from); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(audit.String(), `"remote":"192.0.2.7:5555"`) {
		t.Errorf("the audit log lacks the client's address:\n%s", audit.String())
	}
	for _, want := range []string{`"decision":"refused","method":"SendMessage"`, `"decision":"admitted","method":"GetTask","scheme":"apiKey","principal":"apikey|reader","tenant":"acme"`} {
		if !strings.Contains(audit.String(), want) {
			t.Errorf("the audit log lacks %s:\n%s", want, audit.String())
		}
	}
}

func TestGateDryRun(t *testing.T) {
	var audit bytes.Buffer
	gate, err := auth.NewGate(auth.GateConfig{
		Authenticators: []auth.Authenticator{newKeys(t)},
		Policy:         auth.Policy{DryRun: true, Rules: []auth.Rule{{Methods: []string{"CancelTask"}, Claims: map[string]string{"role": "admin"}}}},
		Audit:          slog.New(slog.NewJSONHandler(&audit, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gate.Admit(context.Background(), "CancelTask", headers("X-API-Key", "reader-key-0123456789")); err != nil {
		t.Fatalf("dry run refused: %v", err)
	}
	if !strings.Contains(audit.String(), `"decision":"refused in dry run","method":"CancelTask"`) || !strings.Contains(audit.String(), "claim role=admin") {
		t.Errorf("the audit log does not record the dry-run refusal:\n%s", audit.String())
	}
}

func TestGateOpen(t *testing.T) {
	gate, err := auth.NewGate(auth.GateConfig{AllowAnonymous: true, Authenticators: []auth.Authenticator{newKeys(t)}, Audit: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := gate.Admit(context.Background(), "GetTask", headers())
	if err != nil || auth.FromContext(ctx) != nil {
		t.Fatalf("anonymous: %v, %+v", err, auth.FromContext(ctx))
	}
	// An open gate still refuses a bad credential: a client that sent
	// one meant to be someone.
	if _, err := gate.Admit(context.Background(), "GetTask", headers("X-API-Key", "wrong-key-0123456789")); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("bad key at an open gate: %v", err)
	}
	card := &a2a.AgentCard{}
	gate.Describe(card)
	if card.SecuritySchemes["apiKey"].APIKey == nil || len(card.SecurityRequirements) != 0 {
		t.Fatalf("open gate's card: %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
	}
	if _, err := auth.NewGate(auth.GateConfig{}); err == nil {
		t.Fatal("a gate with no authenticator and no anonymous access was made")
	}
}

func TestGateRateLimits(t *testing.T) {
	gate, err := auth.NewGate(auth.GateConfig{
		Authenticators: []auth.Authenticator{newKeys(t)},
		Limits:         auth.RateLimits{PerPrincipal: auth.Rate{PerSecond: 0.001, Burst: 2}, PerTenant: auth.Rate{PerSecond: 0.001, Burst: 3}},
		Audit:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	admit := func(key string) error {
		_, err := gate.Admit(context.Background(), "GetTask", headers("X-API-Key", key))
		return err
	}
	for i := range 2 {
		if err := admit("reader-key-0123456789"); err != nil {
			t.Fatalf("reader's request %d: %v", i, err)
		}
	}
	err = admit("reader-key-0123456789")
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != a2a.CodeInternal || e.RetryAfter <= 0 || !strings.Contains(e.Message, "caller") {
		t.Fatalf("reader's third request = %v, want a retryable refusal naming the caller's limit", err)
	}
	// The writer has requests of its own, but the tenant's third is its
	// last.
	if err := admit("writer-key-0123456789"); err != nil {
		t.Fatalf("writer's first: %v", err)
	}
	if err := admit("writer-key-0123456789"); !errors.As(err, &e) || !strings.Contains(e.Message, "tenant") {
		t.Fatalf("writer's second = %v, want the tenant's limit", err)
	}
}

func TestAPIKeysConfig(t *testing.T) {
	for name, keys := range map[string][]auth.APIKey{
		"short":     {{Key: "short", Name: "a"}},
		"unnamed":   {{Key: "long-enough-key-0123"}},
		"duplicate": {{Key: "long-enough-key-0123", Name: "a"}, {Key: "long-enough-key-0123", Name: "b"}},
	} {
		if _, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: keys}); err == nil {
			t.Errorf("%s key accepted", name)
		}
	}
}

func TestMTLS(t *testing.T) {
	m := auth.NewMTLS(auth.MTLSConfig{TenantFromOU: true})
	if _, err := m.Authenticate(context.Background(), auth.Credentials{}); !errors.Is(err, auth.ErrNoCredentials) {
		t.Fatalf("no certificate: %v", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	spiffe, _ := url.Parse("spiffe://team-a.example/ns/agents/sa/research")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "research", OrganizationalUnit: []string{"team-a"}},
		Issuer: pkix.Name{CommonName: "team-a CA"}, URIs: []*url.URL{spiffe}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Authenticate(context.Background(), auth.Credentials{PeerCertificates: []*x509.Certificate{cert}})
	if err != nil || p.Subject != spiffe.String() || p.Tenant != "team-a" || p.Scheme != "mtls" {
		t.Fatalf("principal %+v, %v", p, err)
	}
}

func TestOwner(t *testing.T) {
	alice := &auth.Principal{Issuer: "https://idp.example", Subject: "alice"}
	bound := &auth.Principal{Issuer: "https://idp.example", Subject: "alice", Tenant: "acme"}
	tricky := &auth.Principal{Issuer: "https://idp.example|alice", Subject: ""}
	var anonymous *auth.Principal
	owners := map[string]string{
		"alice in acme":             alice.Owner("acme"),
		"alice in globex":           alice.Owner("globex"),
		"alice in the default":      alice.Owner(""),
		"anonymous in acme":         anonymous.Owner("acme"),
		"anonymous in the default":  anonymous.Owner(""),
		"an issuer ending in alice": tricky.Owner("acme"),
	}
	seen := map[string]string{}
	for name, o := range owners {
		if other, dup := seen[o]; dup {
			t.Errorf("%s and %s share the owner key %q", name, other, o)
		}
		seen[o] = name
	}
	if bound.Owner("globex") != bound.Owner("acme") {
		t.Errorf("a credential bound to acme owns elsewhere in another tenant")
	}
}

// TestGateChallenges: a refusal's WWW-Authenticate offers every scheme the
// gate takes; the one that refused a credential comes first and alone
// carries an error code, as RFC 6750 has it for a request that sent no
// credential of a scheme.
func TestGateChallenges(t *testing.T) {
	k := newTestKeys(t)
	jwt, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, Keys: jwks(map[string]any{"ed": k.ed.Public()})})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{newKeys(t), jwt}, Audit: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	expired := "Bearer " + mint(t, jose.EdDSA, k.ed, "ed", claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}))
	for _, tc := range []struct {
		name  string
		creds auth.Credentials
		want  string
	}{
		{"no credential", headers(), `ApiKey header="X-API-Key", Bearer realm="a2a"`},
		{"an unknown key", headers("X-API-Key", "guess-0123456789abcdef"), `ApiKey header="X-API-Key", error="invalid_key", Bearer realm="a2a"`},
		{"an expired token", headers("Authorization", expired), `Bearer realm="a2a", error="invalid_token", error_description="token expired", ApiKey header="X-API-Key"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := gate.Admit(context.Background(), "GetTask", tc.creds)
			var e *a2a.Error
			if !errors.As(err, &e) || e.Code != a2a.CodeUnauthenticated {
				t.Fatalf("Admit = %v, want unauthenticated", err)
			}
			if e.Challenge != tc.want {
				t.Errorf("challenge\n got %s\nwant %s", e.Challenge, tc.want)
			}
		})
	}
}
