package natsstore

import (
	"regexp"
	"strings"
	"testing"
)

func TestKeyToken(t *testing.T) {
	valid := regexp.MustCompile(`\A[-/_=a-zA-Z0-9]+\z`)
	seen := map[string]string{}
	plainMax := strings.Repeat("p", maxTokenLen)
	// The longest id whose base64 form fits, and one byte more.
	b64Max := strings.Repeat(".", (maxTokenLen-1)*3/4)
	for _, c := range []struct {
		id     string
		prefix string // the token's form: "" plain, "=" base64, "/" hash
	}{
		{"", "="}, {"weather", ""}, {"WeatherAgent", ""}, {"0192-ab_CD", ""}, {"a.b", "="}, {"a b", "="},
		{"*", "="}, {">", "="}, {"=x", "="}, {"héllo", "="}, {"a/b", "="}, {"ab==", "="}, {"YQ", ""},
		{plainMax, ""}, {plainMax + "p", "/"},
		{b64Max, "="}, {b64Max + ".", "/"},
		{strings.Repeat("a", 5000), "/"}, {strings.Repeat("a", 4999) + "b", "/"}, {strings.Repeat("é", 3000), "/"},
		{"/" + strings.Repeat("x", 42), "="},
	} {
		tok := keyToken(c.id)
		if !valid.MatchString(tok) {
			t.Errorf("keyToken(%.20q…) = %q: not a valid key token", c.id, tok)
		}
		if len(tok) > maxTokenLen {
			t.Errorf("keyToken(%.20q…) has %d bytes, more than %d", c.id, len(tok), maxTokenLen)
		}
		switch form := tok[:1]; {
		case c.prefix == "" && (form == "=" || form == "/"), c.prefix != "" && form != c.prefix:
			t.Errorf("keyToken(%.20q… of %d bytes) = %.20q…: want the form %q", c.id, len(c.id), tok, c.prefix)
		}
		if prev, ok := seen[tok]; ok {
			t.Errorf("keyToken(%.20q…) = keyToken(%.20q…) = %q", c.id, prev, tok)
		}
		seen[tok] = c.id
	}
	if got := keyToken("0192f3c4-7d1e-7a00-8000-1234567890ab"); got != "0192f3c4-7d1e-7a00-8000-1234567890ab" {
		t.Errorf("a UUID became %q", got)
	}
}
