package fastjson

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func stdJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendAny(t *testing.T) {
	type point struct{ X, Y int }
	for _, v := range []any{
		nil, "s", true, false, 0.0, -0.0, 1.5, 1e20, 1e21, 1e-6, 1e-7, 123456789e-15, -2.5e-9, math.MaxFloat64, math.SmallestNonzeroFloat64,
		42, int64(-7), map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": []any{1.0, "x", nil, map[string]any{"z": true, "a": "<&>"}}, "a": point{1, 2}, "\u2028": "\xff"},
		[]any{point{3, 4}, []string{"q"}},
	} {
		got, err := AppendAny([]byte("prefix"), v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		if want := stdJSON(t, v); !bytes.Equal(got[len("prefix"):], want) {
			t.Errorf("%#v:\n fast %s\n  std %s", v, got[len("prefix"):], want)
		}
	}
}

func TestAppendAnyErrors(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"f": func() {}}, []any{1.0, math.Inf(-1)}} {
		if _, err := AppendAny(nil, v); err == nil {
			t.Errorf("%#v: no error", v)
		}
	}
}

// FuzzAppendString compares string escaping with encoding/json's.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\b\f\n\r\t\x00\x1f", "<>&", "\u2028\u2029", "\xff\xfe", "é漢字🙂", strings.Repeat("x", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendString(nil, s), stdJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n fast %s\n  std %s", s, got, want)
		}
	})
}

// FuzzAppendFloat compares number formatting with encoding/json's.
func FuzzAppendFloat(f *testing.F) {
	for _, x := range []float64{0, 1, -1, 0.1, 1e-6, 9.99e-7, 1e21, 9.99e20, 1e-300, 1.7976931348623157e308, 5e-324} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return
		}
		if got, want := AppendFloat(nil, x), stdJSON(t, x); !bytes.Equal(got, want) {
			t.Fatalf("%v:\n fast %s\n  std %s", x, got, want)
		}
	})
}
