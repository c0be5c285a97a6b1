package jwks

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"math/big"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// FuzzParse: a JWKS comes from the network. Whatever the document, parse
// returns keys or an error and never panics, and every key it returns is
// a public RSA, EC or Ed25519 key that verifies some algorithm.
func FuzzParse(f *testing.F) {
	// Keys from fixed values, so that every fuzzing worker seeds the same.
	ed := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))
	ec := &ecdsa.PublicKey{Curve: elliptic.P256(), X: elliptic.P256().Params().Gx, Y: elliptic.P256().Params().Gy}
	rsaKey := &rsa.PublicKey{N: new(big.Int).Lsh(big.NewInt(1), 2047), E: 65537}
	rsaKey.N.Add(rsaKey.N, big.NewInt(159))
	for _, set := range []jose.JSONWebKeySet{
		{Keys: []jose.JSONWebKey{{Key: ed.Public(), KeyID: "ed", Use: "sig"}, {Key: ec, KeyID: "ec", Algorithm: "ES256"}, {Key: rsaKey, KeyID: "rsa"}}},
		{Keys: []jose.JSONWebKey{{Key: ed, KeyID: "private"}}},
		{Keys: []jose.JSONWebKey{{Key: []byte("a shared secret"), KeyID: "hmac"}}},
		{Keys: []jose.JSONWebKey{{Key: ed.Public(), KeyID: "enc", Use: "enc"}}},
	} {
		b, err := json.Marshal(set)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{"keys":[]}`, `{"keys":null}`, `{}`, `[]`, `{"keys":[{"kty":"EC","crv":"P-256","x":"","y":""}]}`, `{"keys":[{"kty":"RSA","n":"AQ","e":"AQAB"}]}`, `{"keys":[1,"x",null]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		keys, err := parse(doc)
		if err != nil {
			return
		}
		for _, k := range keys {
			var fits bool
			for _, alg := range []string{"RS256", "PS256", "ES256", "ES384", "ES512", "EdDSA"} {
				fits = fits || k.Fits(alg)
			}
			if !fits && k.Alg == "" {
				t.Fatalf("key %q of type %T verifies no algorithm", k.ID, k.Public)
			}
			switch k.Public.(type) {
			case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
			default:
				t.Fatalf("key %q is a %T", k.ID, k.Public)
			}
		}
	})
}
