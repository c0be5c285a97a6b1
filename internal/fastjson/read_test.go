package fastjson

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// readAny reads one whole JSON text as a value, reporting whether the fast
// path took it.
func readAny(b []byte) (any, bool) {
	r := New(b)
	v := r.Any()
	return v, r.End()
}

func TestReaderTakesWhatEncodingJSONTakes(t *testing.T) {
	for _, s := range []string{
		`null`, `true`, `false`, `0`, `-0`, `1.5e3`, `-12.25E-2`, `"plain"`, `"esc\"aped\u00e9\ud83d\ude00\n"`,
		`"bad \ud800 surrogate"`, "\"invalid \xff utf8\"", `[]`, `{}`, ` [1, "a", null, {"k": [true]}] `,
		`{"dup": 1, "dup": 2}`, `{"K\u0065y": "v"}`, `1e308`,
	} {
		got, ok := readAny([]byte(s))
		if !ok {
			t.Errorf("%s: fast path declined", s)
			continue
		}
		var want any
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: fast %#v, std %#v", s, got, want)
		}
	}
}

func TestReaderRefusesWhatEncodingJSONRefuses(t *testing.T) {
	for _, s := range []string{
		``, ` `, `nul`, `tru`, `-`, `01`, `1.`, `1e`, `.5`, `+1`, `"unterminated`, "\"ctl\x01\"", `"\x"`, `"\u12g4"`,
		`[1,]`, `[1 2]`, `{"a" 1}`, `{"a":1,}`, `{1:2}`, `[`, `{"a":`, `1 2`, `1e400`, `[]]`,
		strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	} {
		if _, ok := readAny([]byte(s)); ok {
			t.Errorf("%q: fast path took it", s)
		}
	}
}

func TestKeyAndUnknown(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool // the fast path takes it
	}{
		{`{"name": 1, "other": [1, {"x": "y"}]}`, true},
		{`{"Name": 1}`, false}, // encoding/json would match it to "name"
		{`{"n\u0061me": 1}`, false},
		{`{"name": 1, "name": 2}`, false},
		{`{"nämé": 1}`, false},
	} {
		r := New([]byte(tc.in))
		var seen uint32
		if r.Open('{') {
			for n := 0; r.Next('}', &n); {
				switch key := r.Key(); string(key) {
				case "name":
					r.Seen(&seen, 1)
					r.Skip()
				default:
					r.Unknown(key, "name")
				}
			}
		}
		if got := r.End(); got != tc.want {
			t.Errorf("%s: took %v, want %v", tc.in, got, tc.want)
		}
	}
}

// FuzzReadAny checks the Reader against encoding/json on any input: what it
// takes, encoding/json takes too, with the same value.
func FuzzReadAny(f *testing.F) {
	for _, s := range []string{`{"a":[1,2.5e-3,"x\u00e9",null,true,{}]}`, `"\ud83d\ude00"`, `-0.0`, `[]`, `{"":""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := readAny(b)
		var want any
		err := json.Unmarshal(b, &want)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%q: fast path took what encoding/json refuses (%v)", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: fast %#v, std %#v", b, got, want)
		}
	})
}
