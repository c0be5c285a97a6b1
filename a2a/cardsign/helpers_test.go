package cardsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"sync"
	"testing"

	"github.com/go-jose/go-jose/v4"
	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a"
)

// TestMain fails the run if a test leaves a goroutine behind (a JWKS
// server, a client's connection).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testKey is a signing key of one algorithm.
type testKey struct {
	alg    string
	signer crypto.Signer
}

// rsaKey is generated once: a 2048-bit key takes a while under -race.
var rsaKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

func newECKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newEdKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// testKeys returns a key of each algorithm signatures may use.
func testKeys(t testing.TB) []testKey {
	return []testKey{
		{"ES256", newECKey(t)},
		{"RS256", rsaKey()},
		{"EdDSA", newEdKey(t)},
	}
}

// keySet is the JWKS an agent publishes for keys, as a verifier pins it.
func keySet(t testing.TB, keys ...PublicKey) *jose.JSONWebKeySet {
	t.Helper()
	data, err := PublicJWKS(keys...)
	if err != nil {
		t.Fatal(err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		t.Fatal(err)
	}
	return &set
}

// pinnedVerifier trusts signer's public key under kid.
func pinnedVerifier(t testing.TB, kid string, signer crypto.Signer) *Verifier {
	t.Helper()
	v, err := NewVerifier(VerifierConfig{Keys: keySet(t, PublicKey{ID: kid, Key: signer.Public()})})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// testCard is a card with something in every part a signature covers.
func testCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "planner",
		Description: "Plans trips: routes, bookings, budgets. Ünïcödé and \"quotes\" <&> too.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://planner.example.com/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			{URL: "https://planner.example.com/grpc", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version, Tenant: "team-a"},
		},
		Provider:         &a2a.AgentProvider{Organization: "Example Travel", URL: "https://example.com"},
		Version:          "2.1.0",
		DocumentationURL: "https://example.com/docs/planner",
		Capabilities: a2a.AgentCapabilities{
			Streaming: true,
			Extensions: []a2a.AgentExtension{{
				URI:         "https://example.com/ext/budget/v1",
				Description: "Budget limits",
				Required:    true,
				Params:      map[string]any{"currency": "EUR", "max": 2500.5, "tiers": []any{1.0, 10.0, 1e21}, "strict": false},
			}},
		},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
			"oauth": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{
				TokenURL: "https://auth.example.com/token", Scopes: map[string]string{"plan:read": "read plans", "plan:write": "write plans"},
			}}}},
		},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string][]string{"oauth": {"plan:read"}}}},
		DefaultInputModes:    []string{"text/plain", "application/json"},
		DefaultOutputModes:   []string{"text/plain"},
		Skills: []a2a.AgentSkill{
			{ID: "route", Name: "Route", Description: "Plans a route.", Tags: []string{"travel", "maps"}, Examples: []string{"Paris to Rome by train"}},
			{ID: "book", Name: "Book", Description: "Books tickets.", Tags: []string{"travel"}, OutputModes: []string{"application/json"},
				SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string][]string{"oauth": {"plan:write"}}}}},
		},
		IconURL: "https://example.com/planner.png",
	}
}
