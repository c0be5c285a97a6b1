package auth

import (
	"context"
	"crypto/x509"
	"fmt"

	"github.com/a2amesh/a2amesh/a2a"
)

// MTLSConfig configures an MTLS authenticator.
type MTLSConfig struct {
	// Scheme is the card's security-scheme name for client certificates.
	Scheme string
	// TenantFromOU takes the tenant from the certificate subject's first
	// organizational unit; otherwise certificates bind no tenant.
	TenantFromOU bool
}

// MTLS authenticates requests by the client certificate the TLS handshake
// verified: the server's tls.Config must verify it (ClientAuth
// VerifyClientCertIfGiven or RequireAndVerifyClientCert, with ClientCAs);
// this only names the principal. The subject is the certificate's first
// URI SAN (a SPIFFE ID, say), else its first DNS SAN, else its common
// name; the issuer is the issuing CA's subject.
type MTLS struct{ cfg MTLSConfig }

// NewMTLS returns the authenticator of cfg.
func NewMTLS(cfg MTLSConfig) *MTLS { return &MTLS{cfg} }

// SecurityScheme implements Describer.
func (m *MTLS) SecurityScheme() (string, a2a.SecurityScheme) {
	return m.schemeName(), a2a.SecurityScheme{MutualTLS: &a2a.MutualTLSSecurityScheme{}}
}

func (m *MTLS) schemeName() string {
	if m.cfg.Scheme == "" {
		return "mtls"
	}
	return m.cfg.Scheme
}

// Kind names the credential, for refusals.
func (m *MTLS) Kind() string { return "a client certificate" }

// Authenticate implements Authenticator.
func (m *MTLS) Authenticate(_ context.Context, creds Credentials) (*Principal, error) {
	if len(creds.PeerCertificates) == 0 {
		return nil, ErrNoCredentials
	}
	c := creds.PeerCertificates[0]
	p := &Principal{Scheme: m.schemeName(), Issuer: c.Issuer.String(), Subject: certSubject(c)}
	if p.Subject == "" {
		return nil, fmt.Errorf("%w: the client certificate names no subject (no URI or DNS SAN, no common name)", ErrInvalidCredentials)
	}
	if m.cfg.TenantFromOU && len(c.Subject.OrganizationalUnit) > 0 {
		p.Tenant = c.Subject.OrganizationalUnit[0]
	}
	return p, nil
}

func certSubject(c *x509.Certificate) string {
	switch {
	case len(c.URIs) > 0:
		return c.URIs[0].String()
	case len(c.DNSNames) > 0:
		return c.DNSNames[0]
	}
	return c.Subject.CommonName
}

// Challenge implements Authenticator: TLS has no HTTP challenge.
func (m *MTLS) Challenge(error) string { return "" }
