package auth_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

// FuzzParseConfig: an auth config is written by an operator; whatever it
// holds, ParseConfig returns a config or an error and never panics; a
// config it accepts reads back from its own JSON; and the gate
// it makes (secrets from a fixed environment, no files) admits or
// refuses a request without panicking.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"apiKeys:\n  keys:\n  - {name: alice, tenant: acme, keyEnv: K, scopes: [tasks:read]}\n",
		"apiKeys: {header: X-Key, scheme: k, keys: [{name: a, keyEnv: K}, {name: b, keyFile: /s}]}",
		"jwt:\n- {issuer: 'https://idp.example', audience: 'https://a.example', jwksUrl: 'https://idp.example/j', skew: 30s, algorithms: [ES256]}\n",
		"jwt: [{issuer: i, audience: a, keysFile: /k}]",
		"mtls: {tenantFromOU: true}\nanonymous: true\n",
		"policy: {dryRun: true, rules: [{methods: ['*'], scopes: [s]}, {methods: [CancelTask], claims: {role: operator}}]}",
		"limits: {perPrincipal: {perSecond: 20, burst: 40}, perTenant: {perSecond: 200}}",
		`{"apiKeys":{"keys":[{"name":"n","keyEnv":"K"}]},"jwt":[{"issuer":"i","audience":"a","skew":"-1s"}]}`,
		"unknown: 1", "jwt: [{skew: 1y}]", "apiKeys: {keys: null}", "[", "&a [*a, *a]", "",
	} {
		f.Add([]byte(s))
	}
	env := func(string) string { return "fuzzed-key-0123456789" }
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := auth.ParseConfig(b)
		if err != nil {
			return
		}
		// An accepted config's own JSON is accepted, and reads back as
		// itself from the second round on (the first may drop what is
		// empty but given, such as "rules: []").
		var js []byte
		for round := range 3 {
			next, err := json.Marshal(c)
			if err != nil {
				t.Fatalf("an accepted config does not encode: %v", err)
			}
			if round == 2 && string(next) != string(js) {
				t.Fatalf("an accepted config reads back otherwise:\n%s\n%s", js, next)
			}
			js = next
			if c, err = auth.ParseConfig(js); err != nil {
				t.Fatalf("an accepted config's own JSON is refused: %v\n%s", err, js)
			}
		}
		if namesFiles(c) {
			return // what the files hold is not the input's
		}
		g, err := c.Gate(env, slog.New(slog.DiscardHandler))
		if err != nil {
			return
		}
		_, _ = g.Admit(context.Background(), "GetTask", headers("X-API-Key", "fuzzed-key-0123456789"))
	})
}

func namesFiles(c *auth.Config) bool {
	if c.APIKeys != nil {
		for _, k := range c.APIKeys.Keys {
			if k.KeyFile != "" {
				return true
			}
		}
	}
	for _, j := range c.JWT {
		if j.KeysFile != "" {
			return true
		}
	}
	return false
}
