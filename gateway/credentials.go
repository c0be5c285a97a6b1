package gateway

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/credentials"
	"github.com/a2amesh/a2amesh/internal/userfile"
)

// Credential is how the gateway authenticates its calls to one agent
// (Topology.Credentials): on behalf of its caller (forward, exchange) or
// as itself (clientCredentials, bearer, apiKey). Secrets are named by the
// file that holds them (secretFile: a mounted Kubernetes Secret, re-read
// when it rotates) or the environment variable (secretEnv), never written
// in the topology.
type Credential struct {
	// Kind is one of:
	//   forward            the caller's own bearer token, as it came
	//   exchange           the caller's token exchanged (RFC 8693) at
	//                      tokenURL for one meant for the agent
	//   clientCredentials  the gateway's own token from tokenURL (OAuth
	//                      2.0 client-credentials grant)
	//   bearer             a static bearer token of the gateway's
	//   apiKey             a static API key of the gateway's, in header
	Kind string `json:"kind"`
	// SecretFile or SecretEnv holds the secret: the token (bearer), the
	// key (apiKey), the gateway's client secret (clientCredentials,
	// exchange). Exactly one is set for those kinds.
	SecretFile string `json:"secretFile,omitempty"`
	SecretEnv  string `json:"secretEnv,omitempty"`
	// Header carries an apiKey: X-API-Key by default.
	Header string `json:"header,omitempty"`
	// TokenURL and ClientID (clientCredentials, exchange) are the
	// authorization server's token endpoint and the gateway's client id
	// there.
	TokenURL string `json:"tokenURL,omitempty"`
	ClientID string `json:"clientID,omitempty"`
	// Audience and Resource (clientCredentials, exchange: exchange needs
	// one) name the agent the token is for; Scopes are asked for.
	Audience string   `json:"audience,omitempty"`
	Resource string   `json:"resource,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	// SubjectTokenType (exchange) says what the caller's tokens are:
	// access_token (the default) or jwt.
	SubjectTokenType string `json:"subjectTokenType,omitempty"`
}

// The kinds of Credential.
const (
	CredentialForward           = "forward"
	CredentialExchange          = "exchange"
	CredentialClientCredentials = "clientCredentials"
	CredentialBearer            = "bearer"
	CredentialAPIKey            = "apiKey"
)

var credentialKinds = []string{CredentialForward, CredentialExchange, CredentialClientCredentials, CredentialBearer, CredentialAPIKey}

// checkCredentials checks the credentials of t's agents and imports: an
// error names the agent and the field.
func (t *Topology) checkCredentials() error {
	for _, key := range slices.Sorted(maps.Keys(t.Credentials)) {
		where := "credentials." + key
		if _, ok := t.Agents[key]; !ok && t.Imports[key] == nil {
			return fmt.Errorf("%s: agent %q is not among the agents (%s) or imports", where, key, strings.Join(keys(t.Agents), ", "))
		}
		if err := t.Credentials[key].check(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

// fieldError is a Credential field that cannot be used: its message
// starts with the field's name, after which the caller names the agent.
type fieldError struct{ field, msg string }

func (e *fieldError) Error() string { return e.field + ": " + e.msg }

func (c *Credential) check() error {
	bad := func(field, msg string) error { return &fieldError{field, msg} }
	if c == nil {
		return bad("kind", "an empty credential")
	}
	if !slices.Contains(credentialKinds, c.Kind) {
		return bad("kind", fmt.Sprintf("%q: want one of %s", c.Kind, strings.Join(credentialKinds, ", ")))
	}
	// Which fields each kind takes, beside kind.
	takes := map[string]bool{}
	switch c.Kind {
	case CredentialBearer:
		takes["secret"] = true
	case CredentialAPIKey:
		takes["secret"], takes["header"] = true, true
	case CredentialClientCredentials, CredentialExchange:
		takes["secret"], takes["tokenURL"], takes["clientID"], takes["audience"], takes["resource"], takes["scopes"] = true, true, true, true, true, true
		takes["subjectTokenType"] = c.Kind == CredentialExchange
	}
	for _, f := range []struct {
		name, key string
		set       bool
	}{
		{"secretFile", "secret", c.SecretFile != ""},
		{"secretEnv", "secret", c.SecretEnv != ""},
		{"header", "header", c.Header != ""},
		{"tokenURL", "tokenURL", c.TokenURL != ""},
		{"clientID", "clientID", c.ClientID != ""},
		{"audience", "audience", c.Audience != ""},
		{"resource", "resource", c.Resource != ""},
		{"scopes", "scopes", len(c.Scopes) > 0},
		{"subjectTokenType", "subjectTokenType", c.SubjectTokenType != ""},
	} {
		if f.set && !takes[f.key] {
			return bad(f.name, fmt.Sprintf("does not apply to kind %s", c.Kind))
		}
	}
	if takes["secret"] {
		switch {
		case c.SecretFile == "" && c.SecretEnv == "":
			return bad("secretFile", fmt.Sprintf("kind %s needs secretFile or secretEnv (secrets are never written in the topology)", c.Kind))
		case c.SecretFile != "" && c.SecretEnv != "":
			return bad("secretFile", "set secretFile or secretEnv, not both")
		}
	}
	if takes["tokenURL"] {
		u, err := url.Parse(c.TokenURL)
		switch {
		case c.TokenURL == "":
			return bad("tokenURL", "required")
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil:
			return bad("tokenURL", fmt.Sprintf("%q: want an http(s) URL without user info", c.TokenURL))
		case c.ClientID == "":
			return bad("clientID", "required")
		}
	}
	if c.Kind == CredentialExchange && c.Audience == "" && c.Resource == "" {
		return bad("audience", "exchange needs audience or resource: the agent the exchanged token is for")
	}
	if _, err := subjectTokenType(c.SubjectTokenType); err != nil {
		return bad("subjectTokenType", err.Error())
	}
	return nil
}

func subjectTokenType(s string) (string, error) {
	switch s {
	case "", "access_token", credentials.TokenTypeAccessToken:
		return credentials.TokenTypeAccessToken, nil
	case "jwt", credentials.TokenTypeJWT:
		return credentials.TokenTypeJWT, nil
	}
	return "", fmt.Errorf("%q: want access_token or jwt", s)
}

// secret is where the credential's secret is.
func (c *Credential) secret() (credentials.Secret, string) {
	if c.SecretFile != "" {
		return credentials.FromFile(c.SecretFile), "secretFile"
	}
	return credentials.FromEnv(c.SecretEnv), "secretEnv"
}

// build makes the client.Credentials of a checked credential. A secret
// that cannot be read now is an error naming its field: a gateway that
// could not call the agent had better not start.
func (c *Credential) build() (client.Credentials, error) {
	if c.Kind == CredentialForward {
		return credentials.Forward{}, nil
	}
	secret, field := c.secret()
	if _, err := secret.Value(); err != nil {
		return nil, &fieldError{field, err.Error()}
	}
	switch c.Kind {
	case CredentialBearer:
		return credentials.Bearer(secret), nil
	case CredentialAPIKey:
		return credentials.APIKey(c.Header, secret), nil
	case CredentialClientCredentials:
		return credentials.NewClientCredentials(credentials.ClientCredentialsConfig{TokenURL: c.TokenURL, ClientID: c.ClientID,
			ClientSecret: secret, Audience: c.Audience, Resource: c.Resource, Scopes: c.Scopes})
	default:
		stt, _ := subjectTokenType(c.SubjectTokenType)
		return credentials.NewExchange(credentials.ExchangeConfig{TokenURL: c.TokenURL, ClientID: c.ClientID,
			ClientSecret: secret, Audience: c.Audience, Resource: c.Resource, Scopes: c.Scopes, SubjectTokenType: stt})
	}
}

// buildCredentials makes the credentials of t's agents, one per agent
// key, shared by every node of that key (and so their tokens).
func (t *Topology) buildCredentials() (map[string]client.Credentials, error) {
	out := make(map[string]client.Credentials, len(t.Credentials))
	for _, key := range slices.Sorted(maps.Keys(t.Credentials)) {
		c, err := t.Credentials[key].build()
		if err != nil {
			return nil, fmt.Errorf("gateway: credentials.%s: %w", key, err)
		}
		out[key] = c
	}
	return out, nil
}

// LoadCredentials reads one Credential (YAML or JSON, unknown fields
// refused) from the file at path, checks it and makes its
// client.Credentials: how an agent service authenticates every call it
// makes to other agents (a2amesh's --hop-credentials).
func LoadCredentials(path string) (client.Credentials, error) {
	b, err := userfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("gateway: credentials: %w", err)
	}
	var c Credential
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("gateway: credentials %s: %w", path, err)
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("gateway: credentials %s: %w", path, err)
	}
	cr, err := c.build()
	if err != nil {
		return nil, fmt.Errorf("gateway: credentials %s: %w", path, err)
	}
	return cr, nil
}
