package interop

// Agent card signatures (A2A 1.0 section 8.4) between a2amesh's
// a2a/cardsign and @a2a-js/sdk 1.3.0's signing utilities, through
// js/cardsign.mjs run by Node.js: each verifies the other's signatures,
// refuses tampered cards, and both sign the same canonical payload.
// (a2a-go v2.4.0 carries card signatures but neither makes nor checks
// them, so it has no part here.)

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
)

// jsCardsignSummary is the line cardsign.mjs prints.
type jsCardsignSummary struct {
	OK               bool              `json:"ok"`
	Error            string            `json:"error"`
	Verified         []bool            `json:"verified"`
	TamperedVerified []bool            `json:"tamperedVerified"`
	Canonical        []string          `json:"canonical"`
	PeerSigned       []json.RawMessage `json:"peerSigned"`
	PeerJWK          json.RawMessage   `json:"peerJWK"`
}

// signedCard is a card with something in each part a signature covers.
func cardToSign() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "planner",
		Description: "Plans trips. Ünïcödé, \"quotes\" and <&>.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://planner.example.com/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			{URL: "https://planner.example.com/grpc", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version, Tenant: "team-a"},
		},
		Provider:         &a2a.AgentProvider{Organization: "Example Travel", URL: "https://example.com"},
		Version:          "2.1.0",
		DocumentationURL: "https://example.com/docs",
		Capabilities: a2a.AgentCapabilities{
			Streaming: true,
			Extensions: []a2a.AgentExtension{{
				URI: "https://example.com/ext/budget/v1", Required: true,
				Params: map[string]any{"currency": "EUR", "max": 2500.5, "tiers": []any{1.0, 1e21}, "strict": false},
			}},
		},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
			"oauth": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{
				TokenURL: "https://auth.example.com/token", Scopes: map[string]string{"plan:read": "read plans"},
			}}}},
		},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string][]string{"oauth": {"plan:read"}}}},
		DefaultInputModes:    []string{"text/plain", "application/json"},
		DefaultOutputModes:   []string{"text/plain"},
		Skills: []a2a.AgentSkill{
			{ID: "route", Name: "Route", Description: "Plans a route.", Tags: []string{"travel"}, Examples: []string{"Paris to Rome"}},
			{ID: "book", Name: "Book", Description: "Books tickets.", Tags: []string{"travel"}, OutputModes: []string{"application/json"}},
		},
		IconURL: "https://example.com/planner.png",
	}
}

// Cards as an agent built on @a2a-js/sdk serves them; the second sets an
// optional flag explicitly to false, which a2a.AgentCard cannot hold.
const (
	jsPlainCard = `{"name":"js-agent","description":"An agent signed by a2a-js","version":"1.0.0",
"supportedInterfaces":[{"url":"https://js.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{"streaming":true,"extensions":[{"uri":"https://example.com/ext/x","params":{"n":1.5,"on":false}}]},
"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"Does s.","tags":["t"]}]}`
	jsExplicitFalseCard = `{"name":"js-agent-2","description":"An agent signed by a2a-js","version":"1.0.0",
"supportedInterfaces":[{"url":"https://js.example.com/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{"streaming":true,"pushNotifications":false},
"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"s","name":"S","description":"Does s.","tags":["t"]}]}`
)

func TestJSCardSignatures(t *testing.T) {
	// Reading the script lets go test's result cache notice when it
	// changes (it does not see what node reads).
	if _, err := os.ReadFile(filepath.Join("js", "cardsign.mjs")); err != nil {
		t.Fatal(err)
	}
	node, npm := requireNode(t)
	dir := installJSDeps(t, npm)

	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	keys := []struct {
		kid string
		key crypto.Signer
	}{{"es256", ecKey}, {"rs256", rsaKey}, {"eddsa", edKey}}
	var (
		pubs   []cardsign.PublicKey
		signed []json.RawMessage
		cards  []*a2a.AgentCard
	)
	for _, k := range keys {
		pubs = append(pubs, cardsign.PublicKey{ID: k.kid, Key: k.key.Public()})
		card, err := cardsign.SignCard(cardToSign(), k.key, k.kid, cardsign.SignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cards = append(cards, card)
		signed = append(signed, encodeCard(t, card))
	}
	jwks, err := cardsign.PublicJWKS(pubs...)
	if err != nil {
		t.Fatal(err)
	}
	renamed := *cards[0]
	renamed.Name = "planner2"
	lessSkills := *cards[1]
	lessSkills.Skills = lessSkills.Skills[:1]
	input, err := json.Marshal(map[string]any{
		"signed":   signed,
		"jwks":     json.RawMessage(jwks),
		"tampered": []json.RawMessage{encodeCard(t, &renamed), encodeCard(t, &lessSkills)},
		"unsigned": []json.RawMessage{json.RawMessage(jsPlainCard), json.RawMessage(jsExplicitFalseCard)},
	})
	if err != nil {
		t.Fatal(err)
	}
	sum := runCardsignJS(t, node, dir, input)

	for i, ok := range sum.Verified {
		if !ok {
			t.Errorf("@a2a-js/sdk does not verify our %s signature", keys[i].kid)
		}
	}
	for i, ok := range sum.TamperedVerified {
		if ok {
			t.Errorf("@a2a-js/sdk verifies tampered card %d", i)
		}
	}
	if len(sum.Verified) != len(keys) || len(sum.TamperedVerified) != 2 || len(sum.Canonical) != len(keys) || len(sum.PeerSigned) != 2 {
		t.Fatalf("summary has %d, %d, %d, %d results", len(sum.Verified), len(sum.TamperedVerified), len(sum.Canonical), len(sum.PeerSigned))
	}
	for i, card := range cards {
		ours, err := cardsign.Payload(card)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Canonical[i] != string(ours) {
			t.Errorf("canonical payloads differ:\nours   %s\na2a-js %s", ours, sum.Canonical[i])
		}
	}

	// What a2a-js signed, we verify.
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(sum.PeerJWK); err != nil {
		t.Fatalf("a2a-js's key: %v", err)
	}
	v, err := cardsign.NewVerifier(cardsign.VerifierConfig{Keys: &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testContext(t), 10*time.Second)
	defer cancel()
	for i, data := range sum.PeerSigned {
		if err := v.VerifyJSON(ctx, data); err != nil {
			t.Errorf("card %d signed by a2a-js: VerifyJSON: %v", i, err)
		}
		var card a2a.AgentCard
		if err := a2a.Unmarshal(data, &card); err != nil {
			t.Fatal(err)
		}
		err := v.Verify(ctx, &card)
		switch i {
		case 0:
			if err != nil {
				t.Errorf("card signed by a2a-js, decoded: Verify: %v", err)
			}
		case 1:
			// The decoded card lost "pushNotifications": false, which
			// a2a-js signed (the limit the package documentation states).
			if !errors.Is(err, cardsign.ErrBadSignature) {
				t.Errorf("card with an explicit false signed by a2a-js, decoded: Verify: %v, want ErrBadSignature", err)
			}
		}
		tampered := bytes.Replace(data, []byte(`"Does s."`), []byte(`"Does t."`), 1)
		if err := v.VerifyJSON(ctx, tampered); !errors.Is(err, cardsign.ErrBadSignature) {
			t.Errorf("card %d signed by a2a-js, tampered: VerifyJSON: %v, want ErrBadSignature", i, err)
		}
	}
}

func encodeCard(t *testing.T, card *a2a.AgentCard) json.RawMessage {
	t.Helper()
	data, err := a2a.AppendJSON(nil, card)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// runCardsignJS runs cardsign.mjs on input and returns its summary.
func runCardsignJS(t *testing.T, node, dir string, input []byte) jsCardsignSummary {
	t.Helper()
	var sum jsCardsignSummary
	runJS(t, node, dir, input, &sum, "cardsign.mjs")
	if !sum.OK {
		t.Fatalf("cardsign.mjs: %s", sum.Error)
	}
	return sum
}
