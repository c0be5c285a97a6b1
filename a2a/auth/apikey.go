package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
)

// APIKey is one key an APIKeys authenticator accepts and whom it stands
// for.
type APIKey struct {
	// Key is the secret the client sends.
	Key string `json:"key"`
	// Name identifies the key's holder: the principal's Subject.
	Name string `json:"name"`
	// Tenant binds the key to a tenant; "" leaves the request's.
	Tenant string   `json:"tenant,omitempty"`
	Scopes []string `json:"scopes,omitempty"`
}

// APIKeysConfig configures an APIKeys authenticator.
type APIKeysConfig struct {
	// Scheme is the card's security-scheme name for these keys.
	Scheme string
	// Header carries the key; "" means X-API-Key. A key sent as
	// "Authorization: ApiKey <key>" is accepted too.
	Header string
	Keys   []APIKey
}

// APIKeys authenticates requests by a static key in a header. Keys are
// looked up by their SHA-256 digest and compared in constant time, so that
// neither the lookup nor the comparison tells how much of a guess matched.
type APIKeys struct {
	scheme, header string
	keys           map[[sha256.Size]byte]APIKey
}

// NewAPIKeys returns the authenticator of cfg. Keys must be distinct,
// named, and at least 16 bytes long.
func NewAPIKeys(cfg APIKeysConfig) (*APIKeys, error) {
	a := &APIKeys{scheme: cfg.Scheme, header: cfg.Header, keys: make(map[[sha256.Size]byte]APIKey, len(cfg.Keys))}
	if a.header == "" {
		a.header = "X-API-Key"
	}
	for i, k := range cfg.Keys {
		switch {
		case k.Name == "":
			return nil, fmt.Errorf("auth: API key %d has no name", i)
		case len(k.Key) < 16:
			return nil, fmt.Errorf("auth: API key %q is shorter than 16 bytes", k.Name)
		}
		d := sha256.Sum256([]byte(k.Key))
		if _, dup := a.keys[d]; dup {
			return nil, fmt.Errorf("auth: API key %q is also another key's", k.Name)
		}
		a.keys[d] = k
	}
	return a, nil
}

// SecurityScheme implements Describer: an API key in a header.
func (a *APIKeys) SecurityScheme() (string, a2a.SecurityScheme) {
	return a.schemeName(), a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: a.header}}
}

func (a *APIKeys) schemeName() string {
	if a.scheme == "" {
		return "apiKey"
	}
	return a.scheme
}

// Kind names the credential, for refusals.
func (a *APIKeys) Kind() string { return "an API key in " + a.header }

// Authenticate implements Authenticator.
func (a *APIKeys) Authenticate(_ context.Context, creds Credentials) (*Principal, error) {
	key := creds.header(a.header)
	if key == "" {
		if scheme, rest, ok := strings.Cut(creds.header("Authorization"), " "); ok && strings.EqualFold(scheme, "ApiKey") {
			key = strings.TrimSpace(rest)
		}
	}
	if key == "" {
		return nil, ErrNoCredentials
	}
	if len(key) > 1024 {
		return nil, fmt.Errorf("%w: the API key is longer than any issued", ErrInvalidCredentials)
	}
	d := sha256.Sum256([]byte(key))
	k, ok := a.keys[d]
	if !ok || subtle.ConstantTimeCompare([]byte(k.Key), []byte(key)) != 1 {
		return nil, fmt.Errorf("%w: unknown API key", ErrInvalidCredentials)
	}
	return &Principal{Scheme: a.schemeName(), Issuer: "apikey", Subject: k.Name, Tenant: k.Tenant, Scopes: k.Scopes}, nil
}

// Challenge implements Authenticator. API keys have no HTTP
// authentication scheme of their own; the challenge names the header, in
// the form of the ApiKey scheme that some gateways use.
func (a *APIKeys) Challenge(err error) string {
	c := `ApiKey header="` + a.header + `"`
	if errors.Is(err, ErrInvalidCredentials) {
		c += `, error="invalid_key"`
	}
	return c
}
