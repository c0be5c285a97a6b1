package natsstore

import (
	"regexp"
	"testing"
)

func TestKeyToken(t *testing.T) {
	valid := regexp.MustCompile(`\A[-/_=a-zA-Z0-9]+\z`)
	seen := map[string]string{}
	for _, s := range []string{"", "weather", "WeatherAgent", "0192-ab_CD", "a.b", "a b", "*", ">", "=x", "héllo", "a/b", "ab==", "YQ"} {
		tok := keyToken(s)
		if !valid.MatchString(tok) {
			t.Errorf("keyToken(%q) = %q: not a valid key token", s, tok)
		}
		if prev, ok := seen[tok]; ok {
			t.Errorf("keyToken(%q) = keyToken(%q) = %q", s, prev, tok)
		}
		seen[tok] = s
	}
	if got := keyToken("0192f3c4-7d1e-7a00-8000-1234567890ab"); got != "0192f3c4-7d1e-7a00-8000-1234567890ab" {
		t.Errorf("a UUID became %q", got)
	}
}
