// Package auth decides who calls an A2A server and what they may do: the
// Principal a request's credentials identify, the Authenticators that
// verify those credentials (API keys, bearer JWTs checked against a JWKS,
// mutual TLS), and the Gate every binding passes a request through before
// the server acts on it, which authenticates, applies the per-method Policy
// and rate limits, and writes each decision to an audit log.
//
// A Gate is wire-agnostic: the JSON-RPC, HTTP+JSON and gRPC bindings hand
// it the request's Credentials (its headers or metadata and its verified
// client certificates) and answer its refusals the way their wire says
// (HTTP 401 with WWW-Authenticate and 403; gRPC UNAUTHENTICATED and
// PERMISSION_DENIED). Tasks then belong to the principal who created them
// (see Principal.Owner); package server enforces that on every operation.
package auth

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/url"

	"github.com/a2amesh/a2amesh/a2a"
)

// Principal is an authenticated caller.
type Principal struct {
	// Scheme is the name of the card's security scheme whose Authenticator
	// admitted the caller.
	Scheme string
	// Issuer names who vouches for Subject: a JWT's iss, "apikey" for a
	// key, the issuing CA's subject for a client certificate.
	Issuer string
	// Subject identifies the caller within Issuer: a JWT's sub, a key's
	// name, a certificate's URI SAN or common name.
	Subject string
	// Tenant is the tenant the credential is bound to, "" when it names
	// none (and then the request's tenant applies).
	Tenant string
	// Scopes are the OAuth scopes or roles granted to the caller.
	Scopes []string
	// Claims are the credential's other claims, for Policy rules.
	Claims map[string]any
	// Token is the bearer credential that authenticated the caller, kept
	// to forward or exchange when calling other agents on the caller's
	// behalf (package a2a/credentials); never logged or encoded. It is ""
	// for credentials that are not bearer tokens (API keys, certificates).
	Token string `json:"-"`
}

// HasScope reports whether the principal was granted scope.
func (p *Principal) HasScope(scope string) bool {
	for _, s := range p.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// String names the principal for logs and errors: its scheme, ID and
// tenant, never its Token (which %v of the struct would print).
func (p *Principal) String() string {
	if p == nil {
		return "anonymous"
	}
	s := p.Scheme + ":" + p.ID()
	if p.Tenant != "" {
		s += " in tenant " + p.Tenant
	}
	return s
}

// ID is the principal's stable identity across requests: issuer and
// subject, escaped so that no two principals share one. The anonymous
// caller (a nil Principal) has the ID "".
func (p *Principal) ID() string {
	if p == nil {
		return ""
	}
	return url.PathEscape(p.Issuer) + "|" + url.PathEscape(p.Subject)
}

// Owner is the key a task created by p in tenant belongs to: only
// requests whose Owner is the same may read, stream, continue or cancel
// it. A credential bound to a tenant owns in that tenant whatever the
// request names (the Gate refuses a request naming another).
func (p *Principal) Owner(tenant string) string {
	if p != nil && p.Tenant != "" {
		tenant = p.Tenant
	}
	return url.PathEscape(tenant) + "/" + p.ID()
}

type principalKey struct{}

// NewContext returns a context carrying p.
func NewContext(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries, or nil for an anonymous
// caller.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Credentials are what a request presents to prove who sends it.
type Credentials struct {
	// Header returns the first value of a request header (HTTP) or
	// metadata key (gRPC), or "" without one. Names are matched without
	// regard to case.
	Header func(name string) string
	// PeerCertificates are the client certificates the TLS handshake
	// verified, leaf first; nil without mutual TLS.
	PeerCertificates []*x509.Certificate
	// Remote is the client's network address, for the audit log; nil
	// when unknown. An address, not its string, so that a request whose
	// decision is not logged does not format it.
	Remote net.Addr
}

func (c Credentials) header(name string) string {
	if c.Header == nil {
		return ""
	}
	return c.Header(name)
}

// An Authenticator verifies one kind of credential.
type Authenticator interface {
	// Authenticate returns the principal creds identify. It returns an
	// error wrapping ErrNoCredentials when creds carry no credential of
	// its kind, so that the Gate may try the next Authenticator, and one
	// wrapping ErrInvalidCredentials when they carry one that does not
	// verify; its message says why without repeating the credential.
	Authenticate(ctx context.Context, creds Credentials) (*Principal, error)
	// Challenge is the WWW-Authenticate value that tells a client how to
	// authenticate after err (from Authenticate, or ErrNoCredentials), or
	// "" when the scheme has no HTTP challenge.
	Challenge(err error) string
}

// A Describer is an Authenticator that says how the agent card declares
// it: the card's securitySchemes entry (name and scheme). A Gate's
// Describe lists every Describer's.
type Describer interface {
	SecurityScheme() (name string, scheme a2a.SecurityScheme)
}

// Errors of authentication and authorization; test with errors.Is.
var (
	// ErrNoCredentials means the request presents no credential an
	// Authenticator checks.
	ErrNoCredentials = errors.New("auth: no credentials")
	// ErrInvalidCredentials means a credential was presented and did not
	// verify: unknown, expired, not yet valid, for another audience,
	// wrongly signed.
	ErrInvalidCredentials = errors.New("auth: invalid credentials")
	// ErrForbidden means the caller is known but may not do what it asks.
	ErrForbidden = errors.New("auth: forbidden")
	// ErrRateLimited means the caller sent more requests than its limit
	// allows for now.
	ErrRateLimited = errors.New("auth: rate limited")
)
