package credentials

import (
	"strings"
	"testing"
)

// FuzzParseTokenResponse: whatever a token endpoint answers, the answer
// is a grant of a token that can go in a header, with a lifetime within
// bounds, or an error that does not repeat the token; nothing panics.
func FuzzParseTokenResponse(f *testing.F) {
	for _, s := range []string{
		`{"access_token":"abc.def.ghi","token_type":"Bearer","expires_in":3600}`,
		`{"access_token":"abc","token_type":"bearer","expires_in":"60","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}`,
		`{"access_token":"abc","token_type":"N_A"}`,
		`{"access_token":"a\u0000b","token_type":"Bearer"}`,
		`{"access_token":"abc","token_type":"Bearer","expires_in":-1}`,
		`{"access_token":"abc","token_type":"Bearer","expires_in":1e400}`,
		`{"error":"invalid_client","error_description":"bad \u00e9 secret"}`,
		`null`, `[]`, `"x"`, ``, `{`,
	} {
		f.Add(200, []byte(s))
		f.Add(400, []byte(s))
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		g, err := parseTokenResponse(status, body)
		if err != nil {
			return
		}
		if status != 200 {
			t.Fatalf("a grant from HTTP %d", status)
		}
		if g.token == "" || len(g.token) > maxAccessToken || strings.ContainsAny(g.token, " \t\r\n\x00") {
			t.Fatalf("granted token %q cannot go in a header", g.token)
		}
		if g.lifetime < 0 || g.lifetime > maxLifetime {
			t.Fatalf("lifetime %v", g.lifetime)
		}
	})
}
