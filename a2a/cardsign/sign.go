package cardsign

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"

	"github.com/a2amesh/a2amesh/a2a"
)

// minRSABits is the smallest RSA modulus signed with or trusted (RFC 7518
// section 3.3 requires 2048 bits for RS256).
const minRSABits = 2048

// Payload returns the bytes a signature of card covers: its JSON without
// "signatures" and without empty values, canonicalized (see the package
// documentation). Signing and verifying both use it.
func Payload(card *a2a.AgentCard) ([]byte, error) {
	if card == nil {
		return nil, errors.New("cardsign: nil card")
	}
	c := *card
	c.Signatures = nil
	data, err := a2a.AppendJSON(nil, &c)
	if err != nil {
		return nil, fmt.Errorf("cardsign: card %q: encode: %w", card.Name, err)
	}
	payload, err := payloadOf(data)
	if err != nil {
		return nil, fmt.Errorf("cardsign: card %q: %w", card.Name, err)
	}
	return payload, nil
}

// payloadOf canonicalizes a card's JSON text for signing.
func payloadOf(data []byte) ([]byte, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a card is a JSON object, not %s: %w", kindOf(v), ErrNotIJSON)
	}
	return cardPayload(obj), nil
}

// cardPayload is the payload of a card's JSON object, which it changes.
func cardPayload(obj map[string]any) []byte {
	delete(obj, "signatures")
	pruned := pruneEmpty(obj)
	if pruned == nil {
		return []byte("{}")
	}
	return appendCanonical(nil, pruned)
}

// pruneEmpty removes null, "", [] and {} from v, innermost first, and
// returns what is left of v, or nil when nothing is.
func pruneEmpty(v any) any {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
	case []any:
		out := x[:0]
		for _, e := range x {
			if e = pruneEmpty(e); e != nil {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case map[string]any:
		for name, e := range x {
			if e = pruneEmpty(e); e != nil {
				x[name] = e
			} else {
				delete(x, name)
			}
		}
		if len(x) == 0 {
			return nil
		}
	}
	return v
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// SignOptions are the optional parts of a signature. The zero value adds
// none.
type SignOptions struct {
	// JWKSURL, when set, is put in the protected header as "jku": the
	// absolute http(s) URL of the JWKS that publishes the key (see
	// PublicJWKS), for verifiers that look keys up there. Verifiers of
	// this package only trust the URL they are configured with.
	JWKSURL string
}

// Sign signs card with key, naming the key kid, and returns the signature
// to add to the card's signatures (SignCard adds it). The card's existing
// signatures are not signed. The key decides the algorithm: ES256 for an
// ECDSA P-256 key, RS256 for an RSA key of 2048 bits or more, EdDSA for an
// Ed25519 key; other keys are refused. The protected header holds alg,
// typ "JOSE", kid and, with opts.JWKSURL, jku.
func Sign(card *a2a.AgentCard, key crypto.Signer, kid string, opts SignOptions) (a2a.AgentCardSignature, error) {
	var none a2a.AgentCardSignature
	if card == nil {
		return none, errors.New("cardsign: sign: nil card")
	}
	if key == nil {
		return none, fmt.Errorf("cardsign: sign card %q: nil key", card.Name)
	}
	if kid == "" {
		return none, fmt.Errorf("cardsign: sign card %q: the key needs an id (kid), which verifiers find it by", card.Name)
	}
	alg, err := algorithmFor(key.Public())
	if err != nil {
		return none, fmt.Errorf("cardsign: sign card %q: %w", card.Name, err)
	}
	so := (&jose.SignerOptions{}).WithType("JOSE").WithHeader("kid", kid)
	if opts.JWKSURL != "" {
		if err := checkHTTPURL(opts.JWKSURL); err != nil {
			return none, fmt.Errorf("cardsign: sign card %q: JWKSURL: %w", card.Name, err)
		}
		so = so.WithHeader("jku", opts.JWKSURL)
	}
	payload, err := Payload(card)
	if err != nil {
		return none, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: cryptosigner.Opaque(key)}, so)
	if err != nil {
		return none, fmt.Errorf("cardsign: sign card %q: %w", card.Name, err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return none, fmt.Errorf("cardsign: sign card %q: %w", card.Name, err)
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return none, fmt.Errorf("cardsign: sign card %q: %w", card.Name, err)
	}
	// header..signature: the payload travels as the card itself.
	protected, rest, _ := strings.Cut(compact, ".")
	return a2a.AgentCardSignature{Protected: protected, Signature: strings.TrimPrefix(rest, ".")}, nil
}

// SignCard returns a copy of card with a signature by key added to its
// signatures (see Sign). The copy shares everything but its signatures
// with card, which is left as it was.
func SignCard(card *a2a.AgentCard, key crypto.Signer, kid string, opts SignOptions) (*a2a.AgentCard, error) {
	sig, err := Sign(card, key, kid, opts)
	if err != nil {
		return nil, err
	}
	signed := *card
	signed.Signatures = append(slices.Clip(card.Signatures), sig)
	return &signed, nil
}

// algorithmFor returns the one algorithm a public key signs with here.
func algorithmFor(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		if k == nil || k.Curve != elliptic.P256() {
			return "", errors.New("an ECDSA key must be on the P-256 curve (ES256)")
		}
		return jose.ES256, nil
	case *rsa.PublicKey:
		if k == nil || k.N == nil || k.N.BitLen() < minRSABits {
			return "", fmt.Errorf("an RSA key must have at least %d bits (RS256)", minRSABits)
		}
		return jose.RS256, nil
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return "", errors.New("malformed Ed25519 key")
		}
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("unsupported key type %T: want ECDSA P-256, RSA or Ed25519", pub)
}

// checkHTTPURL accepts absolute http and https URLs.
func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	return nil
}
