package main

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// safe returns s fit for a terminal: what a terminal would act on rather
// than show is written as a Go escape instead (ESC as \x1b, carriage return
// as \r, U+202E as \u202e). That is every control character but newline
// and tab (C0, DEL, C1), the bidirectional formatting characters (which
// reorder what is shown), and bytes that are not UTF-8. Text from agents
// and other users goes through it before it is printed: an escape sequence
// could otherwise clear the screen, retitle the window, rewrite lines
// already printed (CR, backspace, cursor moves), or on some terminals type
// into the prompt.
func safe(s string) string { return escape(s, true) }

// safeLine is safe with newlines and tabs escaped too, for what must stay
// on its line or in its table cell: ids, names, states, errors.
func safeLine(s string) string { return escape(s, false) }

func escape(s string, keepLines bool) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, size, keepLines) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case unsafeRune(r, size, keepLines):
			q := strconv.QuoteRune(r) // '\x1b', '\r', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func unsafeRune(r rune, size int, keepLines bool) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r == '\n' || r == '\t':
		return !keepLines
	case unicode.IsControl(r):
		return true
	}
	return bidi(r)
}

// bidi reports whether r is a bidirectional formatting character: marks,
// embeddings, overrides and isolates.
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
