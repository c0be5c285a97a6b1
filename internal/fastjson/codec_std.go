//go:build a2amesh_stdjson && !a2amesh_sonicjson

package fastjson

import "encoding/json"

// Enabled is false: this build routes the fast paths through
// encoding/json.
const Enabled = false

// Codec names the codec of the build.
const Codec = "encoding/json"

// Marshal appends v as encoding/json encodes it, HTML escaping off.
func Marshal(dst []byte, v any) ([]byte, error) { return AppendReflect(dst, v) }

// Unmarshal decodes data into v with encoding/json.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
