package pbconv

import (
	"encoding/json"
	"fmt"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/fastjson"
	"github.com/a2amesh/a2amesh/internal/pbwire"
)

// The direct encoding: what the server sends most (stream items and
// SendMessage's answer) and the client's requests of SendMessage and
// SendStreamingMessage, written from the a2a model straight to the
// protobuf binary format, without building the a2apb messages first. It
// writes what internal/pbwire writes for the converted message
// (EventToPB, SendResponseToPB, SendRequestToPB): the same fields in the
// same order, set oneof members written even when they hold their zero
// value; only the entries of a Struct (metadata), a map, may come in
// another order, as from pbwire itself from one call to the next.
//
// Metadata of the types JSON decoding yields (nil, bool, float64, string,
// []any, map[string]any, valid UTF-8) and ints is written directly;
// metadata holding other Go values, and data parts (raw JSON), through
// their JSON form by appendJSONStruct and appendJSONValue, which write
// what StructToPB and valueToPB make of it (protojson's reading) or leave
// it to them.

// AppendEvent appends the encoding of ev as a StreamResponse, the bytes
// pbwire writes for EventToPB(ev).
func AppendEvent(b []byte, ev a2a.Event) ([]byte, error) {
	var err error
	switch e := ev.(type) {
	case *a2a.Task:
		b, err = appendField(b, 1, e, appendTask)
	case *a2a.Message:
		b, err = appendField(b, 2, e, appendMessage)
	case *a2a.TaskStatusUpdateEvent:
		b, err = appendField(b, 3, e, appendStatusUpdate)
	case *a2a.TaskArtifactUpdateEvent:
		b, err = appendField(b, 4, e, appendArtifactUpdate)
	default:
		return b, fmt.Errorf("event of type %T has no wire form", ev)
	}
	return b, err
}

// AppendSendResponse appends the encoding of SendMessage's result as a
// SendMessageResponse, the bytes pbwire writes for SendResponseToPB(ev).
func AppendSendResponse(b []byte, ev a2a.Event) ([]byte, error) {
	switch e := ev.(type) {
	case *a2a.Task:
		return appendField(b, 1, e, appendTask)
	case *a2a.Message:
		return appendField(b, 2, e, appendMessage)
	}
	return b, fmt.Errorf("SendMessage result of type %T is neither a task nor a message", ev)
}

// AppendSendRequest appends the encoding of SendMessage's and
// SendStreamingMessage's request, the bytes pbwire writes for
// SendRequestToPB(r).
func AppendSendRequest(b []byte, r *a2a.SendMessageRequest) ([]byte, error) {
	b = pbwire.AppendString(b, 1, r.Tenant)
	if r.Message != nil {
		var err error
		if b, err = appendField(b, 2, r.Message, appendMessage); err != nil {
			return b, fmt.Errorf("message.%w", err)
		}
	}
	if c := r.Configuration; c != nil {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		at := len(b)
		b = appendStrings(b, 1, c.AcceptedOutputModes)
		if p := c.TaskPushNotificationConfig; p != nil {
			b = protowire.AppendTag(b, 2, protowire.BytesType)
			pat := len(b)
			b = appendPushConfig(b, p)
			b = pbwire.PrefixLength(b, pat)
		}
		if c.HistoryLength != nil { // optional: written when set, 0 too
			b = protowire.AppendTag(b, 3, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(int64(clamp32(*c.HistoryLength))))
		}
		b = pbwire.AppendBool(b, 4, c.ReturnImmediately)
		if g := c.IfGenerationMatch; g != nil { // optional: written when set, 0 too
			b = protowire.AppendTag(b, 5, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(*g))
		}
		b = pbwire.PrefixLength(b, at)
	}
	return appendMetadata(b, 4, r.Metadata)
}

func appendPushConfig(b []byte, c *a2a.TaskPushNotificationConfig) []byte {
	b = pbwire.AppendString(b, 1, c.Tenant)
	b = pbwire.AppendString(b, 2, c.ID)
	b = pbwire.AppendString(b, 3, c.TaskID)
	b = pbwire.AppendString(b, 4, c.URL)
	b = pbwire.AppendString(b, 5, c.Token)
	if a := c.Authentication; a != nil {
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		at := len(b)
		b = pbwire.AppendString(b, 1, a.Scheme)
		b = pbwire.AppendString(b, 2, a.Credentials)
		b = pbwire.PrefixLength(b, at)
	}
	return b
}

// appendField writes the message v as field num, even empty; a nil v as
// an empty message, as pbwire writes a set oneof member holding nil.
func appendField[T any](b []byte, num protowire.Number, v *T, body func([]byte, *T) ([]byte, error)) ([]byte, error) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	if v != nil {
		var err error
		if b, err = body(b, v); err != nil {
			return b, err
		}
	}
	return pbwire.PrefixLength(b, at), nil
}

func appendStrings(b []byte, num protowire.Number, ss []string) []byte {
	for _, s := range ss {
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b
}

func appendTask(b []byte, t *a2a.Task) ([]byte, error) {
	b = pbwire.AppendString(b, 1, t.ID)
	b = pbwire.AppendString(b, 2, t.ContextID)
	b, err := appendField(b, 3, &t.Status, appendStatus)
	if err != nil {
		return b, fmt.Errorf("status.%w", err)
	}
	for i := range t.Artifacts {
		if b, err = appendField(b, 4, &t.Artifacts[i], appendArtifact); err != nil {
			return b, fmt.Errorf("artifacts[%d].%w", i, err)
		}
	}
	for i := range t.History {
		if b, err = appendField(b, 5, &t.History[i], appendMessage); err != nil {
			return b, fmt.Errorf("history[%d].%w", i, err)
		}
	}
	if b, err = appendMetadata(b, 6, t.Metadata); err != nil {
		return b, err
	}
	return pbwire.AppendVarint(b, 7, uint64(t.Generation)), nil
}

func appendStatus(b []byte, s *a2a.TaskStatus) ([]byte, error) {
	b = pbwire.AppendVarint(b, 1, uint64(stateToPB(s.State)))
	if s.Message != nil {
		var err error
		if b, err = appendField(b, 2, s.Message, appendMessage); err != nil {
			return b, fmt.Errorf("message.%w", err)
		}
	}
	if !s.Timestamp.IsZero() { // as timestamppb.New
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		at := len(b)
		b = pbwire.AppendVarint(b, 1, uint64(s.Timestamp.Unix()))
		b = pbwire.AppendVarint(b, 2, uint64(int64(int32(s.Timestamp.Nanosecond()))))
		b = pbwire.PrefixLength(b, at)
	}
	return b, nil
}

func appendMessage(b []byte, m *a2a.Message) ([]byte, error) {
	b = pbwire.AppendString(b, 1, m.MessageID)
	b = pbwire.AppendString(b, 2, m.ContextID)
	b = pbwire.AppendString(b, 3, m.TaskID)
	b = pbwire.AppendVarint(b, 4, uint64(roleToPB(m.Role)))
	var err error
	for i := range m.Parts {
		if b, err = appendField(b, 5, &m.Parts[i], appendPart); err != nil {
			return b, fmt.Errorf("parts[%d]: %w", i, err)
		}
	}
	if b, err = appendMetadata(b, 6, m.Metadata); err != nil {
		return b, err
	}
	b = appendStrings(b, 7, m.Extensions)
	return appendStrings(b, 8, m.ReferenceTaskIDs), nil
}

func appendPart(b []byte, p *a2a.Part) ([]byte, error) {
	switch p.Kind() {
	case a2a.PartKindRaw:
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, p.Raw)
	case a2a.PartKindURL:
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, p.URL)
	case a2a.PartKindData:
		b = protowire.AppendTag(b, 4, protowire.BytesType)
		at := len(b)
		if direct, ok := appendJSONValue(b, p.Data); ok {
			b = direct
		} else {
			v, err := valueToPB(p.Data)
			if err != nil {
				return b[:at], err
			}
			var enc pbwire.Encoder // a Value is written without a plan
			if b, err = enc.Marshal(b[:at], v); err != nil {
				return b, err
			}
		}
		b = pbwire.PrefixLength(b, at)
	default:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, p.Text)
	}
	b, err := appendMetadata(b, 5, p.Metadata)
	if err != nil {
		return b, err
	}
	b = pbwire.AppendString(b, 6, p.Filename)
	return pbwire.AppendString(b, 7, p.MediaType), nil
}

func appendArtifact(b []byte, a *a2a.Artifact) ([]byte, error) {
	b = pbwire.AppendString(b, 1, a.ArtifactID)
	b = pbwire.AppendString(b, 2, a.Name)
	b = pbwire.AppendString(b, 3, a.Description)
	var err error
	for i := range a.Parts {
		if b, err = appendField(b, 4, &a.Parts[i], appendPart); err != nil {
			return b, fmt.Errorf("parts[%d]: %w", i, err)
		}
	}
	if b, err = appendMetadata(b, 5, a.Metadata); err != nil {
		return b, err
	}
	return appendStrings(b, 6, a.Extensions), nil
}

func appendStatusUpdate(b []byte, e *a2a.TaskStatusUpdateEvent) ([]byte, error) {
	b = pbwire.AppendString(b, 1, e.TaskID)
	b = pbwire.AppendString(b, 2, e.ContextID)
	b, err := appendField(b, 3, &e.Status, appendStatus)
	if err != nil {
		return b, fmt.Errorf("status.%w", err)
	}
	if b, err = appendMetadata(b, 4, e.Metadata); err != nil {
		return b, err
	}
	return pbwire.AppendVarint(b, 5, uint64(e.Generation)), nil
}

func appendArtifactUpdate(b []byte, e *a2a.TaskArtifactUpdateEvent) ([]byte, error) {
	b = pbwire.AppendString(b, 1, e.TaskID)
	b = pbwire.AppendString(b, 2, e.ContextID)
	b, err := appendField(b, 3, &e.Artifact, appendArtifact)
	if err != nil {
		return b, fmt.Errorf("artifact.%w", err)
	}
	b = pbwire.AppendBool(b, 4, e.Append)
	b = pbwire.AppendBool(b, 5, e.LastChunk)
	if b, err = appendMetadata(b, 6, e.Metadata); err != nil {
		return b, err
	}
	return pbwire.AppendVarint(b, 7, uint64(e.Generation)), nil
}

// appendMetadata writes m as a google.protobuf.Struct field; nothing for
// a nil map, an empty Struct for an empty one. StructToPB converts a map
// whose values structpb.NewStruct knows as it does, and any other through
// its JSON form: so does the direct encoding, writing the values JSON
// decoding yields directly and the JSON form of the others (a fastjson
// Appender writes its own) through appendJSONStruct.
func appendMetadata(b []byte, num protowire.Number, m map[string]any) ([]byte, error) {
	if m == nil {
		return b, nil
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	at := len(b)
	switch {
	case plainMap(m):
		b = appendStruct(b, m)
	case !newStructTakes(m):
		// Room for a bridge's event metadata without growing.
		if js, err := fastjson.AppendAny(make([]byte, 0, 512), m); err == nil {
			if direct, ok := appendJSONStruct(b, js); ok {
				b = direct
				break
			}
		}
		fallthrough
	default:
		s, err := StructToPB(m)
		if err != nil {
			return b[:at], err
		}
		var enc pbwire.Encoder
		if b, err = enc.Marshal(b[:at], s); err != nil {
			return b, err
		}
	}
	return pbwire.PrefixLength(b, at), nil
}

// plainMap reports whether m holds only what appendStruct writes as
// structpb.NewStruct converts it.
func plainMap(m map[string]any) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !plainValue(v) {
			return false
		}
	}
	return true
}

func plainValue(v any) bool {
	switch v := v.(type) {
	case nil, bool, float64, int:
		return true
	case string:
		return utf8.ValidString(v)
	case map[string]any:
		return plainMap(v)
	case []any:
		for _, e := range v {
			if !plainValue(e) {
				return false
			}
		}
		return true
	}
	return false
}

// newStructTakes reports whether structpb.NewStruct converts m, rather
// than failing, which sends StructToPB through m's JSON form.
func newStructTakes(m map[string]any) bool {
	for k, v := range m {
		if !utf8.ValidString(k) || !newValueTakes(v) {
			return false
		}
	}
	return true
}

// newValueTakes follows the cases of structpb.NewValue.
func newValueTakes(v any) bool {
	switch v := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64, []byte:
		return true
	case json.Number:
		_, err := v.Float64()
		return err == nil
	case string:
		return utf8.ValidString(v)
	case map[string]any:
		return newStructTakes(v)
	case []any:
		for _, e := range v {
			if !newValueTakes(e) {
				return false
			}
		}
		return true
	}
	return false
}

// appendStruct writes a Struct: map<string, Value> fields = 1.
func appendStruct(b []byte, m map[string]any) []byte {
	for k, v := range m {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		at := len(b)
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, k)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		vat := len(b)
		b = pbwire.PrefixLength(appendValue(b, v), vat)
		b = pbwire.PrefixLength(b, at)
	}
	return b
}

// appendValue writes a Value, whose kind is a oneof: its member is
// written whatever it holds, 0, false and "" included.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, 0)
	case float64:
		b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v))
	case int:
		b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(float64(v)))
	case string:
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, v)
	case bool:
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v))
	case map[string]any:
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		at := len(b)
		b = pbwire.PrefixLength(appendStruct(b, v), at)
	case []any:
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		at := len(b)
		for _, e := range v {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			eat := len(b)
			b = pbwire.PrefixLength(appendValue(b, e), eat)
		}
		b = pbwire.PrefixLength(b, at)
	}
	return b
}
