package cardsign

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/jwks"
)

// Errors of verification; test with errors.Is. When a card has several
// signatures and none verifies, the error wraps each one's.
var (
	// ErrUnsigned means the card has no signatures.
	ErrUnsigned = errors.New("card is not signed")
	// ErrBadSignature means a signature does not verify: the card is not
	// what was signed, the signature was made by another key, the JWS is
	// malformed, or its algorithm is not allowed.
	ErrBadSignature = errors.New("bad signature")
	// ErrUnknownKey means no trusted key has the signature's key id: it is
	// neither pinned nor in the JWKS, or the JWKS could not be fetched.
	ErrUnknownKey = errors.New("unknown key")
)

// Defaults of VerifierConfig.
const (
	DefaultMinRefetchInterval = time.Minute
	DefaultMaxAge             = time.Hour
)

// VerifierConfig says which keys a Verifier trusts. At least one of Keys
// and JWKSURL must be set.
type VerifierConfig struct {
	// Keys are trusted public keys, found by key id: EC P-256, RSA of 2048
	// bits or more, or Ed25519, each with a kid, with "use" empty or
	// "sig" and "alg" empty or the one its type signs with. A pinned key
	// is used before a fetched key of the same id.
	Keys *jose.JSONWebKeySet
	// JWKSURL is the absolute http(s) URL of a JWKS whose keys are
	// trusted like pinned ones: an agent's /.well-known/jwks.json, say.
	// Use https unless the network between is trusted. A set that
	// publishes a private key is refused whole.
	JWKSURL string
	// HTTPClient fetches JWKSURL. Nil means a client whose requests time
	// out after 10 seconds; a fetch takes 10 seconds at most whatever the
	// client's timeout. A fetch runs to its end though the context of the
	// Verify that started it ends first, so that the verifications
	// waiting for it get its keys; a waiting Verify gives up with its own
	// context.
	HTTPClient *http.Client
	// MinRefetchInterval is the least time between two fetches of
	// JWKSURL: a kid not in the fetched set makes the verifier fetch it
	// again (a key rotated in), but not sooner, so that cards naming
	// made-up kids cannot make it hammer the URL. Zero means
	// DefaultMinRefetchInterval.
	MinRefetchInterval time.Duration
	// MaxAge is how long fetched keys are trusted before the set is
	// fetched again, so that a key removed from it (revoked) stops being
	// trusted; if the fetch then fails, no fetched key is trusted until
	// one succeeds. Zero means DefaultMaxAge.
	MaxAge time.Duration
}

// A Verifier checks agent cards' signatures against the keys its
// configuration trusts. It is safe for concurrent use.
type Verifier struct {
	pinned []jwks.Key
	remote *jwks.Cache // nil without a JWKS URL
}

// NewVerifier returns a Verifier trusting what cfg names. It checks the
// configuration (each pinned key, the URL) and fetches nothing yet.
func NewVerifier(cfg VerifierConfig) (*Verifier, error) {
	return newVerifier(cfg, time.Now)
}

// newVerifier is NewVerifier with the JWKS's clock, which tests move.
func newVerifier(cfg VerifierConfig, now func() time.Time) (*Verifier, error) {
	hasKeys := cfg.Keys != nil && len(cfg.Keys.Keys) > 0
	if !hasKeys && cfg.JWKSURL == "" {
		return nil, errors.New("cardsign: verifier config: no Keys and no JWKSURL: nothing to trust")
	}
	if cfg.MinRefetchInterval < 0 || cfg.MaxAge < 0 {
		return nil, errors.New("cardsign: verifier config: MinRefetchInterval and MaxAge cannot be negative")
	}
	v := &Verifier{}
	if hasKeys {
		for i, k := range cfg.Keys.Keys {
			if _, err := trustable(k); err != nil {
				return nil, fmt.Errorf("cardsign: verifier config: Keys[%d] (kid %q): %w", i, k.KeyID, err)
			}
			key, _ := jwks.SigningKey(k) // trustable: it is one
			v.pinned = append(v.pinned, key)
		}
	}
	if cfg.JWKSURL != "" {
		// A card is trusted for what it says about an agent, and a key
		// the agent revoked must stop vouching for cards however long its
		// JWKS cannot be fetched: the fetched keys expire after MaxAge
		// (Expire), availability giving way to revocation. An agent that
		// cannot be verified is not imported, and is retried later.
		remote, err := jwks.New(jwks.Config{
			URL:         cfg.JWKSURL,
			Client:      cfg.HTTPClient,
			Refresh:     or(cfg.MaxAge, DefaultMaxAge),
			MinInterval: or(cfg.MinRefetchInterval, DefaultMinRefetchInterval),
			Expire:      true,
			Now:         now,
		})
		if err != nil {
			return nil, fmt.Errorf("cardsign: verifier config: JWKSURL: %w", err)
		}
		v.remote = remote
	}
	return v, nil
}

func or(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Verify returns nil when at least one of card's signatures verifies with
// a trusted key named by its kid. Otherwise its error wraps ErrUnsigned,
// or for each signature ErrBadSignature or ErrUnknownKey, and names the
// card and the reasons (never key material). The card is checked as it
// is, however its JSON was ordered or spaced when it was read: see the
// package documentation for what a signature covers.
func (v *Verifier) Verify(ctx context.Context, card *a2a.AgentCard) error {
	if card == nil {
		return fmt.Errorf("cardsign: nil card: %w", ErrUnsigned)
	}
	if len(card.Signatures) == 0 {
		return fmt.Errorf("cardsign: card %q: %w", card.Name, ErrUnsigned)
	}
	payload, err := Payload(card)
	if err != nil {
		return fmt.Errorf("%w: %w", err, ErrBadSignature)
	}
	return v.verify(ctx, card.Name, payload, card.Signatures)
}

// VerifyJSON is Verify for a card's JSON as it was received, for cards
// whose content the a2a.AgentCard type cannot hold exactly, such as a
// peer's card with an optional flag explicitly false: the signatures must
// then cover every member of the JSON, including members a2a.AgentCard
// does not model. It does not decode the card for the caller.
func (v *Verifier) VerifyJSON(ctx context.Context, data []byte) error {
	doc, err := parseJSON(data)
	if err != nil {
		return fmt.Errorf("cardsign: card: %w: %w", err, ErrBadSignature)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("cardsign: card: a card is a JSON object, not %s: %w", kindOf(doc), ErrBadSignature)
	}
	name, _ := obj["name"].(string)
	var sigs []a2a.AgentCardSignature
	switch raw := obj["signatures"].(type) {
	case nil:
	case []any:
		for i, e := range raw {
			m, _ := e.(map[string]any)
			protected, ok1 := m["protected"].(string)
			signature, ok2 := m["signature"].(string)
			if !ok1 || !ok2 {
				return fmt.Errorf("cardsign: card %q: signatures[%d] lacks protected or signature strings: %w", name, i, ErrBadSignature)
			}
			sigs = append(sigs, a2a.AgentCardSignature{Protected: protected, Signature: signature})
		}
	default:
		return fmt.Errorf("cardsign: card %q: signatures is %s, not an array: %w", name, kindOf(raw), ErrBadSignature)
	}
	if len(sigs) == 0 {
		return fmt.Errorf("cardsign: card %q: %w", name, ErrUnsigned)
	}
	return v.verify(ctx, name, cardPayload(obj), sigs)
}

func (v *Verifier) verify(ctx context.Context, name string, payload []byte, sigs []a2a.AgentCardSignature) error {
	var errs signatureErrors
	for i, sig := range sigs {
		err := v.verifyOne(ctx, payload, sig)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("signature %d: %w", i, err))
		if ctx.Err() != nil {
			break
		}
	}
	return fmt.Errorf("cardsign: card %q: %w", name, errs)
}

// signatureErrors are the reasons each of a card's signatures failed.
type signatureErrors []error

func (e signatureErrors) Error() string {
	var b strings.Builder
	if len(e) > 1 {
		b.WriteString("no signature verifies: ")
	}
	for i, err := range e {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e signatureErrors) Unwrap() []error { return e }

// verifyOne verifies one signature over payload. The algorithm and key id
// come from the protected header alone: an unprotected header is not
// integrity-protected, so nothing in it is used.
func (v *Verifier) verifyOne(ctx context.Context, payload []byte, sig a2a.AgentCardSignature) error {
	// One spelling per value: base64url decoders ignore line breaks and
	// stray low bits, which would let one signature pass in many forms.
	if !isBase64URL(sig.Protected) || !isBase64URL(sig.Signature) {
		return fmt.Errorf("%w: protected header or signature is not unpadded base64url", ErrBadSignature)
	}
	alg, kid, err := readProtected(sig.Protected)
	if err != nil {
		return err
	}
	// Parsed before any key is looked up, so that a malformed signature
	// naming a new kid does not make the verifier fetch the JWKS.
	jws, err := jose.ParseDetached(sig.Protected+".."+sig.Signature, payload, allowedAlgorithms())
	if err != nil {
		return fmt.Errorf("%w: malformed JWS: %v", ErrBadSignature, err)
	}
	keys, err := v.keysFor(ctx, kid)
	if err != nil {
		return err
	}
	fits := 0
	for _, k := range keys {
		// A key verifies the one algorithm cards are signed with by its
		// type, and the one its JWK names if it names one.
		if keyAlg, err := algorithmFor(k.Public); err != nil || keyAlg != alg || !k.Fits(string(alg)) {
			continue
		}
		fits++
		if jws.DetachedVerify(payload, k.Public) == nil {
			return nil
		}
	}
	if fits == 0 {
		return fmt.Errorf("%w: alg %s does not fit the key %q", ErrBadSignature, alg, kid)
	}
	return fmt.Errorf("%w: does not verify with the key %q", ErrBadSignature, kid)
}

func allowedAlgorithms() []jose.SignatureAlgorithm {
	return []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA}
}

// isBase64URL reports whether s is the one unpadded base64url spelling of
// some bytes.
func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	_, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return err == nil
}

// readProtected decodes a protected header and returns its algorithm, if
// allowed, and its key id.
func readProtected(protected string) (jose.SignatureAlgorithm, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(protected)
	if err != nil {
		return "", "", fmt.Errorf("%w: protected header is not unpadded base64url", ErrBadSignature)
	}
	doc, err := parseJSON(raw)
	if err != nil {
		return "", "", fmt.Errorf("%w: protected header: %v", ErrBadSignature, err)
	}
	h, ok := doc.(map[string]any)
	if !ok {
		return "", "", fmt.Errorf("%w: protected header is %s, not an object", ErrBadSignature, kindOf(doc))
	}
	alg, _ := h["alg"].(string)
	allowed := false
	for _, a := range allowedAlgorithms() {
		allowed = allowed || string(a) == alg
	}
	if !allowed {
		return "", "", fmt.Errorf("%w: alg %q is not allowed (ES256, RS256 and EdDSA are)", ErrBadSignature, alg)
	}
	kid, _ := h["kid"].(string)
	if kid == "" {
		return "", "", fmt.Errorf("%w: protected header has no kid", ErrBadSignature)
	}
	// Extensions change what is signed (b64) or must be understood
	// (crit); cards use neither.
	for _, name := range []string{"crit", "b64"} {
		if _, ok := h[name]; ok {
			return "", "", fmt.Errorf("%w: protected header has %q, which card signatures do not use", ErrBadSignature, name)
		}
	}
	return jose.SignatureAlgorithm(alg), kid, nil
}

// trustable returns the algorithm a key verifies, or why it cannot be
// trusted to verify card signatures.
func trustable(k jose.JSONWebKey) (jose.SignatureAlgorithm, error) {
	if k.KeyID == "" {
		return "", errors.New("a key needs a kid")
	}
	if !k.IsPublic() {
		return "", errors.New("not a public key (a verifier needs no secret)")
	}
	if k.Use != "" && k.Use != "sig" {
		return "", fmt.Errorf("use %q is not \"sig\"", k.Use)
	}
	alg, err := algorithmFor(k.Key)
	if err != nil {
		return "", err
	}
	if k.Algorithm != "" && k.Algorithm != string(alg) {
		return "", fmt.Errorf("alg %q does not fit the key, which signs %s", k.Algorithm, alg)
	}
	return alg, nil
}

// keysFor returns the trusted keys with id kid: the pinned ones, or else
// those of the JWKS.
func (v *Verifier) keysFor(ctx context.Context, kid string) ([]jwks.Key, error) {
	if keys := jwks.Named(v.pinned, kid); len(keys) > 0 {
		return keys, nil
	}
	if v.remote == nil {
		return nil, fmt.Errorf("%w: kid %q is not pinned", ErrUnknownKey, kid)
	}
	keys, err := v.remote.Lookup(ctx, kid)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnknownKey, err)
	}
	return keys, nil
}
