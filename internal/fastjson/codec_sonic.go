//go:build a2amesh_sonicjson

package fastjson

import (
	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// Enabled is false: this build routes the fast paths through sonic.
const Enabled = false

// Codec names the codec of the build.
const Codec = "sonic"

// sonicEncoding is sonic's encoding/json-compatible encoding (sorted map
// keys, invalid UTF-8 replaced, a json.Marshaler's output such as a
// json.RawMessage checked and compacted) without HTML escaping, as the
// fast paths write.
const sonicEncoding = encoder.SortMapKeys | encoder.ValidateString

// sonicDecoding is sonic.ConfigStd's decoding: strings copied out of the
// input, which the caller may reuse, and checked for control characters.
var sonicDecoding = sonic.Config{CopyString: true, ValidateString: true}.Froze()

// Marshal appends v as sonic encodes it.
func Marshal(dst []byte, v any) ([]byte, error) {
	n := len(dst)
	if err := encoder.EncodeInto(&dst, v, sonicEncoding); err != nil {
		return dst[:n], err
	}
	return dst, nil
}

// Unmarshal decodes data into v with sonic.
func Unmarshal(data []byte, v any) error { return sonicDecoding.Unmarshal(data, v) }
