// Package pbwire writes Kitex-generated protobuf messages (the structs of
// proto/a2apb) in the protobuf binary format, as Kitex's own codec, prutal,
// does, except that a oneof member that is set is written even when it
// holds its zero value.
//
// prutal v0.1.3 leaves such a member out, so the receiver sees no member
// at all: an empty text part or an empty file arrives as a part without
// content (which a2a-go refuses, failing the whole response), and 0, false
// and "" inside a google.protobuf.Value (data parts, every metadata
// struct) arrive as null. Protobuf's presence rules say a set oneof member
// is always on the wire; this encoder follows them.
//
// The messages are read through their struct tags (protobuf:"bytes,5,rep"
// and protobuf_oneof), the way prutal reads them. A field whose type is a
// message of the official protobuf runtime is written as that runtime
// writes it: google.protobuf.Struct, Value, ListValue and Timestamp here,
// any other by the runtime itself. Decoding is left to prutal, which reads
// zero-valued members correctly.
package pbwire

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Encoder writes messages. Its zero value is ready to use; it is safe for
// concurrent use and remembers how each message type is laid out.
type Encoder struct {
	plans sync.Map // reflect.Type (a struct type) -> *plan
}

// Marshal appends the encoding of msg, a pointer to a generated message
// struct or a message of the official runtime, to b.
func (e *Encoder) Marshal(b []byte, msg any) ([]byte, error) {
	if m, ok := msg.(proto.Message); ok { // such as google.protobuf.Empty
		return appendWellKnown(b, m)
	}
	v := reflect.ValueOf(msg)
	if v.Kind() != reflect.Pointer || v.Type().Elem().Kind() != reflect.Struct {
		return b, fmt.Errorf("pbwire: %T is not a pointer to a message struct", msg)
	}
	if v.IsNil() {
		return b, nil
	}
	return e.appendMessage(b, v.Elem())
}

var protoMessage = reflect.TypeFor[proto.Message]()

// kind says how a field's Go type is written.
type kind uint8

const (
	kindVarint  kind = iota // int32, int64, uint32, uint64 and enums
	kindBool                // bool
	kindString              // string
	kindBytes               // []byte
	kindMessage             // *struct of a generated message
	kindProto               // a message of the official runtime
)

// field is one protobuf field of a struct.
type field struct {
	index int
	num   protowire.Number
	kind  kind
	// ptr: the Go type is a pointer to the scalar (proto3 optional), so
	// the field is present when the pointer is set, whatever its value.
	ptr bool
	// repeated: a slice of the kind (not []byte, which is kindBytes).
	repeated bool
	// mapKey and mapVal describe a map's entries (fields 1 and 2).
	mapKey, mapVal *field
	// oneof: an interface holding a pointer to a one-field wrapper
	// struct, whose field is always written.
	oneof bool
}

type plan struct{ fields []field }

func (e *Encoder) planOf(t reflect.Type) (*plan, error) {
	if p, ok := e.plans.Load(t); ok {
		return p.(*plan), nil
	}
	p := &plan{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if _, ok := sf.Tag.Lookup("protobuf_oneof"); ok {
			if sf.Type.Kind() != reflect.Interface {
				return nil, fmt.Errorf("pbwire: %s.%s: oneof field of type %s", t, sf.Name, sf.Type)
			}
			p.fields = append(p.fields, field{index: i, oneof: true})
			continue
		}
		tag, ok := sf.Tag.Lookup("protobuf")
		if !ok {
			continue // not a protobuf field
		}
		f, err := fieldOf(sf.Type, tag, sf.Tag)
		if err != nil {
			return nil, fmt.Errorf("pbwire: %s.%s: %w", t, sf.Name, err)
		}
		f.index = i
		p.fields = append(p.fields, f)
	}
	got, _ := e.plans.LoadOrStore(t, p)
	return got.(*plan), nil
}

// fieldOf reads a field's protobuf tag ("bytes,5,rep,name=parts") and Go
// type.
func fieldOf(t reflect.Type, tag string, all reflect.StructTag) (field, error) {
	parts := strings.Split(tag, ",")
	if len(parts) < 3 {
		return field{}, fmt.Errorf("protobuf tag %q", tag)
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return field{}, fmt.Errorf("protobuf tag %q: field number", tag)
	}
	f := field{num: protowire.Number(n)}
	if t.Kind() == reflect.Map {
		kt, vt := all.Get("protobuf_key"), all.Get("protobuf_val")
		key, err := fieldOf(t.Key(), kt, "")
		if err != nil {
			return field{}, fmt.Errorf("map key: %w", err)
		}
		val, err := fieldOf(t.Elem(), vt, "")
		if err != nil {
			return field{}, fmt.Errorf("map value: %w", err)
		}
		f.mapKey, f.mapVal = &key, &val
		return f, nil
	}
	if parts[2] == "rep" && t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8 {
		f.repeated = true
		t = t.Elem()
		if parts[0] == "varint" {
			return field{}, errors.New("packed repeated scalars are not supported")
		}
	}
	if t.Kind() == reflect.Pointer && t.Elem().Kind() != reflect.Struct {
		f.ptr = true
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Pointer && t.Implements(protoMessage):
		f.kind = kindProto
	case t.Kind() == reflect.Pointer:
		f.kind = kindMessage
	case t.Kind() == reflect.Bool:
		f.kind = kindBool
	case t.Kind() == reflect.String:
		f.kind = kindString
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		f.kind = kindBytes
	case t.Kind() >= reflect.Int32 && t.Kind() <= reflect.Int64 || t.Kind() == reflect.Uint32 || t.Kind() == reflect.Uint64:
		f.kind = kindVarint
	default:
		return field{}, fmt.Errorf("unsupported type %s", t)
	}
	return f, nil
}

func (e *Encoder) appendMessage(b []byte, v reflect.Value) ([]byte, error) {
	p, err := e.planOf(v.Type())
	if err != nil {
		return b, err
	}
	for i := range p.fields {
		f := &p.fields[i]
		fv := v.Field(f.index)
		switch {
		case f.oneof:
			if fv.IsNil() {
				continue
			}
			w := fv.Elem() // *Wrapper
			if w.Kind() != reflect.Pointer || w.IsNil() {
				continue
			}
			wp, err := e.planOf(w.Type().Elem())
			if err != nil {
				return b, err
			}
			if len(wp.fields) != 1 {
				return b, fmt.Errorf("pbwire: oneof member %s has %d fields, want 1", w.Type(), len(wp.fields))
			}
			m := &wp.fields[0]
			if b, err = e.appendValue(b, m, w.Elem().Field(m.index), true); err != nil {
				return b, err
			}
		case f.mapKey != nil:
			for iter := fv.MapRange(); iter.Next(); {
				b = protowire.AppendTag(b, f.num, protowire.BytesType)
				at := len(b)
				if b, err = e.appendValue(b, f.mapKey, iter.Key(), true); err != nil {
					return b, err
				}
				if b, err = e.appendValue(b, f.mapVal, iter.Value(), true); err != nil {
					return b, err
				}
				b = PrefixLength(b, at)
			}
		case f.repeated:
			for j := range fv.Len() {
				if b, err = e.appendValue(b, f, fv.Index(j), true); err != nil {
					return b, err
				}
			}
		default:
			if b, err = e.appendValue(b, f, fv, false); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// appendValue writes one value of field f. always writes a scalar that
// holds its zero value (a oneof member, an element of a list or map); a
// message is written whenever it is set.
func (e *Encoder) appendValue(b []byte, f *field, v reflect.Value, always bool) ([]byte, error) {
	if f.ptr {
		if v.IsNil() {
			return b, nil
		}
		v, always = v.Elem(), true
	}
	switch f.kind {
	case kindVarint:
		var n uint64
		if v.CanInt() {
			n = uint64(v.Int()) // negative int32s take ten bytes, as protobuf wants
		} else {
			n = v.Uint()
		}
		if n != 0 || always {
			b = protowire.AppendTag(b, f.num, protowire.VarintType)
			b = protowire.AppendVarint(b, n)
		}
	case kindBool:
		if v.Bool() || always {
			b = protowire.AppendTag(b, f.num, protowire.VarintType)
			b = protowire.AppendVarint(b, protowire.EncodeBool(v.Bool()))
		}
	case kindString:
		if v.Len() > 0 || always {
			b = protowire.AppendTag(b, f.num, protowire.BytesType)
			b = protowire.AppendString(b, v.String())
		}
	case kindBytes:
		if v.Len() > 0 || always {
			b = protowire.AppendTag(b, f.num, protowire.BytesType)
			b = protowire.AppendBytes(b, v.Bytes())
		}
	case kindMessage:
		if v.IsNil() && !always {
			return b, nil
		}
		b = protowire.AppendTag(b, f.num, protowire.BytesType)
		at := len(b)
		if !v.IsNil() {
			var err error
			if b, err = e.appendMessage(b, v.Elem()); err != nil {
				return b, err
			}
		}
		b = PrefixLength(b, at)
	case kindProto:
		if v.IsNil() && !always {
			return b, nil
		}
		b = protowire.AppendTag(b, f.num, protowire.BytesType)
		at := len(b)
		if !v.IsNil() {
			var err error
			if b, err = appendWellKnown(b, v.Interface().(proto.Message)); err != nil {
				return b, fmt.Errorf("pbwire: %s: %w", v.Type(), err)
			}
		}
		b = PrefixLength(b, at)
	}
	return b, nil
}

// appendWellKnown writes a message of the official runtime. The ones
// every A2A message carries (Struct and Value in metadata and data parts,
// Timestamp in statuses) are written here, as the official runtime does
// but several times faster; the others by that runtime.
func appendWellKnown(b []byte, m proto.Message) ([]byte, error) {
	switch m := m.(type) {
	case *structpb.Struct:
		return appendStruct(b, m), nil
	case *structpb.Value:
		return appendStructValue(b, m), nil
	case *structpb.ListValue:
		return appendList(b, m), nil
	case *timestamppb.Timestamp:
		if m.Seconds != 0 {
			b = protowire.AppendTag(b, 1, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(m.Seconds))
		}
		if m.Nanos != 0 {
			b = protowire.AppendTag(b, 2, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(int64(m.Nanos)))
		}
		return b, nil
	}
	return proto.MarshalOptions{}.MarshalAppend(b, m)
}

// appendStruct writes a google.protobuf.Struct: map<string, Value> fields = 1.
func appendStruct(b []byte, s *structpb.Struct) []byte {
	for k, v := range s.Fields {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		at := len(b)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		vat := len(b)
		b = PrefixLength(appendStructValue(b, v), vat)
		b = PrefixLength(b, at)
	}
	return b
}

// appendList writes a google.protobuf.ListValue: repeated Value values = 1.
func appendList(b []byte, l *structpb.ListValue) []byte {
	for _, v := range l.Values {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		at := len(b)
		b = PrefixLength(appendStructValue(b, v), at)
	}
	return b
}

// appendStructValue writes a google.protobuf.Value, whose kind is a oneof:
// the member is written whatever it holds, 0, false and "" included.
func appendStructValue(b []byte, v *structpb.Value) []byte {
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(k.NullValue))
	case *structpb.Value_NumberValue:
		b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(k.NumberValue))
	case *structpb.Value_StringValue:
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, k.StringValue)
	case *structpb.Value_BoolValue:
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(k.BoolValue))
	case *structpb.Value_StructValue:
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		at := len(b)
		if k.StructValue != nil {
			b = appendStruct(b, k.StructValue)
		}
		b = PrefixLength(b, at)
	case *structpb.Value_ListValue:
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		at := len(b)
		if k.ListValue != nil {
			b = appendList(b, k.ListValue)
		}
		b = PrefixLength(b, at)
	}
	return b
}

// PrefixLength puts before b[at:], a message just written, its length as
// a varint, moving the message up by the length's size (one byte for a
// message under 128 bytes, the common case): how a nested message whose
// size is not known before it is written gets its length prefix.
func PrefixLength(b []byte, at int) []byte {
	n := len(b) - at
	size := protowire.SizeVarint(uint64(n))
	b = append(b, make([]byte, size)...)
	copy(b[at+size:], b[at:at+n])
	protowire.AppendVarint(b[at:at], uint64(n))
	return b
}

// Outgoing is a message on its way out through Kitex's gRPC codec, which
// writes a message by calling its Marshal: Enc writes Msg, where the
// generated code would write it with prutal.
type Outgoing struct {
	Enc *Encoder
	Msg any
}

// Marshal appends the encoding of m.Msg to b.
func (m Outgoing) Marshal(b []byte) ([]byte, error) { return m.Enc.Marshal(b, m.Msg) }

// Unmarshal is never called: an outgoing message is only sent.
func (m Outgoing) Unmarshal([]byte) error {
	return errors.New("pbwire: an outgoing message cannot be decoded into")
}

// GetFirstArgument is the message, as Kitex's generated arguments give
// their request.
func (m Outgoing) GetFirstArgument() any { return m.Msg }

// Encoded is a message already in the protobuf binary format, on its way
// out through Kitex's gRPC codec as Outgoing is. Kitex copies it within
// SendMsg (or Call), so the bytes may be reused once that returns.
type Encoded []byte

// Size and MarshalTo have Kitex's codec copy the message into the frame
// it allocates from its buffer pool, with the gRPC message prefix, rather
// than take a copy from Marshal and allocate the prefix apart.

// Size is the message's length.
func (m Encoded) Size() int { return len(m) }

// MarshalTo copies the message to b, which has room for it.
func (m Encoded) MarshalTo(b []byte) (int, error) { return copy(b, m), nil }

// Marshal appends the message to b.
func (m Encoded) Marshal(b []byte) ([]byte, error) { return append(b, m...), nil }

// Unmarshal is never called: an outgoing message is only sent.
func (Encoded) Unmarshal([]byte) error {
	return errors.New("pbwire: an outgoing message cannot be decoded into")
}

// GetFirstArgument is the message, as Outgoing's.
func (m Encoded) GetFirstArgument() any { return m }

// Buffers lends buffers to write Encoded messages into: Kitex copies a
// message as it sends it, so its buffer can be given back once SendMsg
// (or Call) returns. Its zero value is ready to use; it is safe for
// concurrent use.
type Buffers struct{ pool sync.Pool }

// maxKept is the largest buffer Put keeps: a rare large message should
// not stay allocated for the small ones.
const maxKept = 64 << 10

// Get returns an empty buffer.
func (p *Buffers) Get() *[]byte {
	if b, ok := p.pool.Get().(*[]byte); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]byte, 0, 1024)
	return &b
}

// Put gives b back, to be lent again.
func (p *Buffers) Put(b *[]byte) {
	if cap(*b) <= maxKept {
		p.pool.Put(b)
	}
}
