package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
)

// ProtoFieldNames returns 1.0 params with each top-level member named as
// the proto field (task_id) renamed to its JSON name (taskId). A2A 1.0's
// JSON is ProtoJSON (specification section 5.5), whose parsers accept both
// names; senders must use the JSON name, but some (the A2A TCK's JSON-RPC
// client) send the proto one. Only the top level is renamed: below it are
// messages whose members clients name as the specification does, and maps
// (metadata) whose keys are the caller's own. A member named both ways is
// a duplicate, an invalid-params error as in ProtoJSON. Params without a
// top-level snake_case name are returned as they are, without allocating.
func ProtoFieldNames(params json.RawMessage) (json.RawMessage, *a2a.Error) {
	if bytes.IndexByte(params, '_') < 0 {
		return params, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(params, &members) != nil {
		return params, nil // not an object: decoding reports it
	}
	renamed := false
	for k := range members {
		if protoName(k) {
			renamed = true
			break
		}
	}
	if !renamed {
		return params, nil
	}
	out := make(map[string]json.RawMessage, len(members))
	for k, v := range members {
		if protoName(k) {
			k = lowerCamel(k)
			if _, dup := members[k]; dup {
				return nil, a2a.Errorf(a2a.CodeInvalidParams, "params: %s and %s name the same field; send one (%s)", snake(k), k, k)
			}
		}
		out[k] = v
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, a2a.Errorf(a2a.CodeInvalidParams, "params: %v", err)
	}
	return b, nil
}

// protoName reports whether k is a proto field name that differs from its
// JSON name: lower case letters and digits with an inner underscore.
func protoName(k string) bool {
	if k == "" || k[0] == '_' || k[len(k)-1] == '_' || !strings.Contains(k, "_") {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// lowerCamel is protoc's JSON name of a field: each letter after an
// underscore upper-cased, the underscores dropped.
func lowerCamel(k string) string {
	var b strings.Builder
	b.Grow(len(k))
	up := false
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c == '_' {
			up = true
			continue
		}
		if up && c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = false
		b.WriteByte(c)
	}
	return b.String()
}

// snake is the inverse of lowerCamel for the names protoName accepts, for
// error messages.
func snake(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}
