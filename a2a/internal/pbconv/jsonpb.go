package pbconv

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2amesh/a2amesh/internal/fastjson"
	"github.com/a2amesh/a2amesh/internal/pbwire"
)

// JSON straight to google.protobuf.Struct and Value bytes: what the direct
// encodings write for metadata holding Go values (a bridge's run
// metadata, any fastjson.Appender or struct) and for data parts, which
// StructToPB and valueToPB convert through their JSON form with protojson.
// The transcoder writes the message protojson reads from the same JSON, or
// declines (ok false), and the caller takes protojson's way: it takes only
// the JSON protojson surely reads as it does, valid UTF-8 with plain
// member names, each once per object, no escaped surrogates, finite
// numbers, nesting within fastjson's bound. FuzzJSONValue checks it
// against protojson.

// appendJSONStruct writes js, a JSON object, as a Struct's fields.
func appendJSONStruct(b, js []byte) ([]byte, bool) {
	if !utf8.Valid(js) {
		return b, false
	}
	r := fastjson.New(js)
	if !r.Open('{') {
		return b, false
	}
	b = appendJSONMembers(b, &r)
	return b, r.End()
}

// appendJSONValue writes js, any JSON value, as a Value.
func appendJSONValue(b, js []byte) ([]byte, bool) {
	if !utf8.Valid(js) {
		return b, false
	}
	r := fastjson.New(js)
	b = appendJSONValueOf(b, &r)
	return b, r.End()
}

// maxListedKeys is how many member names of an object are checked for
// repeats by comparing them one by one; beyond it, with a map.
const maxListedKeys = 16

// appendJSONMembers writes the members of the object r has opened, up to
// its closing brace, as Struct entries (map<string, Value> fields = 1).
func appendJSONMembers(b []byte, r *fastjson.Reader) []byte {
	var listed [maxListedKeys][]byte
	keys := listed[:0]
	var many map[string]struct{}
	for n := 0; r.Next('}', &n); {
		k := r.Key()
		if r.Failed() {
			return b
		}
		// protojson refuses a repeated name.
		if many == nil {
			for _, s := range keys {
				if bytes.Equal(s, k) {
					r.Fail()
					return b
				}
			}
			keys = append(keys, k)
			if len(keys) == maxListedKeys {
				many = make(map[string]struct{}, 2*maxListedKeys)
				for _, s := range keys {
					many[string(s)] = struct{}{}
				}
			}
		} else {
			if _, dup := many[string(k)]; dup {
				r.Fail()
				return b
			}
			many[string(k)] = struct{}{}
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		at := len(b)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, k)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		vat := len(b)
		b = pbwire.PrefixLength(appendJSONValueOf(b, r), vat)
		b = pbwire.PrefixLength(b, at)
	}
	return b
}

// appendJSONValueOf writes the next value of r as a Value's kind.
func appendJSONValueOf(b []byte, r *fastjson.Reader) []byte {
	switch r.Peek() {
	case '{':
		if !r.Open('{') {
			return b
		}
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		at := len(b)
		return pbwire.PrefixLength(appendJSONMembers(b, r), at)
	case '[':
		if !r.Open('[') {
			return b
		}
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		at := len(b)
		for n := 0; r.Next(']', &n); {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			eat := len(b)
			b = pbwire.PrefixLength(appendJSONValueOf(b, r), eat)
		}
		return pbwire.PrefixLength(b, at)
	}
	raw := r.Raw()
	if r.Failed() {
		return b
	}
	switch raw[0] {
	case 'n':
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		return protowire.AppendVarint(b, 0)
	case 't', 'f':
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		return protowire.AppendVarint(b, protowire.EncodeBool(raw[0] == 't'))
	case '"':
		s := raw[1 : len(raw)-1]
		if bytes.IndexByte(s, '\\') >= 0 {
			// An escaped surrogate is read otherwise by protojson
			// than by encoding/json when it stands alone.
			if bytes.Contains(s, []byte(`\ud`)) || bytes.Contains(s, []byte(`\uD`)) {
				r.Fail()
				return b
			}
			sr := fastjson.New(raw)
			str := sr.String()
			if sr.Failed() {
				r.Fail()
				return b
			}
			b = protowire.AppendTag(b, 3, protowire.BytesType)
			return protowire.AppendString(b, str)
		}
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		return protowire.AppendBytes(b, s)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		r.Fail()
		return b
	}
	b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(f))
}
