package cardsign

import (
	"crypto"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/internal/userfile"
)

// PublicKey is a public key under the key id its signatures name.
type PublicKey struct {
	ID  string
	Key crypto.PublicKey
}

// PublicJWKS returns the JWKS (RFC 7517) that publishes keys, for an agent
// to serve (at /.well-known/jwks.json, say) to the verifiers of its card:
// each key with its kid, "use": "sig" and the "alg" it signs with. During
// a rotation it lists the new key and the old one until no card signed by
// the old one is served any more. It refuses private keys (pass
// signer.Public()), keys it cannot sign cards with, and repeated ids.
func PublicJWKS(keys ...PublicKey) ([]byte, error) {
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(keys))}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if k.ID == "" {
			return nil, fmt.Errorf("cardsign: JWKS: key %d has no id", i)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("cardsign: JWKS: key id %q is repeated", k.ID)
		}
		seen[k.ID] = true
		jwk := jose.JSONWebKey{Key: k.Key, KeyID: k.ID, Use: "sig"}
		if !jwk.IsPublic() {
			return nil, fmt.Errorf("cardsign: JWKS: key %q is not a public key (pass the signer's Public())", k.ID)
		}
		alg, err := algorithmFor(k.Key)
		if err != nil {
			return nil, fmt.Errorf("cardsign: JWKS: key %q: %w", k.ID, err)
		}
		jwk.Algorithm = string(alg)
		set.Keys = append(set.Keys, jwk)
	}
	data, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("cardsign: JWKS: %w", err)
	}
	return data, nil
}

// LoadSigningKey reads a private key that can sign cards from a PEM file:
// PKCS #8 ("PRIVATE KEY", any of the three key types), SEC 1 ("EC PRIVATE
// KEY", as openssl ecparam writes it, parameters block and all) or
// PKCS #1 ("RSA PRIVATE KEY"). Its errors name the file and what is wrong
// with it, never its contents.
func LoadSigningKey(path string) (crypto.Signer, error) {
	data, err := userfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("cardsign: signing key: %w", err)
	}
	key, err := parseSigningKey(data)
	if err != nil {
		return nil, fmt.Errorf("cardsign: signing key %s: %w", path, err)
	}
	return key, nil
}

func parseSigningKey(data []byte) (crypto.Signer, error) {
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			return nil, errors.New("no PEM private key in the file")
		}
		data = rest
		var (
			key any
			err error
		)
		switch block.Type {
		case "EC PARAMETERS":
			continue // openssl ecparam -genkey writes it before the key
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(block.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the key is encrypted; decrypt it first (openssl pkcs8 -in KEY -out PLAIN)")
		case "PUBLIC KEY", "CERTIFICATE":
			return nil, fmt.Errorf("the file holds a %s, not a private key", block.Type)
		default:
			return nil, fmt.Errorf("PEM block %q is not a private key this reads (PRIVATE KEY, EC PRIVATE KEY, RSA PRIVATE KEY)", block.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("malformed %s block: %w", block.Type, err)
		}
		signer, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("a %T cannot sign", key)
		}
		if _, err := algorithmFor(signer.Public()); err != nil {
			return nil, err
		}
		return signer, nil
	}
}
