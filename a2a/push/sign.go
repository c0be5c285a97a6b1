package push

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"
)

// SignatureHeader is the request header that carries a notification's
// signature: a JWT in JWS compact serialization. It is not Authorization,
// which the specification gives to the config's own credentials, so a
// webhook gets both: the credentials its client chose, and the agent's
// proof that the agent sent this body.
const SignatureHeader = "A2A-Notification-Signature"

// signatureLifetime is how long after signing a signature is valid: longer
// than one attempt and the receivers' clock skew, short enough that a
// captured request cannot be replayed for long. Each attempt is signed
// anew, so a retry after a long backoff does not carry a stale signature.
const signatureLifetime = 5 * time.Minute

// Signing is how a Sender signs notifications: with the agent's private
// key, whose public half the agent publishes in a JSON Web Key Set (JWKS)
// under KeyID, so that a webhook can check that a notification comes from
// the agent and that its body is the one the agent sent (see Verifier).
//
// Every attempt carries, in SignatureHeader, a JWT whose protected header
// names the algorithm (alg), the key (kid), "JWT" (typ) and, when JWKSURL
// is set, the key set (jku), and whose claims are:
//
//   - iss: Issuer, the agent;
//   - aud: the webhook URL, as registered, so a signature sent to one
//     webhook is refused by another;
//   - iat and exp: when the attempt was signed, and 5 minutes later;
//   - jti: a random ID of the notification, the same on every attempt at
//     it, so a receiver that keeps the IDs it has processed recognizes a
//     retry whose earlier attempt it handled but whose answer was lost,
//     and a replay, and answers both 2xx without acting twice;
//   - taskId: the task the notification is about;
//   - request_body_sha256: the SHA-256 of the exact body bytes, in
//     lowercase hex, so the signature covers the body (the name and
//     encoding of the A2A project's sample push-notification code).
type Signing struct {
	// Key signs. Its public key decides the algorithm: RS256 for RSA (at
	// least 2048 bits), ES256, ES384 or ES512 for ECDSA on P-256, P-384 or
	// P-521, EdDSA for Ed25519. Any crypto.Signer serves, a key held by a
	// KMS or an HSM included.
	Key crypto.Signer
	// KeyID is the key's ID (kid) in the agent's published key set.
	KeyID string
	// Issuer identifies the agent (iss), e.g. the URL of its agent card.
	Issuer string
	// JWKSURL, when set, is the URL of the key set, sent as the jku header
	// for a receiver to learn where the keys are. Receivers do not fetch
	// keys from a URL a request names: they configure it themselves (see
	// Verifier.JWKSURL).
	JWKSURL string
}

// notaryClaims are the claims of a notification's signature.
type notaryClaims struct {
	Issuer     string           `json:"iss"`
	Audience   jwt.Audience     `json:"aud"`
	IssuedAt   *jwt.NumericDate `json:"iat"`
	Expiry     *jwt.NumericDate `json:"exp"`
	ID         string           `json:"jti"`
	TaskID     string           `json:"taskId"`
	BodySHA256 string           `json:"request_body_sha256"`
}

// bodyDigest is the request_body_sha256 claim of body.
func bodyDigest(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// algorithm is the signature algorithm for a public key.
func algorithm(pub crypto.PublicKey) (jose.SignatureAlgorithm, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", fmt.Errorf("an RSA key of %d bits is too weak (want at least 2048)", k.N.BitLen())
		}
		return jose.RS256, nil
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			return jose.ES256, nil
		case elliptic.P384():
			return jose.ES384, nil
		case elliptic.P521():
			return jose.ES512, nil
		}
		return "", fmt.Errorf("ECDSA on %s is not a JOSE curve (want P-256, P-384 or P-521)", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return jose.EdDSA, nil
	}
	return "", fmt.Errorf("a %T key is not supported (want RSA, ECDSA or Ed25519)", pub)
}

// notary signs the notifications of one Sender.
type notary struct {
	signer jose.Signer
	issuer string
}

func newNotary(s *Signing) (*notary, error) {
	switch {
	case s.Key == nil:
		return nil, errors.New("push: Signing has no Key")
	case s.KeyID == "":
		return nil, errors.New("push: Signing has no KeyID: receivers pick the key by it")
	case s.Issuer == "":
		return nil, errors.New("push: Signing has no Issuer")
	}
	alg, err := algorithm(s.Key.Public())
	if err != nil {
		return nil, fmt.Errorf("push: Signing.Key: %w", err)
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if s.JWKSURL != "" {
		opts = opts.WithHeader("jku", s.JWKSURL)
	}
	key := jose.JSONWebKey{Key: cryptosigner.Opaque(s.Key), KeyID: s.KeyID}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		return nil, fmt.Errorf("push: Signing: %w", err)
	}
	return &notary{signer: signer, issuer: s.Issuer}, nil
}

// notice is what every attempt at one notification signs.
type notice struct {
	audience, id, taskID, digest string
}

func newNotice(c Config, body []byte) notice {
	return notice{audience: c.URL, id: uuid.NewString(), taskID: c.TaskID, digest: bodyDigest(body)}
}

// sign returns the signature of one attempt at n.
func (no *notary) sign(n notice, now time.Time) (string, error) {
	tok, err := jwt.Signed(no.signer).Claims(notaryClaims{
		Issuer:     no.issuer,
		Audience:   jwt.Audience{n.audience},
		IssuedAt:   jwt.NewNumericDate(now),
		Expiry:     jwt.NewNumericDate(now.Add(signatureLifetime)),
		ID:         n.id,
		TaskID:     n.taskID,
		BodySHA256: n.digest,
	}).Serialize()
	if err != nil {
		return "", fmt.Errorf("cannot sign the notification: %w", err)
	}
	return tok, nil
}
