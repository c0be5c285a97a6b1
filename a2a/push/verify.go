package push

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	// go-jose's JSON matches names exactly, as JOSE requires.
	"github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Errors of Verifier: every refusal matches exactly one of them (test with
// errors.Is); a webhook answers each with 401 and acts on nothing.
var (
	// ErrUnsigned: the request has no SignatureHeader.
	ErrUnsigned = errors.New("push: notification is not signed")
	// ErrBadSignature: the signature is not a JWT signed with an allowed
	// algorithm by the key it names, or lacks a claim a notification has.
	ErrBadSignature = errors.New("push: notification signature is invalid")
	// ErrUnknownKey: the signature names a key (kid) that Verifier.Keys
	// does not hold, as after the agent rotated its keys; the receiver may
	// refresh its copy of the agent's key set and verify again.
	ErrUnknownKey = errors.New("push: notification signed with an unknown key")
	// ErrExpired: the signature's validity (iat to exp, give or take
	// Verifier.Leeway) does not include now.
	ErrExpired = errors.New("push: notification signature expired or not yet valid")
	// ErrAudience: the signature was made for another webhook URL.
	ErrAudience = errors.New("push: notification signed for another webhook")
	// ErrIssuer: the signature was made by an issuer Verifier.Issuers
	// does not list.
	ErrIssuer = errors.New("push: notification signed by an unexpected issuer")
	// ErrBodyMismatch: the body is not the one that was signed.
	ErrBodyMismatch = errors.New("push: notification body does not match its signature")
)

// allowedAlgorithms are the signature algorithms a Verifier accepts: the
// asymmetric ones. "none" is no signature, and with an HMAC algorithm the
// verifying key is a secret the agent would share with every receiver, or
// worse, a public key's bytes used as one.
var allowedAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

const defaultLeeway = time.Minute

// Claims are what a verified notification's signature vouches for.
type Claims struct {
	// Issuer is the agent that signed (iss).
	Issuer string
	// Audience is the webhook URLs the signature was made for (aud).
	Audience []string
	// IssuedAt and Expiry bound the signature's validity (iat, exp).
	IssuedAt, Expiry time.Time
	// ID identifies the notification (jti); every attempt at one carries
	// the same ID. A receiver that remembers the IDs it processed until
	// their Expiry (plus Leeway) recognizes a retry or a replay of one:
	// it answers 2xx and does not act again.
	ID string
	// TaskID is the task the notification is about (taskId); it matches
	// the task in the body, whose hash the signature covers.
	TaskID string
}

// Verifier checks, on a webhook, that a notification comes from the agent
// and is the one it sent: its signature (see Signing) is made by one of
// the agent's keys with an asymmetric algorithm, for this webhook's URL,
// by an expected issuer, is within its validity, and covers the exact body
// received. Keys, Audience and Issuers are pinned: nothing in a request
// chooses them, so a forger cannot point the receiver at its own keys (the
// jku header is not followed).
//
// Keys and Audience are required; a Verifier is safe for concurrent use
// as long as its fields are not changed.
type Verifier struct {
	// Keys are the agent's public keys, as it publishes them (its JWKS,
	// fetched by the receiver from a URL it trusts). A key is chosen by
	// the signature's kid; a key whose alg or use says otherwise is not
	// used.
	Keys *jose.JSONWebKeySet
	// Audience lists this webhook's URLs, exactly as registered in the
	// push notification configs; a signature must be made for one of
	// them.
	Audience []string
	// Issuers, when set, lists the issuers (iss) accepted; empty accepts
	// any whose key is in Keys.
	Issuers []string
	// Leeway is the clock skew tolerated between the agent and the
	// receiver when checking iat and exp. Zero means one minute.
	Leeway time.Duration
}

// VerifyRequest verifies the notification r carries, whose body the
// caller has read into body (exactly as received). It returns the
// signature's claims, or an error matching one of the Err variables above
// (or, when the Verifier lacks Keys or Audience, none of them).
func (v *Verifier) VerifyRequest(r *http.Request, body []byte) (Claims, error) {
	return v.Verify(r.Header.Get(SignatureHeader), body)
}

// Verify is VerifyRequest for a receiver on another HTTP stack: signature
// is the value of SignatureHeader, "" when it is absent.
func (v *Verifier) Verify(signature string, body []byte) (Claims, error) {
	if v.Keys == nil || len(v.Keys.Keys) == 0 {
		return Claims{}, errors.New("push: Verifier has no Keys: set the agent's published key set")
	}
	if len(v.Audience) == 0 {
		return Claims{}, errors.New("push: Verifier has no Audience: set the webhook's URL as registered")
	}
	if signature == "" {
		return Claims{}, ErrUnsigned
	}
	tok, err := jwt.ParseSigned(signature, allowedAlgorithms)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %v", ErrBadSignature, err)
	}
	// A compact serialization has exactly one signature.
	h := tok.Headers[0]
	if h.KeyID == "" {
		return Claims{}, fmt.Errorf("%w: no key ID (kid) in its header", ErrBadSignature)
	}
	var c notaryClaims
	if err := v.verifySignature(tok, h, &c); err != nil {
		return Claims{}, err
	}
	if c.Issuer == "" || len(c.Audience) == 0 || c.IssuedAt == nil || c.Expiry == nil || c.ID == "" || c.BodySHA256 == "" {
		return Claims{}, fmt.Errorf("%w: it lacks one of the claims iss, aud, iat, exp, jti and request_body_sha256", ErrBadSignature)
	}
	if len(v.Issuers) > 0 && !slices.Contains(v.Issuers, c.Issuer) {
		return Claims{}, fmt.Errorf("%w: %q", ErrIssuer, c.Issuer)
	}
	if !slices.ContainsFunc(v.Audience, c.Audience.Contains) {
		return Claims{}, fmt.Errorf("%w: signed for %q", ErrAudience, []string(c.Audience))
	}
	now, leeway := time.Now(), v.Leeway
	if leeway <= 0 {
		leeway = defaultLeeway
	}
	iat, exp := c.IssuedAt.Time(), c.Expiry.Time()
	if now.Add(leeway).Before(iat) || now.Add(-leeway).After(exp) {
		return Claims{}, fmt.Errorf("%w: valid from %s to %s, now is %s", ErrExpired,
			iat.UTC().Format(time.RFC3339), exp.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if subtle.ConstantTimeCompare([]byte(bodyDigest(body)), []byte(c.BodySHA256)) != 1 {
		return Claims{}, ErrBodyMismatch
	}
	return Claims{
		Issuer: c.Issuer, Audience: c.Audience, IssuedAt: iat, Expiry: exp, ID: c.ID, TaskID: c.TaskID,
	}, nil
}

// verifySignature checks tok's signature with the key its header names
// and decodes its claims into c.
func (v *Verifier) verifySignature(tok *jwt.JSONWebToken, h jose.Header, c *notaryClaims) error {
	keys := v.Keys.Key(h.KeyID)
	if len(keys) == 0 {
		return fmt.Errorf("%w: %q", ErrUnknownKey, h.KeyID)
	}
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != h.Algorithm || k.Use != "" && k.Use != "sig" {
			continue
		}
		if !k.IsPublic() {
			// A private key in the set: verify with its public half. A
			// symmetric key has none, and verifies nothing.
			k = k.Public()
		}
		var payload json.RawMessage
		if err := tok.Claims(k.Key, &payload); err != nil {
			continue
		}
		if err := json.Unmarshal(payload, c); err != nil {
			return fmt.Errorf("%w: its claims do not decode: %v", ErrBadSignature, err)
		}
		return nil
	}
	return fmt.Errorf("%w: it does not verify with key %q and algorithm %s", ErrBadSignature, h.KeyID, h.Algorithm)
}
