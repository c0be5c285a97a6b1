package cardsign

import (
	"context"
	"crypto"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPublicJWKS(t *testing.T) {
	keys := testKeys(t)
	var pub []PublicKey
	for _, k := range keys {
		pub = append(pub, PublicKey{ID: "key-" + k.alg, Key: k.signer.Public()})
	}
	data, err := PublicJWKS(pub...)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Keys) != len(keys) {
		t.Fatalf("%d keys published, want %d: %s", len(doc.Keys), len(keys), data)
	}
	wantKty := map[string]string{"ES256": "EC", "RS256": "RSA", "EdDSA": "OKP"}
	for i, k := range keys {
		got := doc.Keys[i]
		if got["kid"] != "key-"+k.alg || got["alg"] != k.alg || got["use"] != "sig" || got["kty"] != wantKty[k.alg] {
			t.Errorf("key %d: %v", i, got)
		}
		for _, private := range []string{"d", "p", "q", "dp", "dq", "qi"} {
			if _, ok := got[private]; ok {
				t.Errorf("key %d publishes private parameter %q", i, private)
			}
		}
	}
	// What was published verifies what was signed.
	set := keySet(t, pub...)
	v, err := NewVerifier(VerifierConfig{Keys: set})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		signed, err := SignCard(testCard(), k.signer, "key-"+k.alg, SignOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Verify(context.Background(), signed); err != nil {
			t.Errorf("%s: %v", k.alg, err)
		}
	}
}

func TestPublicJWKSRefuses(t *testing.T) {
	ec := newECKey(t)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		keys []PublicKey
		why  string
	}{
		{"private key", []PublicKey{{ID: "k", Key: ec}}, "not a public key"},
		{"no id", []PublicKey{{Key: ec.Public()}}, "no id"},
		{"repeated id", []PublicKey{{ID: "k", Key: ec.Public()}, {ID: "k", Key: newEdKey(t).Public()}}, "repeated"},
		{"P-384", []PublicKey{{ID: "k", Key: p384.Public()}}, "P-256"},
		{"not a key", []PublicKey{{ID: "k", Key: "secret"}}, "not a public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PublicJWKS(tc.keys...)
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %v, want one saying %q", err, tc.why)
			}
		})
	}
}

func writePEM(t *testing.T, blocks ...*pem.Block) string {
	t.Helper()
	var data []byte
	for _, b := range blocks {
		data = append(data, pem.EncodeToMemory(b)...)
	}
	path := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func pkcs8(t *testing.T, key any) *pem.Block {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &pem.Block{Type: "PRIVATE KEY", Bytes: der}
}

func TestLoadSigningKey(t *testing.T) {
	ec, ed, rsaK := newECKey(t), newEdKey(t), rsaKey()
	sec1, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		blocks []*pem.Block
		want   crypto.Signer
	}{
		{"PKCS #8 EC", []*pem.Block{pkcs8(t, ec)}, ec},
		{"PKCS #8 RSA", []*pem.Block{pkcs8(t, rsaK)}, rsaK},
		{"PKCS #8 Ed25519", []*pem.Block{pkcs8(t, ed)}, ed},
		{"SEC 1 EC after its parameters", []*pem.Block{{Type: "EC PARAMETERS", Bytes: []byte{0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07}}, {Type: "EC PRIVATE KEY", Bytes: sec1}}, ec},
		{"PKCS #1 RSA", []*pem.Block{{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaK)}}, rsaK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LoadSigningKey(writePEM(t, tc.blocks...))
			if err != nil {
				t.Fatalf("LoadSigningKey: %v", err)
			}
			if !got.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(tc.want.Public()) {
				t.Errorf("loaded another key")
			}
			// It signs cards that verify.
			signed, err := SignCard(testCard(), got, "k", SignOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := pinnedVerifier(t, "k", tc.want).Verify(context.Background(), signed); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
}

func TestLoadSigningKeyRefuses(t *testing.T) {
	ec := newECKey(t)
	spki, err := x509.MarshalPKIXPublicKey(ec.Public())
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x25519, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret := pkcs8(t, ec)
	corrupt := *secret
	corrupt.Bytes = append([]byte{}, secret.Bytes[:len(secret.Bytes)/2]...)
	for _, tc := range []struct {
		name string
		path string
		why  string
	}{
		{"missing file", filepath.Join(t.TempDir(), "nope.pem"), "no such file"},
		{"not PEM", func() string {
			p := filepath.Join(t.TempDir(), "key.txt")
			if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}(), "no PEM private key"},
		{"public key", writePEM(t, &pem.Block{Type: "PUBLIC KEY", Bytes: spki}), "PUBLIC KEY, not a private key"},
		{"encrypted", writePEM(t, &pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}), "encrypted"},
		{"other block", writePEM(t, &pem.Block{Type: "OPENSSH PRIVATE KEY", Bytes: []byte{1}}), `"OPENSSH PRIVATE KEY"`},
		{"truncated", writePEM(t, &corrupt), "malformed PRIVATE KEY"},
		{"P-384", writePEM(t, pkcs8(t, p384)), "P-256"},
		{"X25519", writePEM(t, pkcs8(t, x25519)), "cannot sign"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSigningKey(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("error %v, want one saying %q", err, tc.why)
			}
			if !strings.Contains(err.Error(), filepath.Base(tc.path)) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestNewVerifierRefuses(t *testing.T) {
	ec := newECKey(t)
	withPrivate := keySet(t, PublicKey{ID: "k", Key: ec.Public()})
	withPrivate.Keys[0].Key = ec
	noKid := keySet(t, PublicKey{ID: "k", Key: ec.Public()})
	noKid.Keys[0].KeyID = ""
	wrongAlg := keySet(t, PublicKey{ID: "k", Key: ec.Public()})
	wrongAlg.Keys[0].Algorithm = "RS256"
	encryption := keySet(t, PublicKey{ID: "k", Key: ec.Public()})
	encryption.Keys[0].Use = "enc"
	symmetric := keySet(t, PublicKey{ID: "k", Key: ec.Public()})
	symmetric.Keys[0].Key = []byte("0123456789abcdef0123456789abcdef")
	for _, tc := range []struct {
		name string
		cfg  VerifierConfig
		why  string
	}{
		{"nothing trusted", VerifierConfig{}, "nothing to trust"},
		{"private pinned key", VerifierConfig{Keys: withPrivate}, "not a public key"},
		{"symmetric pinned key", VerifierConfig{Keys: symmetric}, "not a public key"},
		{"pinned key without kid", VerifierConfig{Keys: noKid}, "kid"},
		{"pinned key with another alg", VerifierConfig{Keys: wrongAlg}, `alg "RS256"`},
		{"encryption key", VerifierConfig{Keys: encryption}, `use "enc"`},
		{"relative JWKS URL", VerifierConfig{JWKSURL: "jwks.json"}, "absolute"},
		{"file JWKS URL", VerifierConfig{JWKSURL: "file:///etc/jwks.json"}, "absolute http(s)"},
		{"negative interval", VerifierConfig{JWKSURL: "https://a.example/jwks.json", MinRefetchInterval: -1}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewVerifier(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %v, want one saying %q", err, tc.why)
			}
		})
	}
}
