package cardsign_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
)

// An agent signs its card and publishes its key; a client that fetched
// the card verifies it, and notices when it was changed on the way.
func ExampleSignCard() {
	ctx := context.Background()
	// The agent's key; a server reads one with cardsign.LoadSigningKey.
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	card := &a2a.AgentCard{
		Name:        "echo",
		Description: "Repeats what it is sent.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://echo.example.com/a2a", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
		},
		Version:            "1.0.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "Echoes.", Tags: []string{"echo"}}},
	}
	signed, err := cardsign.SignCard(card, key, "echo-2026-11", cardsign.SignOptions{JWKSURL: "https://echo.example.com/.well-known/jwks.json"})
	if err != nil {
		fmt.Println(err)
		return
	}
	header, _ := base64.RawURLEncoding.DecodeString(signed.Signatures[0].Protected)
	fmt.Println("protected header:", string(header))

	// The agent serves its public key at the jku URL; this client pins it
	// instead (VerifierConfig.JWKSURL would fetch it).
	jwks, err := cardsign.PublicJWKS(cardsign.PublicKey{ID: "echo-2026-11", Key: key.Public()})
	if err != nil {
		fmt.Println(err)
		return
	}
	var trusted jose.JSONWebKeySet
	if err := json.Unmarshal(jwks, &trusted); err != nil {
		fmt.Println(err)
		return
	}
	verifier, err := cardsign.NewVerifier(cardsign.VerifierConfig{Keys: &trusted})
	if err != nil {
		fmt.Println(err)
		return
	}

	// The card as the client fetched it.
	served, _ := a2a.AppendJSON(nil, signed)
	var fetched a2a.AgentCard
	if err := a2a.Unmarshal(served, &fetched); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("verified:", verifier.Verify(ctx, &fetched))

	fetched.SupportedInterfaces[0].URL = "https://attacker.example.com/a2a"
	err = verifier.Verify(ctx, &fetched)
	fmt.Println("tampered:", errors.Is(err, cardsign.ErrBadSignature))
	fmt.Println(err)
	// Output:
	// protected header: {"alg":"EdDSA","jku":"https://echo.example.com/.well-known/jwks.json","kid":"echo-2026-11","typ":"JOSE"}
	// verified: <nil>
	// tampered: true
	// cardsign: card "echo": signature 0: bad signature: does not verify with the key "echo-2026-11"
}
