package auth_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
)

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "alice")
	if err := os.WriteFile(keyFile, []byte("alice-key-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BOB_KEY": "bob-key-0123456789ab"}
	yml := `
apiKeys:
  keys:
  - {name: alice, tenant: acme, keyFile: ` + keyFile + `, scopes: [tasks:read]}
  - {name: bob, keyEnv: BOB_KEY}
policy:
  rules:
  - {methods: [CancelTask], scopes: [tasks:cancel]}
limits:
  perPrincipal: {perSecond: 100}
jwt:
- issuer: https://idp.example
  audience: https://agent.example
  jwksUrl: https://idp.example/jwks.json
  skew: 30s
`
	c, err := auth.ParseConfig([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Gate(func(k string) string { return env[k] }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := g.Admit(context.Background(), "GetTask", headers("X-API-Key", "alice-key-0123456789"))
	if p := auth.FromContext(ctx); err != nil || p.Subject != "alice" || p.Tenant != "acme" {
		t.Fatalf("alice: %+v, %v", p, err)
	}
	if _, err := g.Admit(context.Background(), "CancelTask", headers("X-API-Key", "bob-key-0123456789ab")); !errors.Is(err, a2a.ErrPermissionDenied) {
		t.Fatalf("bob's cancel: %v, want permission denied", err)
	}
	card := &a2a.AgentCard{}
	g.Describe(card)
	if card.SecuritySchemes["apiKey"].APIKey == nil || card.SecuritySchemes["bearer"].HTTPAuth == nil || len(card.SecurityRequirements) != 2 {
		t.Fatalf("card: %+v %+v", card.SecuritySchemes, card.SecurityRequirements)
	}

	for name, tt := range map[string]struct{ yml, want string }{
		"a misspelt field":   {"apiKey: {}", "unknown field"},
		"an inline key":      {"apiKeys: {keys: [{name: a, key: secret-0123456789}]}", "unknown field"},
		"no secret":          {"apiKeys: {keys: [{name: a}]}", "never written in the config"},
		"an unset variable":  {"apiKeys: {keys: [{name: a, keyEnv: NOPE}]}", "NOPE is empty or not set"},
		"both sources":       {"apiKeys: {keys: [{name: a, keyEnv: BOB_KEY, keyFile: /x}]}", "not both"},
		"alg none":           {"jwt: [{issuer: i, audience: a, jwksUrl: 'https://i/j', algorithms: [none]}]", "jwt[0]"},
		"a bad duration":     {"jwt: [{issuer: i, audience: a, jwksUrl: 'https://i/j', skew: soon}]", "duration"},
		"nothing admits":     {"policy: {}", "needs an Authenticator"},
		"a rule for nothing": {"anonymous: true\npolicy: {rules: [{scopes: [x]}]}", "names no methods"},
	} {
		c, err := auth.ParseConfig([]byte(tt.yml))
		if err == nil {
			_, err = c.Gate(func(k string) string { return env[k] }, nil)
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tt.want)
		}
	}
}

// TestConfigOfTheDocs: the auth config docs/security.md shows is one
// ParseConfig takes, so that what the docs say can be copied.
func TestConfigOfTheDocs(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```yaml\n# Who may call.")
	if !ok {
		t.Fatal("docs/security.md has no auth config block starting with '# Who may call.'")
	}
	block, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatal("the auth config block does not end")
	}
	c, err := auth.ParseConfig([]byte("#" + block)) // the cut left the comment's rest
	if err != nil {
		t.Fatalf("docs/security.md's auth config: %v", err)
	}
	if c.APIKeys == nil || len(c.JWT) != 3 || c.MTLS == nil || len(c.Policy.Rules) == 0 || c.Limits.PerPrincipal.PerSecond == 0 {
		t.Fatalf("docs/security.md's auth config read as %+v: a part is lost", c)
	}
}
