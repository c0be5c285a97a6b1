package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

// FuzzJWT feeds Authorization headers to a JWT authenticator: it must
// never panic, refuse with anything but the two sentinels, repeat the
// token in an error, or admit a token that the test keys did not sign.
func FuzzJWT(f *testing.F) {
	// The keys are derived from fixed seeds: every fuzzing worker runs
	// this function, and the valid seeds must verify in all of them.
	edKey := ed25519.NewKeyFromSeed(seed("ed"))
	ecKey, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), seed("ec"))
	if err != nil {
		f.Fatal(err)
	}
	a, err := auth.NewJWT(auth.JWTConfig{
		Issuer: testIssuer, Audience: testAudience,
		Keys: jwks(map[string]any{"ed": edKey.Public(), "ec": ecKey.Public()}),
	})
	if err != nil {
		f.Fatal(err)
	}
	otherEd := ed25519.NewKeyFromSeed(seed("other"))
	ecDER := must(x509.MarshalPKIXPublicKey(ecKey.Public()))
	valid := mint(f, jose.ES256, ecKey, "ec", claims(map[string]any{"scope": "a b", "tenant": "t"}))
	for _, h := range []string{
		"Bearer " + valid,
		"bearer   " + mint(f, jose.EdDSA, edKey, "ed", claims(map[string]any{"scp": []string{"x"}})),
		"Bearer " + mint(f, jose.EdDSA, edKey, "", claims(nil)),
		"Bearer " + mint(f, jose.EdDSA, otherEd, "ed", claims(nil)),
		"Bearer " + mint(f, jose.HS256, ecDER, "ec", claims(nil)),
		"Bearer " + mint(f, jose.ES256, ecKey, "ec", claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})),
		"Bearer " + mint(f, jose.ES256, ecKey, "ec", claims(map[string]any{"aud": []any{1, nil}, "nbf": "x"})),
		"Bearer " + unsigned("none", claims(nil)),
		"Bearer " + swapPayload(valid, unsigned("none", claims(map[string]any{"sub": "root"}))),
		"Bearer a.b.c",
		"Bearer ..",
		"Bearer ",
		"Basic YWxpY2U6c2VjcmV0",
		"",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		p, err := a.Authenticate(context.Background(), bearer(header))
		_, token, _ := strings.Cut(header, " ")
		token = strings.TrimLeft(token, " ")
		if err != nil {
			if !errors.Is(err, auth.ErrInvalidCredentials) && !errors.Is(err, auth.ErrNoCredentials) {
				t.Fatalf("neither sentinel: %v", err)
			}
			if len(token) >= 16 && strings.Contains(err.Error(), token) {
				t.Fatalf("the error repeats the token: %v", err)
			}
			return
		}
		sig, err := jose.ParseSignedCompact(token, []jose.SignatureAlgorithm{jose.ES256, jose.EdDSA})
		if err != nil {
			t.Fatalf("admitted a token go-jose cannot parse: %v", err)
		}
		if _, err := sig.Verify(edKey.Public()); err != nil {
			if _, err := sig.Verify(ecKey.Public()); err != nil {
				t.Fatal("admitted a token the test keys did not sign")
			}
		}
		if p.Issuer != testIssuer || p.Subject == "" {
			t.Fatalf("admitted %+v", p)
		}
	})
}

func seed(name string) []byte {
	s := sha256.Sum256([]byte("a2amesh auth fuzz " + name))
	return s[:]
}
