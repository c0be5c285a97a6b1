// Package fastjson reads and writes JSON without reflection for a2amesh's
// hot paths (the A2A types, the JSON-RPC envelope), byte for byte and
// value for value as encoding/json does.
//
// Reading accepts a subset of what encoding/json accepts. A Reader never says why it refused input: it only marks itself failed,
// and its users then decode the same bytes with encoding/json, which
// either explains the error or handles the rare shape the fast path leaves
// out (escaped or case-folded member names, repeated members, deep
// nesting). The fast path therefore only has to be right when it succeeds,
// which the differential fuzz tests check.
package fastjson

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// maxDepth bounds nesting; deeper input goes to encoding/json, whose own
// limit then applies.
const maxDepth = 1000

// Reader reads one JSON text. Its zero value reads nothing; use New.
type Reader struct {
	b     []byte
	i     int
	depth int
	bad   bool
}

// New returns a Reader of b. Strings and raw values it returns are copies,
// except where a method says it aliases b.
func New(b []byte) Reader { return Reader{b: b} }

// Fail marks the input as one the fast path does not take.
func (r *Reader) Fail() { r.bad = true }

// Failed reports whether the Reader has failed.
func (r *Reader) Failed() bool { return r.bad }

// End reports whether the Reader read one value without failing and only
// whitespace follows it.
func (r *Reader) End() bool {
	r.space()
	return !r.bad && r.i == len(r.b)
}

func (r *Reader) space() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// Peek returns the first byte of the next value, or 0 at the end or after
// a failure.
func (r *Reader) Peek() byte {
	r.space()
	if r.bad || r.i >= len(r.b) {
		return 0
	}
	return r.b[r.i]
}

// Null consumes a null and reports whether there was one.
func (r *Reader) Null() bool {
	if r.Peek() == 'n' {
		r.literal("null")
		return !r.bad
	}
	return false
}

func (r *Reader) literal(word string) {
	if len(r.b)-r.i < len(word) || string(r.b[r.i:r.i+len(word)]) != word {
		r.Fail()
		return
	}
	r.i += len(word)
}

// Open consumes the opening bracket c ('{' or '[') and reports whether it
// was there; if not, the Reader fails.
func (r *Reader) Open(c byte) bool {
	if r.Peek() != c {
		r.Fail()
		return false
	}
	r.depth++
	if r.depth > maxDepth {
		r.Fail()
		return false
	}
	r.i++
	return true
}

// Next reports whether another member or element follows, consuming the
// separating comma, or consumes the closing bracket c and reports false. n
// counts the items so far; start it at 0. It reports false after a
// failure.
//
//	if r.Open('{') {
//		for n := 0; r.Next('}', &n); {
//			switch string(r.Key()) { ... }
//		}
//	}
func (r *Reader) Next(c byte, n *int) bool {
	r.space()
	if r.bad || r.i >= len(r.b) {
		r.Fail()
		return false
	}
	if r.b[r.i] == c {
		r.i++
		r.depth--
		return false
	}
	if *n > 0 {
		if r.b[r.i] != ',' {
			r.Fail()
			return false
		}
		r.i++
		r.space()
	}
	*n++
	return true
}

// Key reads a member name and its colon. The name aliases the input. Names
// with escapes or non-ASCII bytes fail: encoding/json would unescape or
// fold them.
func (r *Reader) Key() []byte {
	if r.Peek() != '"' {
		r.Fail()
		return nil
	}
	start := r.i + 1
	j := start
	for ; j < len(r.b); j++ {
		c := r.b[j]
		if c == '"' {
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			r.Fail()
			return nil
		}
	}
	if j >= len(r.b) {
		r.Fail()
		return nil
	}
	key := r.b[start:j]
	r.i = j + 1
	r.space()
	if r.i >= len(r.b) || r.b[r.i] != ':' {
		r.Fail()
		return nil
	}
	r.i++
	return key
}

// Unknown skips the value of a member the caller does not decode, unless
// the name case-folds to one of known, which encoding/json would match:
// then the Reader fails.
func (r *Reader) Unknown(key []byte, known ...string) {
	for _, k := range known {
		if len(k) == len(key) && equalFoldASCII(k, key) {
			r.Fail()
			return
		}
	}
	r.Skip()
}

// Seen marks member bit of the current object as read, failing if it was
// read before: encoding/json merges a repeated member into the first.
func (r *Reader) Seen(seen *uint32, bit uint32) {
	if *seen&bit != 0 {
		r.Fail()
	}
	*seen |= bit
}

func equalFoldASCII(a string, b []byte) bool {
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// String reads a string value.
func (r *Reader) String() string {
	if r.Peek() != '"' {
		r.Fail()
		return ""
	}
	start := r.i + 1
	ascii := true
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			if !ascii && !utf8.Valid(r.b[start:j]) {
				return r.slowString(start - 1)
			}
			return string(r.b[start:j])
		case c == '\\':
			return r.slowString(start - 1)
		case c < 0x20:
			r.Fail()
			return ""
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	r.Fail()
	return ""
}

// slowString decodes the string literal at b[start] with encoding/json,
// which unescapes it and replaces invalid UTF-8.
func (r *Reader) slowString(start int) string {
	r.i = start
	end := r.skipString()
	if r.bad {
		return ""
	}
	var s string
	if json.Unmarshal(r.b[start:end], &s) != nil {
		r.Fail()
		return ""
	}
	return s
}

// StringTo reads a string into *s; null leaves *s as it is, as
// encoding/json does.
func (r *Reader) StringTo(s *string) {
	if !r.Null() {
		*s = r.String()
	}
}

// Bool reads true or false into *v; null leaves *v as it is.
func (r *Reader) Bool(v *bool) {
	switch r.Peek() {
	case 't':
		r.literal("true")
		*v = true
	case 'f':
		r.literal("false")
		*v = false
	case 'n':
		r.literal("null")
	default:
		r.Fail()
	}
}

// IntPtr reads an integer that fits an int into *v; null sets it to nil.
func (r *Reader) IntPtr(v **int) {
	if r.Null() {
		*v = nil
		return
	}
	lit := r.number()
	if r.bad {
		return
	}
	n, err := strconv.ParseInt(string(lit), 10, strconv.IntSize)
	if err != nil {
		r.Fail()
		return
	}
	x := int(n)
	*v = &x
}

// Strings reads an array of strings; null gives nil, and a null element
// the empty string.
func (r *Reader) Strings() []string {
	if r.Null() || !r.Open('[') {
		return nil
	}
	out := []string{}
	for n := 0; r.Next(']', &n); {
		var s string
		r.StringTo(&s)
		out = append(out, s)
	}
	return out
}

// Map reads an object into a map[string]any; null gives nil.
func (r *Reader) Map() map[string]any {
	if r.Null() || !r.Open('{') {
		return nil
	}
	return r.objectBody()
}

func (r *Reader) objectBody() map[string]any {
	m := map[string]any{}
	for n := 0; r.Next('}', &n); {
		k := r.String()
		r.space()
		if r.i >= len(r.b) || r.b[r.i] != ':' {
			r.Fail()
			return nil
		}
		r.i++
		m[k] = r.Any()
	}
	return m
}

// Any reads a value the way encoding/json fills an interface{}: objects as
// map[string]any, arrays as []any, numbers as float64.
func (r *Reader) Any() any {
	switch c := r.Peek(); {
	case c == '{':
		if !r.Open('{') {
			return nil
		}
		return r.objectBody()
	case c == '[':
		if !r.Open('[') {
			return nil
		}
		a := []any{}
		for n := 0; r.Next(']', &n); {
			a = append(a, r.Any())
		}
		return a
	case c == '"':
		return r.String()
	case c == 't':
		r.literal("true")
		return true
	case c == 'f':
		r.literal("false")
		return false
	case c == 'n':
		r.literal("null")
		return nil
	case c == '-' || '0' <= c && c <= '9':
		lit := r.number()
		if r.bad {
			return nil
		}
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil {
			r.Fail()
			return nil
		}
		return f
	}
	r.Fail()
	return nil
}

// Raw reads any value and returns its bytes, which alias the input.
func (r *Reader) Raw() []byte {
	r.space()
	start := r.i
	r.Skip()
	if r.bad {
		return nil
	}
	return r.b[start:r.i]
}

// Skip reads any value, checking it is valid JSON.
func (r *Reader) Skip() {
	switch c := r.Peek(); {
	case c == '{':
		if !r.Open('{') {
			return
		}
		for n := 0; r.Next('}', &n); {
			r.skipString()
			r.space()
			if r.i >= len(r.b) || r.b[r.i] != ':' {
				r.Fail()
				return
			}
			r.i++
			r.Skip()
		}
	case c == '[':
		if !r.Open('[') {
			return
		}
		for n := 0; r.Next(']', &n); {
			r.Skip()
		}
	case c == '"':
		r.skipString()
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		r.number()
	default:
		r.Fail()
	}
}

// skipString checks the string literal at r.i and moves past it,
// returning the index after it.
func (r *Reader) skipString() int {
	if r.bad || r.i >= len(r.b) || r.b[r.i] != '"' {
		r.Fail()
		return r.i
	}
	for j := r.i + 1; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			return r.i
		case c < 0x20:
			r.Fail()
			return r.i
		case c == '\\':
			j++
			if j >= len(r.b) {
				r.Fail()
				return r.i
			}
			switch r.b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(r.b) {
					r.Fail()
					return r.i
				}
				for _, h := range r.b[j+1 : j+5] {
					if !isHex(h) {
						r.Fail()
						return r.i
					}
				}
				j += 4
			default:
				r.Fail()
				return r.i
			}
		}
	}
	r.Fail()
	return r.i
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number checks a number literal at r.i, moves past it and returns it
// (aliasing the input).
func (r *Reader) number() []byte {
	b, i := r.b, r.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		r.Fail()
		return nil
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			r.Fail()
			return nil
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i] < '0' || b[i] > '9' {
			r.Fail()
			return nil
		}
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	}
	r.i = i
	return b[start:i]
}
