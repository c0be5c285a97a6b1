package gateway

import (
	"context"
	"strings"
	"testing"
)

func TestParseCredentials(t *testing.T) {
	const head = "version: 1\nagents: {a: 'http://127.0.0.1:1/', b: 'http://127.0.0.1:2/'}\nentry: {agent: a, subAgents: [{agent: b}]}\n"
	const idp = "tokenURL: https://idp.test/token, clientID: gw, secretFile: /run/secrets/gw"
	tests := []struct {
		name, yaml string
		err        string // a substring of the error; empty: valid
	}{
		{"forward", "credentials: {a: {kind: forward}}", ""},
		{"every kind", `credentials:
  a: {kind: exchange, ` + idp + `, audience: a, scopes: [a2a], subjectTokenType: jwt}
  b: {kind: clientCredentials, tokenURL: 'http://127.0.0.1:5556/token', clientID: gw, secretEnv: GW_SECRET, resource: 'http://127.0.0.1:2/'}
`, ""},
		{"bearer", "credentials: {a: {kind: bearer, secretEnv: A_TOKEN}}", ""},
		{"API key in a header", "credentials: {a: {kind: apiKey, header: X-Partner-Key, secretFile: /run/secrets/key}}", ""},
		{"json", `credentials: {"b": {"kind": "forward"}}`, ""},

		{"an import's", "imports: {r: {url: 'https://a.team.example/', signature: warn}}\nfederation: {allowHosts: [a.team.example]}\n" +
			"credentials: {r: {kind: exchange, " + idp + ", audience: 'https://a.team.example/'}}", ""},
		{"unknown agent", "credentials: {c: {kind: forward}}", `credentials.c: agent "c" is not among the agents (a, b) or imports`},
		{"unknown kind", "credentials: {a: {kind: password}}", `credentials.a: kind: "password": want one of forward, exchange, clientCredentials, bearer, apiKey`},
		{"no kind", "credentials: {a: {secretEnv: X}}", `credentials.a: kind: ""`},
		{"empty", "credentials: {a: null}", "credentials.a: kind: an empty credential"},
		{"inline secret", "credentials: {a: {kind: bearer, secret: hunter2}}", "unknown field"},
		{"inline token", "credentials: {a: {kind: bearer, token: hunter2}}", "unknown field"},
		{"bearer without a secret", "credentials: {a: {kind: bearer}}", "credentials.a: secretFile: kind bearer needs secretFile or secretEnv"},
		{"two secrets", "credentials: {a: {kind: apiKey, secretFile: /x, secretEnv: X}}", "credentials.a: secretFile: set secretFile or secretEnv, not both"},
		{"forward with a secret", "credentials: {a: {kind: forward, secretEnv: X}}", "credentials.a: secretEnv: does not apply to kind forward"},
		{"header on a bearer", "credentials: {a: {kind: bearer, secretEnv: X, header: X-Key}}", "credentials.a: header: does not apply to kind bearer"},
		{"no token URL", "credentials: {b: {kind: clientCredentials, clientID: gw, secretEnv: X}}", "credentials.b: tokenURL: required"},
		{"relative token URL", "credentials: {b: {kind: clientCredentials, tokenURL: /token, clientID: gw, secretEnv: X}}", `credentials.b: tokenURL: "/token"`},
		{"secret in the token URL", "credentials: {b: {kind: clientCredentials, tokenURL: 'https://gw:pw@idp/token', clientID: gw, secretEnv: X}}", "without user info"},
		{"no client id", "credentials: {b: {kind: exchange, tokenURL: 'https://idp/token', secretEnv: X, audience: b}}", "credentials.b: clientID: required"},
		{"exchange for no one", "credentials: {b: {kind: exchange, " + idp + "}}", "credentials.b: audience: exchange needs audience or resource"},
		{"subject token type", "credentials: {b: {kind: exchange, " + idp + ", audience: b, subjectTokenType: saml}}", `credentials.b: subjectTokenType: "saml"`},
		{"subject token type outside exchange", "credentials: {b: {kind: clientCredentials, " + idp + ", subjectTokenType: jwt}}", "credentials.b: subjectTokenType: does not apply to kind clientCredentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTopology([]byte(head + tt.yaml))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("error %v, want one containing %q", err, tt.err)
			}
		})
	}
}

// TestBuildCredentialsSecrets: the gateway does not start with a secret
// it cannot read, and says which agent's, in which field; the error holds
// no secret.
func TestBuildCredentialsSecrets(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("A2AMESH_TEST_EMPTY", "")
	for _, tc := range []struct {
		name, cred, err string
	}{
		{"missing file", "{kind: bearer, secretFile: '" + dir + "/none'}", "gateway: credentials.a: secretFile: secret file: stat " + dir + "/none"},
		{"unset variable", "{kind: clientCredentials, tokenURL: 'https://idp/token', clientID: gw, secretEnv: A2AMESH_TEST_UNSET}", "gateway: credentials.a: secretEnv: secret environment variable A2AMESH_TEST_UNSET is unset or empty"},
		{"empty variable", "{kind: apiKey, secretEnv: A2AMESH_TEST_EMPTY}", "credentials.a: secretEnv"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, err := ParseTopology([]byte("version: 1\nagents: {a: 'http://127.0.0.1:1/'}\nentry: {agent: a}\ncredentials: {a: " + tc.cred + "}\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = top.Build(context.Background(), Config{})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Build = %v, want an error containing %q", err, tc.err)
			}
		})
	}
}
