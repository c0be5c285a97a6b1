//go:build !a2amesh_stdjson && !a2amesh_sonicjson

package fastjson

import "encoding/json"

// Enabled reports whether the hand-written fast paths run. The build tags
// a2amesh_stdjson and a2amesh_sonicjson turn them off, routing every value
// they handle through encoding/json or github.com/bytedance/sonic, so that
// benchmarks can measure what they save (docs/benchmarks.md); no release
// is built so.
const Enabled = true

// Codec names the codec of the build: "fastjson", "encoding/json" or
// "sonic".
const Codec = "fastjson"

// Marshal appends v as the build's codec encodes it, HTML escaping off:
// encoding/json unless the build is tagged a2amesh_sonicjson.
func Marshal(dst []byte, v any) ([]byte, error) { return AppendReflect(dst, v) }

// Unmarshal decodes data into v with the build's codec: encoding/json
// unless the build is tagged a2amesh_sonicjson.
func Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
