package push

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	// go-jose's JSON matches names exactly, as JOSE requires.
	"github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2amesh/a2amesh/a2a/internal/jwks"
)

// Errors of Verifier: every refusal matches exactly one of them (test with
// errors.Is); a webhook answers each with 401 and acts on nothing. An
// error matching none of them is the receiver's fault, not the
// notification's: a misconfigured Verifier, or an agent's JWKS that gave
// no keys; a webhook answers it with 503, which the agent retries.
var (
	// ErrUnsigned: the request has no SignatureHeader.
	ErrUnsigned = errors.New("push: notification is not signed")
	// ErrBadSignature: the signature is not a JWT signed with an allowed
	// algorithm by the key it names, or lacks a claim a notification has.
	ErrBadSignature = errors.New("push: notification signature is invalid")
	// ErrUnknownKey: the signature names a key (kid) that neither
	// Verifier.Keys nor the JWKS at Verifier.JWKSURL, fetched again for
	// it, holds. With pinned Keys only, the agent may have rotated its
	// keys: the receiver may refresh its copy of the agent's key set and
	// verify again.
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
// received. Keys, JWKSURL, Audience and Issuers are the receiver's:
// nothing in a request chooses them, so a forger cannot point the
// receiver at its own keys (the jku header is not followed).
//
// Keys or JWKSURL, and Audience, are required; a Verifier is safe for
// concurrent use as long as its fields are not changed once it is used.
type Verifier struct {
	// Keys are pinned public keys of the agent, as it publishes them (its
	// JWKS, fetched by the receiver from a URL it trusts). A key is chosen
	// by the signature's kid, among Keys first; a key whose alg or use
	// says otherwise is not used.
	Keys *jose.JSONWebKeySet
	// JWKSURL is the agent's JWKS URL
	// (https://agent.example.com/.well-known/jwks.json, say), whose keys
	// the Verifier fetches with HTTPClient and caches: at
	// the first notification, then again for a kid the keys lack (at most
	// every 30 seconds), so that the agent's rotations need no restart,
	// and when they are 10 minutes old. Keys older than that are not
	// trusted if they cannot be fetched again: a key the agent removed
	// (revoked) stops verifying within 10 minutes whatever keeps the JWKS
	// from being fetched, and the notifications meanwhile fail with an
	// error matching no Err variable (answer 503: the agent retries). A
	// set that publishes a private key is refused.
	JWKSURL string
	// HTTPClient fetches JWKSURL; nil means a client with a 10 s timeout.
	// A fetch takes 10 s at most whatever the client's timeout.
	HTTPClient *http.Client
	// Audience lists this webhook's URLs, exactly as registered in the
	// push notification configs; a signature must be made for one of
	// them.
	Audience []string
	// Issuers, when set, lists the issuers (iss) accepted; empty accepts
	// any whose key is trusted.
	Issuers []string
	// Leeway is the clock skew tolerated between the agent and the
	// receiver when checking iat and exp. Zero means one minute.
	Leeway time.Duration

	// now is the JWKS cache's clock: time.Now when nil. Tests move it.
	now func() time.Time

	once      sync.Once
	remote    *jwks.Cache // of JWKSURL, nil without it
	remoteErr error       // why JWKSURL cannot be used
}

// VerifyRequest verifies the notification r carries, whose body the
// caller has read into body (exactly as received), within r's context.
// It returns the signature's claims, or an error matching one of the Err
// variables above (or none of them: see there).
func (v *Verifier) VerifyRequest(r *http.Request, body []byte) (Claims, error) {
	return v.Verify(r.Context(), r.Header.Get(SignatureHeader), body)
}

// Verify is VerifyRequest for a receiver on another HTTP stack: signature
// is the value of SignatureHeader, "" when it is absent. ctx bounds the
// wait for the agent's JWKS, when JWKSURL is set.
func (v *Verifier) Verify(ctx context.Context, signature string, body []byte) (Claims, error) {
	if (v.Keys == nil || len(v.Keys.Keys) == 0) && v.JWKSURL == "" {
		return Claims{}, errors.New("push: Verifier has no Keys and no JWKSURL: set the agent's published key set or its URL")
	}
	v.once.Do(v.init)
	if v.remoteErr != nil {
		return Claims{}, v.remoteErr
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
	if err := v.verifySignature(ctx, tok, h, &c); err != nil {
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

func (v *Verifier) init() {
	if v.JWKSURL == "" {
		return
	}
	// Push prefers revocation to availability (Expire): a notification
	// that cannot be verified now is retried by the agent, while one
	// accepted with a revoked key may be a forgery acted on.
	v.remote, v.remoteErr = jwks.New(jwks.Config{URL: v.JWKSURL, Client: v.HTTPClient, Expire: true, Now: v.now})
	if v.remoteErr != nil {
		v.remoteErr = fmt.Errorf("push: Verifier.JWKSURL: %w", v.remoteErr)
	}
}

// verifySignature checks tok's signature with the key its header names
// and decodes its claims into c.
func (v *Verifier) verifySignature(ctx context.Context, tok *jwt.JSONWebToken, h jose.Header, c *notaryClaims) error {
	keys, err := v.keysFor(ctx, h.KeyID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if !k.Fits(h.Algorithm) {
			continue
		}
		var payload json.RawMessage
		if err := tok.Claims(k.Public, &payload); err != nil {
			continue
		}
		if err := json.Unmarshal(payload, c); err != nil {
			return fmt.Errorf("%w: its claims do not decode: %v", ErrBadSignature, err)
		}
		return nil
	}
	return fmt.Errorf("%w: it does not verify with key %q and algorithm %s", ErrBadSignature, h.KeyID, h.Algorithm)
}

// keysFor returns the keys with id kid: the pinned ones, or else those of
// JWKSURL. A pinned private key verifies by its public half; a symmetric
// key, or one for encryption, verifies nothing.
func (v *Verifier) keysFor(ctx context.Context, kid string) ([]jwks.Key, error) {
	if v.Keys != nil {
		if pinned := v.Keys.Key(kid); len(pinned) > 0 {
			keys := make([]jwks.Key, 0, len(pinned))
			for _, k := range pinned {
				if key, ok := jwks.SigningKey(k); ok {
					keys = append(keys, key)
				}
			}
			return keys, nil
		}
	}
	if v.remote == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownKey, kid)
	}
	keys, err := v.remote.Lookup(ctx, kid)
	switch {
	case jwks.Unavailable(err):
		return nil, fmt.Errorf("push: no key to verify the notification with: %w", err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrUnknownKey, err)
	}
	return keys, nil
}
