package pbwire

import "google.golang.org/protobuf/encoding/protowire"

// Field writers for the encoders that write messages by hand rather than
// through an Encoder (pbconv's direct encodings, telemetry/otlp's spans).
// As proto3 has it, a scalar field holding its type's default is not
// written.

// AppendString appends field num holding s, unless s is empty.
func AppendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

// AppendVarint appends field num holding v as a varint, unless v is 0.
func AppendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// AppendBool appends field num holding true; false is not written.
func AppendBool(b []byte, num protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}
