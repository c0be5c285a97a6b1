package cardsign

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
)

// FuzzVerify feeds Verify signatures whose fields the fuzzer writes, over
// a card signed by a trusted Ed25519 key. Verify never panics, fails with
// one of its errors, and accepts nothing but the genuine signature: an
// Ed25519 signature is unique to its key and message, and each field has
// one accepted spelling, so anything else that verified would be a
// forgery.
func FuzzVerify(f *testing.F) {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	card := testCard()
	genuine, err := Sign(card, key, "k1", SignOptions{})
	if err != nil {
		f.Fatal(err)
	}
	payload, err := Payload(card)
	if err != nil {
		f.Fatal(err)
	}
	v := pinnedVerifier(f, "k1", key)
	b64 := base64.RawURLEncoding.EncodeToString
	mac := hmac.New(sha256.New, key.Public().(ed25519.PublicKey))
	hs256 := b64([]byte(`{"alg":"HS256","kid":"k1"}`))
	mac.Write([]byte(hs256 + "." + b64(payload)))

	f.Add(genuine.Protected, genuine.Signature)
	f.Add(b64([]byte(`{"alg":"none","kid":"k1"}`)), "")
	f.Add(hs256, b64(mac.Sum(nil)))
	f.Add(b64([]byte(`{"alg":"EdDSA","kid":"k1","typ":"JOSE","crit":["b64"],"b64":false}`)), genuine.Signature)
	f.Add(b64([]byte(`{"alg":"ES256","kid":"k1"}`)), genuine.Signature)
	f.Add(b64([]byte(`{"alg":"EdDSA","kid":"k2"}`)), genuine.Signature)
	f.Add(genuine.Protected+"\n", genuine.Signature)
	f.Add("", "")
	f.Fuzz(func(t *testing.T, protected, signature string) {
		c := *card
		c.Signatures = []a2a.AgentCardSignature{{Protected: protected, Signature: signature}}
		err := v.Verify(context.Background(), &c)
		if err == nil {
			if protected != genuine.Protected || signature != genuine.Signature {
				t.Fatalf("forgery accepted: protected %q, signature %q", protected, signature)
			}
			return
		}
		if !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("error %v is neither ErrBadSignature nor ErrUnknownKey", err)
		}
	})
}
