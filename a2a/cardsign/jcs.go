package cardsign

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrNotIJSON means a text is not JSON that RFC 8785 can canonicalize: it
// is not JSON, or it is JSON outside the I-JSON subset (RFC 7493) that the
// scheme requires.
var ErrNotIJSON = errors.New("not I-JSON")

// maxDepth bounds the nesting of arrays and objects, as encoding/json's
// does, so that hostile input cannot exhaust the stack.
const maxDepth = 10000

// Canonicalize returns the RFC 8785 (JCS) canonical form of the JSON text
// data: no insignificant whitespace, object members sorted by their names'
// UTF-16 code units, numbers written as ECMAScript writes an IEEE 754
// double, strings with only the escapes ECMAScript's JSON.stringify uses.
// Equal JSON values, however they are spelled and ordered, have the same
// canonical form, byte for byte.
//
// The scheme is defined for I-JSON only, so Canonicalize refuses, with an
// error wrapping ErrNotIJSON, what it could not write back faithfully:
// malformed JSON, duplicate member names, strings that are not valid
// Unicode (invalid UTF-8, unpaired surrogate escapes) and numbers outside
// the range of a double. It accepts noncharacters such as U+FFFF, which
// I-JSON discourages but which have one UTF-8 form and so one canonical
// form. Numbers are doubles: integers beyond 2^53 are rounded, as every
// JCS implementation rounds them.
func Canonicalize(data []byte) ([]byte, error) {
	v, err := parseJSON(data)
	if err != nil {
		return nil, err
	}
	return appendCanonical(nil, v), nil
}

// parseJSON decodes an I-JSON text into nil, bool, float64, string, []any
// and map[string]any values.
func parseJSON(data []byte) (any, error) {
	p := parser{data: data}
	p.skipSpace()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.errorf("data after the top-level value")
	}
	return v, nil
}

type parser struct {
	data []byte
	pos  int
}

func (p *parser) errorf(format string, args ...any) error {
	return fmt.Errorf("jcs: offset %d: %s: %w", p.pos, fmt.Sprintf(format, args...), ErrNotIJSON)
}

// skipSpace skips the four whitespace bytes RFC 8259 allows.
func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos == len(p.data) {
		return nil, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		if depth == maxDepth {
			return nil, p.errorf("nested deeper than %d", maxDepth)
		}
		return p.object(depth + 1)
	case c == '[':
		if depth == maxDepth {
			return nil, p.errorf("nested deeper than %d", maxDepth)
		}
		return p.array(depth + 1)
	case c == '"':
		return p.string()
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	case p.literal("true"):
		return true, nil
	case p.literal("false"):
		return false, nil
	case p.literal("null"):
		return nil, nil
	default:
		return nil, p.errorf("unexpected %q", c)
	}
}

func (p *parser) literal(word string) bool {
	if bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		p.pos += len(word)
		return true
	}
	return false
}

func (p *parser) object(depth int) (any, error) {
	p.pos++ // '{'
	obj := map[string]any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj, nil
	}
	for {
		p.skipSpace()
		if p.pos == len(p.data) || p.data[p.pos] != '"' {
			return nil, p.errorf("want a member name")
		}
		at := p.pos
		name, err := p.string()
		if err != nil {
			return nil, err
		}
		if _, dup := obj[name]; dup {
			p.pos = at
			return nil, p.errorf("duplicate member name %q", name)
		}
		p.skipSpace()
		if p.pos == len(p.data) || p.data[p.pos] != ':' {
			return nil, p.errorf("want ':' after a member name")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		obj[name] = v
		p.skipSpace()
		if p.pos == len(p.data) {
			return nil, p.errorf("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			return obj, nil
		default:
			return nil, p.errorf("want ',' or '}' in an object")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.pos++ // '['
	arr := []any{}
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return arr, nil
	}
	for {
		p.skipSpace()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.skipSpace()
		if p.pos == len(p.data) {
			return nil, p.errorf("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return arr, nil
		default:
			return nil, p.errorf("want ',' or ']' in an array")
		}
	}
}

// string reads a string, checking that it is valid Unicode: UTF-8 bytes
// that decode, and surrogate escapes only in pairs.
func (p *parser) string() (string, error) {
	p.pos++ // '"'
	var b strings.Builder
	for {
		start := p.pos
		for p.pos < len(p.data) {
			c := p.data[p.pos]
			if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
				break
			}
			p.pos++
		}
		b.Write(p.data[start:p.pos])
		if p.pos == len(p.data) {
			return "", p.errorf("unterminated string")
		}
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.errorf("control character %#02x in a string", c)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errorf("invalid UTF-8 in a string")
			}
			b.Write(p.data[p.pos : p.pos+size])
			p.pos += size
		default: // '\\'
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
		}
	}
}

// escape reads one escape sequence, a surrogate pair being one.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.errorf("unterminated escape")
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := p.hex4()
		if err != nil {
			return 0, err
		}
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return 0, p.errorf(`unpaired surrogate \u%04x`, r)
		case 0xD800 <= r && r <= 0xDBFF:
			if !bytes.HasPrefix(p.data[p.pos:], []byte(`\u`)) {
				return 0, p.errorf(`unpaired surrogate \u%04x`, r)
			}
			p.pos += 2
			lo, err := p.hex4()
			if err != nil {
				return 0, err
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return 0, p.errorf(`unpaired surrogate \u%04x`, r)
			}
			return utf16.DecodeRune(r, lo), nil
		}
		return r, nil
	default:
		p.pos -= 2
		return 0, p.errorf("invalid escape \\%c", c)
	}
}

func (p *parser) hex4() (rune, error) {
	if p.pos+4 > len(p.data) {
		return 0, p.errorf(`truncated \u escape`)
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		r <<= 4
		switch {
		case '0' <= c && c <= '9':
			r |= rune(c - '0')
		case 'a' <= c && c <= 'f':
			r |= rune(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, p.errorf(`invalid \u escape`)
		}
	}
	p.pos += 4
	return r, nil
}

// number reads a number as RFC 8259 spells it into the double nearest to
// it.
func (p *parser) number() (any, error) {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.digits() == 0:
		return nil, p.errorf("malformed number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return nil, p.errorf("malformed number")
		}
	}
	text := string(p.data[start:p.pos])
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		p.pos = start
		return nil, p.errorf("number %s is outside the range of a double", text)
	}
	return f, nil
}

func (p *parser) digits() int {
	n := 0
	for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}

// appendCanonical appends the canonical form of v, a value as parseJSON
// returns them (numbers finite).
func appendCanonical(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		return strconv.AppendBool(dst, x)
	case float64:
		return appendNumber(dst, x)
	case string:
		return appendString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, e)
		}
		return append(dst, ']')
	case map[string]any:
		names := make([]string, 0, len(x))
		for name := range x {
			names = append(names, name)
		}
		slices.SortFunc(names, compareUTF16)
		dst = append(dst, '{')
		for i, name := range names {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, name)
			dst = append(dst, ':')
			dst = appendCanonical(dst, x[name])
		}
		return append(dst, '}')
	}
	panic(fmt.Sprintf("cardsign: appendCanonical of %T", v))
}

// compareUTF16 orders valid UTF-8 strings as their UTF-16 code units
// order, which RFC 8785 sorts member names by. It differs from the order
// of code points only where a character beyond U+FFFF (a surrogate pair,
// D800-DFFF) meets one in U+E000-U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			ua, ub := firstUnit(ra), firstUnit(rb)
			if ua != ub {
				return int(ua) - int(ub)
			}
			return int(ra) - int(rb) // both pairs, same high surrogate
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	hi, _ := utf16.EncodeRune(r)
	return hi
}

// appendString writes s as ECMAScript's JSON.stringify does: quotation
// mark and reverse solidus escaped, the five control characters that have
// a short escape with it, the other controls as \u00xx in lower case, and
// everything else as itself.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendNumber writes a finite double as ECMAScript's Number::toString
// does: the shortest decimal digits that read back as f (strconv finds
// the same ones), placed by the decimal exponent n of the first digit —
// plain digits up to 21 integer digits, 0.000ddd down to n = -5, and
// exponent notation beyond.
func appendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // -0 as well
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var buf [32]byte
	mant, exp, _ := bytes.Cut(strconv.AppendFloat(buf[:0], f, 'e', -1, 64), []byte("e"))
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	e, _ := strconv.Atoi(string(exp))
	n, k := e+1, len(digits) // f = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		for range n - k {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for range -n {
			dst = append(dst, '0')
		}
		dst = append(dst, digits...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}
