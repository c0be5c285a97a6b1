package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"sigs.k8s.io/yaml"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/userfile"
)

// Config is a Gate's configuration as an operator writes it, in JSON or
// YAML (a file, say a Kubernetes ConfigMap): which credentials are
// accepted, the policy and the rate limits. Secrets never appear in it:
// API keys are read from files (Kubernetes Secret mounts) or environment
// variables it names.
type Config struct {
	// Anonymous admits callers that send no credential (GateConfig.
	// AllowAnonymous).
	Anonymous bool             `json:"anonymous,omitempty"`
	APIKeys   *APIKeysSettings `json:"apiKeys,omitempty"`
	JWT       []JWTSettings    `json:"jwt,omitempty"`
	MTLS      *MTLSConfig      `json:"mtls,omitempty"`
	Policy    Policy           `json:"policy,omitzero"`
	Limits    RateLimits       `json:"limits,omitzero"`
}

// APIKeysSettings configure an APIKeys authenticator from a Config.
type APIKeysSettings struct {
	Scheme string         `json:"scheme,omitempty"`
	Header string         `json:"header,omitempty"`
	Keys   []APIKeySecret `json:"keys"`
}

// APIKeySecret is an API key whose secret is in a file or an environment
// variable: exactly one of KeyFile and KeyEnv.
type APIKeySecret struct {
	Name    string   `json:"name"`
	Tenant  string   `json:"tenant,omitempty"`
	Scopes  []string `json:"scopes,omitempty"`
	KeyFile string   `json:"keyFile,omitempty"`
	KeyEnv  string   `json:"keyEnv,omitempty"`
}

// JWTSettings configure a JWT authenticator from a Config: JWTConfig's
// fields, with pinned keys from a JWKS file and durations as strings
// ("90s").
type JWTSettings struct {
	Scheme   string `json:"scheme,omitempty"`
	Issuer   string `json:"issuer"`
	Audience string `json:"audience"`
	JWKSURL  string `json:"jwksUrl,omitempty"`
	KeysFile string `json:"keysFile,omitempty"`
	// OpenIDConnect and OAuth2 are JWTConfig's: how the card declares
	// the scheme, and (OpenIDConnect without jwksUrl or keysFile) where
	// the keys are.
	OpenIDConnect bool            `json:"openIdConnect,omitempty"`
	OAuth2        *a2a.OAuthFlows `json:"oauth2,omitempty"`
	Algorithms    []string        `json:"algorithms,omitempty"`
	Skew          Duration        `json:"skew,omitzero"`
	TenantClaim   string          `json:"tenantClaim,omitempty"`
	ScopeClaim    string          `json:"scopeClaim,omitempty"`
}

// Duration is a time.Duration written as a string such as "1m30s".
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"90s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// ParseConfig reads a Config from JSON or YAML, refusing unknown fields
// (a misspelt one would otherwise leave an agent more open than meant).
func ParseConfig(data []byte) (*Config, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(js)))
	dec.DisallowUnknownFields()
	c := new(Config)
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	return c, nil
}

// LoadConfig reads the Config in the file at path.
func LoadConfig(path string) (*Config, error) {
	data, err := userfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Gate makes the Gate c describes, reading the secrets it names (with
// getenv for environment variables; nil means os.Getenv). The audit log
// goes to audit (nil: slog.Default()).
func (c *Config) Gate(getenv func(string) string, audit *slog.Logger) (*Gate, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var authns []Authenticator
	if k := c.APIKeys; k != nil {
		keys := make([]APIKey, len(k.Keys))
		for i, s := range k.Keys {
			secret, err := readSecret(s, getenv)
			if err != nil {
				return nil, fmt.Errorf("auth config: apiKeys.keys[%d] (%s): %w", i, s.Name, err)
			}
			keys[i] = APIKey{Key: secret, Name: s.Name, Tenant: s.Tenant, Scopes: s.Scopes}
		}
		a, err := NewAPIKeys(APIKeysConfig{Scheme: k.Scheme, Header: k.Header, Keys: keys})
		if err != nil {
			return nil, fmt.Errorf("auth config: apiKeys: %w", err)
		}
		authns = append(authns, a)
	}
	for i, j := range c.JWT {
		cfg := JWTConfig{Scheme: j.Scheme, Issuer: j.Issuer, Audience: j.Audience, JWKSURL: j.JWKSURL, Algorithms: j.Algorithms,
			Skew: time.Duration(j.Skew), TenantClaim: j.TenantClaim, ScopeClaim: j.ScopeClaim,
			OpenIDConnect: j.OpenIDConnect, OAuth2: j.OAuth2}
		if j.KeysFile != "" {
			data, err := userfile.Read(j.KeysFile)
			if err != nil {
				return nil, fmt.Errorf("auth config: jwt[%d]: %w", i, err)
			}
			cfg.Keys = new(jose.JSONWebKeySet)
			if err := json.Unmarshal(data, cfg.Keys); err != nil {
				return nil, fmt.Errorf("auth config: jwt[%d]: keysFile %s is not a JWKS: %w", i, j.KeysFile, err)
			}
		}
		a, err := NewJWT(cfg)
		if err != nil {
			return nil, fmt.Errorf("auth config: jwt[%d]: %w", i, err)
		}
		authns = append(authns, a)
	}
	if c.MTLS != nil {
		authns = append(authns, NewMTLS(*c.MTLS))
	}
	g, err := NewGate(GateConfig{Authenticators: authns, AllowAnonymous: c.Anonymous, Policy: c.Policy, Limits: c.Limits, Audit: audit})
	if err != nil {
		return nil, fmt.Errorf("auth config: %w", err)
	}
	return g, nil
}

// readSecret reads an API key from its file or variable, without the
// trailing newline files usually end with.
func readSecret(s APIKeySecret, getenv func(string) string) (string, error) {
	switch {
	case s.KeyFile != "" && s.KeyEnv != "":
		return "", errors.New("give keyFile or keyEnv, not both")
	case s.KeyFile != "":
		b, err := userfile.Read(s.KeyFile)
		if err != nil {
			return "", err
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	case s.KeyEnv != "":
		v := getenv(s.KeyEnv)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty or not set", s.KeyEnv)
		}
		return v, nil
	}
	return "", errors.New("the key's secret is missing: give keyFile (a mounted Secret) or keyEnv; keys are never written in the config itself")
}
