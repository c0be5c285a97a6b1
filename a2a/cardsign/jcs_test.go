package cardsign

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// The examples of RFC 8785, and its number samples (appendix B), as test
// data: each expected output checked against Node.js 20's JSON.stringify,
// the ECMAScript serializer the scheme is defined by.
func TestCanonicalizeRFCExamples(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{
			name: "section 3.2.2 sample",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "section 3.2.3 sorting by UTF-16 code units",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\",\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{
			name: "French words sort by code unit, not by locale",
			in:   `{"sin":1,"pêche":2,"péché":3,"peach":4}`,
			want: `{"peach":4,"péché":3,"pêche":2,"sin":1}`,
		},
		{
			name: "nested objects sorted, arrays kept in order",
			in:   ` { "b" : [ {"z":1,"a":2}, 3 ] , "a" : { } , "c":[] } `,
			want: `{"a":{},"b":[{"a":2,"z":1},3],"c":[]}`,
		},
		{
			name: "escapes: short forms, other controls in lower-case hex, nothing else",
			in:   `"\u0000\u0001\b\t\n\u000B\f\r\u001F\u007f\u00e9\u2028\/\"\\"`,
			want: "\"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f\u007fé\u2028/\\\"\\\\\"",
		},
		{name: "scalar top level", in: ` 1.0 `, want: `1`},
		{name: "minus zero", in: `-0.0`, want: `0`},
		{name: "noncharacter kept", in: `"\uffff"`, want: "\"\uffff\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestCanonicalNumbers(t *testing.T) {
	// IEEE 754 bit patterns and ECMAScript's Number::toString of them.
	for _, tc := range []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	} {
		b, err := hex.DecodeString(tc.bits)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		if got := string(appendNumber(nil, f)); got != tc.want {
			t.Errorf("%s (%v): got %s, want %s", tc.bits, f, got, tc.want)
		}
		// The canonical form reads back as the same double.
		back, err := Canonicalize([]byte(tc.want))
		if err != nil || string(back) != tc.want {
			t.Errorf("%s: Canonicalize(%s) = %s, %v", tc.bits, tc.want, back, err)
		}
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, why string }{
		{"empty", ``, "end of input"},
		{"duplicate name", `{"a":1,"a":2}`, `duplicate member name "a"`},
		{"duplicate name spelled differently", `{"a":1,"\u0061":2}`, "duplicate"},
		{"lone high surrogate", `"\ud800"`, "unpaired surrogate"},
		{"lone low surrogate", `"\udc00x"`, "unpaired surrogate"},
		{"high surrogate then non-surrogate", `"\ud800\u0041"`, "unpaired surrogate"},
		{"invalid UTF-8", "\"\xff\"", "invalid UTF-8"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"raw control character", "\"a\nb\"", "control character"},
		{"number too large", `1e400`, "outside the range"},
		{"leading zero", `01`, "data after"},
		{"leading plus", `+1`, "unexpected"},
		{"bare dot", `1.`, "malformed number"},
		{"hex escape short", `"\u12"`, `\u`},
		{"unknown escape", `"\x41"`, "invalid escape"},
		{"trailing comma", `[1,]`, "unexpected"},
		{"trailing data", `{} {}`, "data after"},
		{"single quotes", `{'a':1}`, "member name"},
		{"NaN", `NaN`, "unexpected"},
		{"too deep", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err == nil {
				t.Fatalf("Canonicalize(%q) = %s, want an error", tc.in, got)
			}
			if !errors.Is(err, ErrNotIJSON) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %q: want ErrNotIJSON saying %q", err, tc.why)
			}
		})
	}
}

func TestCompareUTF16(t *testing.T) {
	// In code points U+FB33 < U+1F600; in UTF-16 0xFB33 > 0xD83D.
	ordered := []string{"", "\r", "1", "a", "ab", "\u0080", "ö", "€", "\U0001F600", "\U0001F601", "\ufb33", "\uffff"}
	for i := range ordered {
		for j := range ordered {
			got := compareUTF16(ordered[i], ordered[j])
			if (i < j) != (got < 0) || (i == j) != (got == 0) {
				t.Errorf("compareUTF16(%q, %q) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

// checkCanonical checks what FuzzCanonicalize promises of one input.
func checkCanonical(t *testing.T, in []byte) {
	out, err := Canonicalize(in)
	if err != nil {
		if !errors.Is(err, ErrNotIJSON) {
			t.Fatalf("error %v does not wrap ErrNotIJSON", err)
		}
		return
	}
	if !json.Valid(in) || !json.Valid(out) {
		t.Fatalf("accepted %q as %q; encoding/json calls one of them invalid", in, out)
	}
	again, err := Canonicalize(out)
	if err != nil || string(again) != string(out) {
		t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, out, again, err)
	}
	var a, b any
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%q canonicalized to %q, a different value: %#v vs %#v", in, out, a, b)
	}
}

// FuzzCanonicalize: Canonicalize never panics; what it accepts is JSON to
// encoding/json too; its output is its own canonical form and reads back
// as the value the input reads as.
func FuzzCanonicalize(f *testing.F) {
	for _, seed := range []string{
		`{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`,
		`{"\u20ac":1,"\r":2,"\ufb33":3,"1":4,"\ud83d\ude00":5,"\u0080":6,"\u00f6":7}`,
		`[1e21,1e-7,-0,123456789012345678901234567890,5e-324,0.1]`,
		`"\ud800"`, `{"a":1,"a":2}`, `[[[[]]]]`, ` {"x" : [ true , false , null ] } `,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(checkCanonical)
}
