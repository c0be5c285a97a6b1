package pbconv

import (
	"encoding/json"
	"math"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// The direct decoding: what the client receives most (stream items and
// SendMessage's answer) and the server's requests of SendMessage and
// SendStreamingMessage, read from the protobuf binary format straight into
// the a2a model, without the a2apb messages prutal (Kitex's codec) would
// build first. What it returns is what the conversion (EventFromPB,
// SendResponseFromPB, SendRequestFromPB) returns for prutal's reading of
// the same bytes; it reads the shapes the encoders write and declines
// (ok false) the rest, for the caller to take the way through a2apb: a
// message field, or a oneof, that comes twice (which protobuf merges), a
// known field of another wire type, a group, a value the conversion
// refuses (an unknown enum number, a part without content in a request, an
// empty URL), a bool other than 0 or 1 (prutal reads 2 as false), a
// google.protobuf.Value of no kind or of two, a Struct entry without its
// key or value or repeating one, NaN, and nesting deeper than maxDepth.
// Unknown fields are skipped, as prutal skips them. FuzzDecode checks it
// against prutal and the conversion.

// maxDepth bounds the nesting of Struct and Value the direct decoding
// reads; deeper ones go to prutal.
const maxDepth = 64

// DecodeEvent reads a StreamResponse: EventFromPB's event for prutal's
// reading of b.
func DecodeEvent(b []byte) (a2a.Event, bool) { return decodeEvent(b, nil) }

// decodeEvent is DecodeEvent, taking the identifiers it reads from ids.
func decodeEvent(b []byte, ids *idCache) (a2a.Event, bool) {
	var ev a2a.Event
	var seen bool
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		if f.num < 1 || f.num > 4 {
			continue
		}
		if seen || f.typ != protowire.BytesType {
			return nil, false
		}
		seen = true
		switch f.num {
		case 1:
			ev, ok = decodeTask(f.b, ids)
		case 2:
			ev, ok = decodeMessage(f.b, true, ids)
		case 3:
			ev, ok = decodeStatusUpdate(f.b, ids)
		case 4:
			ev, ok = decodeArtifactUpdate(f.b, ids)
		}
		if !ok {
			return nil, false
		}
	}
	return ev, seen
}

// DecodeSendResponse reads a SendMessageResponse: SendResponseFromPB's
// task or message for prutal's reading of b.
func DecodeSendResponse(b []byte) (a2a.Event, bool) {
	var ev a2a.Event
	var seen bool
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		if f.num < 1 || f.num > 2 {
			continue
		}
		if seen || f.typ != protowire.BytesType {
			return nil, false
		}
		seen = true
		if f.num == 1 {
			ev, ok = decodeTask(f.b, nil)
		} else {
			ev, ok = decodeMessage(f.b, true, nil)
		}
		if !ok {
			return nil, false
		}
	}
	return ev, seen
}

// DecodeSendRequest reads a SendMessageRequest: SendRequestFromPB's
// request for prutal's reading of b.
func DecodeSendRequest(b []byte) (*a2a.SendMessageRequest, bool) {
	r := new(a2a.SendMessageRequest)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.str(&r.Tenant)
		case 2:
			ok = once.first(f) && f.message(&r.Message, false, nil)
		case 3:
			ok = once.first(f) && f.typ == protowire.BytesType
			if ok {
				r.Configuration, ok = decodeConfiguration(f.b)
			}
		case 4:
			ok = once.first(f) && f.metadata(&r.Metadata)
		}
		if !ok {
			return nil, false
		}
	}
	return r, true
}

// field is one field of a message.
type field struct {
	num protowire.Number
	typ protowire.Type
	u   uint64 // a varint's or a fixed number's value
	b   []byte // a length-delimited value's bytes
}

// nextField reads the field at the start of *b and moves *b past it.
func nextField(b *[]byte) (field, bool) {
	num, typ, n := protowire.ConsumeTag(*b)
	if n < 0 {
		return field{}, false
	}
	rest := (*b)[n:]
	f := field{num: num, typ: typ}
	switch typ {
	case protowire.VarintType:
		f.u, n = protowire.ConsumeVarint(rest)
	case protowire.Fixed64Type:
		f.u, n = protowire.ConsumeFixed64(rest)
	case protowire.Fixed32Type:
		var v uint32
		v, n = protowire.ConsumeFixed32(rest)
		f.u = uint64(v)
	case protowire.BytesType:
		f.b, n = protowire.ConsumeBytes(rest)
	default: // groups
		return field{}, false
	}
	if n < 0 {
		return field{}, false
	}
	*b = rest[n:]
	return f, true
}

// onceFields tracks the message fields (numbers below 32) of a message
// read so far.
type onceFields uint32

// first reports whether f is the first of its number.
func (o *onceFields) first(f field) bool {
	bit := onceFields(1) << (f.num & 31)
	if *o&bit != 0 {
		return false
	}
	*o |= bit
	return true
}

func (f field) str(s *string) bool {
	if f.typ != protowire.BytesType {
		return false
	}
	*s = string(f.b)
	return true
}

func (f field) appendStr(ss *[]string) bool {
	if f.typ != protowire.BytesType {
		return false
	}
	*ss = append(*ss, string(f.b))
	return true
}

func (f field) boolean(v *bool) bool {
	if f.typ != protowire.VarintType || f.u > 1 {
		return false
	}
	*v = f.u == 1
	return true
}

// int64 reads an int64 field as prutal does: the varint's 64 bits.
func (f field) int64(g *a2a.Generation) bool {
	if f.typ != protowire.VarintType {
		return false
	}
	*g = a2a.Generation(int64(f.u))
	return true
}

func (f field) metadata(m *map[string]any) bool {
	if f.typ != protowire.BytesType {
		return false
	}
	var ok bool
	*m, ok = decodeStruct(f.b, 0)
	return ok
}

func (f field) message(m **a2a.Message, answer bool, ids *idCache) bool {
	if f.typ != protowire.BytesType {
		return false
	}
	var ok bool
	*m, ok = decodeMessage(f.b, answer, ids)
	return ok
}

// id reads an identifier through ids.
func (f field) id(s *string, ids *idCache) bool {
	if f.typ != protowire.BytesType {
		return false
	}
	*s = ids.str(f.b)
	return true
}

// idCache holds the last identifiers read from a stream, which its items
// repeat (the task's and context's ids, an artifact's): each is then
// allocated once per stream rather than once per item. A nil idCache
// allocates each.
type idCache struct {
	recent [4]string
	next   int
}

func (c *idCache) str(b []byte) string {
	if c == nil {
		return string(b)
	}
	for _, s := range c.recent {
		if s == string(b) {
			return s
		}
	}
	s := string(b)
	c.recent[c.next] = s
	c.next = (c.next + 1) % len(c.recent)
	return s
}

func decodeTask(b []byte, ids *idCache) (*a2a.Task, bool) {
	t := new(a2a.Task)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.id(&t.ID, ids)
		case 2:
			ok = f.id(&t.ContextID, ids)
		case 3:
			ok = once.first(f) && f.typ == protowire.BytesType && decodeStatus(f.b, &t.Status, ids)
		case 4:
			ok = f.typ == protowire.BytesType
			if ok {
				t.Artifacts = append(t.Artifacts, a2a.Artifact{})
				ok = decodeArtifact(f.b, &t.Artifacts[len(t.Artifacts)-1], ids)
			}
		case 5:
			var m *a2a.Message
			if ok = f.message(&m, true, ids); ok {
				t.History = append(t.History, *m)
			}
		case 6:
			ok = once.first(f) && f.metadata(&t.Metadata)
		case 7:
			ok = f.int64(&t.Generation)
		}
		if !ok {
			return nil, false
		}
	}
	return t, true
}

func decodeStatus(b []byte, s *a2a.TaskStatus, ids *idCache) bool {
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return false
		}
		switch f.num {
		case 1:
			ok = f.typ == protowire.VarintType
			if ok {
				s.State, ok = decodeState(f.u)
			}
		case 2:
			ok = once.first(f) && f.message(&s.Message, true, ids)
		case 3:
			ok = once.first(f) && f.typ == protowire.BytesType
			if ok {
				s.Timestamp, ok = decodeTimestamp(f.b)
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// decodeState reads a TaskState as prutal (an int32) and stateFromPB do.
func decodeState(u uint64) (a2a.TaskState, bool) {
	n := int32(u)
	if n == 0 {
		return "", true
	}
	name, ok := a2apb.TaskState_name[n]
	return a2a.TaskState(name), ok
}

// decodeTimestamp reads a Timestamp as prutal and AsTime do.
func decodeTimestamp(b []byte) (time.Time, bool) {
	var secs, nanos uint64
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return time.Time{}, false
		}
		if f.num == 1 || f.num == 2 {
			if f.typ != protowire.VarintType {
				return time.Time{}, false
			}
			if f.num == 1 {
				secs = f.u
			} else {
				nanos = f.u
			}
		}
	}
	return time.Unix(int64(secs), int64(int32(nanos))).UTC(), true
}

// decodeMessage reads a Message as messageFromPB does, of a server's
// answer or not.
func decodeMessage(b []byte, answer bool, ids *idCache) (*a2a.Message, bool) {
	m := new(a2a.Message)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.str(&m.MessageID)
		case 2:
			ok = f.id(&m.ContextID, ids)
		case 3:
			ok = f.id(&m.TaskID, ids)
		case 4:
			ok = f.typ == protowire.VarintType
			if ok {
				switch int32(f.u) {
				case 0:
					m.Role = ""
				case int32(a2apb.Role_ROLE_USER):
					m.Role = a2a.RoleUser
				case int32(a2apb.Role_ROLE_AGENT):
					m.Role = a2a.RoleAgent
				default:
					ok = false
				}
			}
		case 5:
			ok = f.typ == protowire.BytesType
			if ok {
				m.Parts = append(m.Parts, a2a.Part{})
				ok = decodePart(f.b, &m.Parts[len(m.Parts)-1], answer)
			}
		case 6:
			ok = once.first(f) && f.metadata(&m.Metadata)
		case 7:
			ok = f.appendStr(&m.Extensions)
		case 8:
			ok = f.appendStr(&m.ReferenceTaskIDs)
		}
		if !ok {
			return nil, false
		}
	}
	return m, true
}

// decodePart reads a Part as partFromPB does.
func decodePart(b []byte, p *a2a.Part, answer bool) bool {
	var once onceFields
	content := false
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return false
		}
		if f.num >= 1 && f.num <= 4 {
			if content || f.typ != protowire.BytesType {
				return false
			}
			content = true
		}
		switch f.num {
		case 1:
			p.Text = string(f.b)
		case 2:
			p.Raw = append([]byte{}, f.b...) // an empty file is still a file
		case 3:
			if len(f.b) == 0 {
				return false // partFromPB refuses an empty URL
			}
			p.URL = string(f.b)
		case 4:
			v, ok := decodeValue(f.b, 0)
			if !ok {
				return false
			}
			if p.Data, ok = dataJSON(v); !ok {
				return false
			}
		case 5:
			ok = once.first(f) && f.metadata(&p.Metadata)
		case 6:
			ok = f.str(&p.Filename)
		case 7:
			ok = f.str(&p.MediaType)
		}
		if !ok {
			return false
		}
	}
	return content || answer
}

// dataJSON writes a data part's value as valueFromPB does: with
// encoding/json, whose escaping and number forms are its own.
func dataJSON(v any) (json.RawMessage, bool) {
	b, err := json.Marshal(v)
	return b, err == nil
}

func decodeArtifact(b []byte, a *a2a.Artifact, ids *idCache) bool {
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return false
		}
		switch f.num {
		case 1:
			ok = f.id(&a.ArtifactID, ids)
		case 2:
			ok = f.str(&a.Name)
		case 3:
			ok = f.str(&a.Description)
		case 4:
			ok = f.typ == protowire.BytesType
			if ok {
				a.Parts = append(a.Parts, a2a.Part{})
				ok = decodePart(f.b, &a.Parts[len(a.Parts)-1], true)
			}
		case 5:
			ok = once.first(f) && f.metadata(&a.Metadata)
		case 6:
			ok = f.appendStr(&a.Extensions)
		}
		if !ok {
			return false
		}
	}
	return true
}

func decodeStatusUpdate(b []byte, ids *idCache) (*a2a.TaskStatusUpdateEvent, bool) {
	e := new(a2a.TaskStatusUpdateEvent)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.id(&e.TaskID, ids)
		case 2:
			ok = f.id(&e.ContextID, ids)
		case 3:
			ok = once.first(f) && f.typ == protowire.BytesType && decodeStatus(f.b, &e.Status, ids)
		case 4:
			ok = once.first(f) && f.metadata(&e.Metadata)
		case 5:
			ok = f.int64(&e.Generation)
		}
		if !ok {
			return nil, false
		}
	}
	return e, true
}

func decodeArtifactUpdate(b []byte, ids *idCache) (*a2a.TaskArtifactUpdateEvent, bool) {
	e := new(a2a.TaskArtifactUpdateEvent)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.id(&e.TaskID, ids)
		case 2:
			ok = f.id(&e.ContextID, ids)
		case 3:
			ok = once.first(f) && f.typ == protowire.BytesType && decodeArtifact(f.b, &e.Artifact, ids)
		case 4:
			ok = f.boolean(&e.Append)
		case 5:
			ok = f.boolean(&e.LastChunk)
		case 6:
			ok = once.first(f) && f.metadata(&e.Metadata)
		case 7:
			ok = f.int64(&e.Generation)
		}
		if !ok {
			return nil, false
		}
	}
	return e, true
}

func decodeConfiguration(b []byte) (*a2a.SendMessageConfiguration, bool) {
	c := new(a2a.SendMessageConfiguration)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.appendStr(&c.AcceptedOutputModes)
		case 2:
			ok = once.first(f) && f.typ == protowire.BytesType
			if ok {
				c.TaskPushNotificationConfig, ok = decodePushConfig(f.b)
			}
		case 3:
			ok = f.typ == protowire.VarintType
			n := int(int32(f.u))
			c.HistoryLength = &n
		case 4:
			ok = f.boolean(&c.ReturnImmediately)
		case 5:
			g := new(a2a.Generation)
			ok = f.int64(g)
			c.IfGenerationMatch = g
		}
		if !ok {
			return nil, false
		}
	}
	return c, true
}

func decodePushConfig(b []byte) (*a2a.TaskPushNotificationConfig, bool) {
	c := new(a2a.TaskPushNotificationConfig)
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.str(&c.Tenant)
		case 2:
			ok = f.str(&c.ID)
		case 3:
			ok = f.str(&c.TaskID)
		case 4:
			ok = f.str(&c.URL)
		case 5:
			ok = f.str(&c.Token)
		case 6:
			ok = once.first(f) && f.typ == protowire.BytesType
			if ok {
				c.Authentication = new(a2a.AuthenticationInfo)
				ok = decodeAuth(f.b, c.Authentication)
			}
		}
		if !ok {
			return nil, false
		}
	}
	return c, true
}

func decodeAuth(b []byte, a *a2a.AuthenticationInfo) bool {
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return false
		}
		switch f.num {
		case 1:
			ok = f.str(&a.Scheme)
		case 2:
			ok = f.str(&a.Credentials)
		}
		if !ok {
			return false
		}
	}
	return true
}

// decodeStruct reads a google.protobuf.Struct as AsMap returns it.
func decodeStruct(b []byte, depth int) (map[string]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	m := map[string]any{}
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return nil, false
		}
		k, v, ok := decodeEntry(f.b, depth)
		if !ok {
			return nil, false
		}
		if _, dup := m[k]; dup {
			return nil, false
		}
		m[k] = v
	}
	return m, true
}

// decodeEntry reads an entry of a Struct's fields map: its key (1) and
// its Value (2), each there once.
func decodeEntry(b []byte, depth int) (string, any, bool) {
	var k string
	var v any
	var once onceFields
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return "", nil, false
		}
		switch f.num {
		case 1:
			// Bytes that are not UTF-8 go the general way (StructFromPB).
			ok = once.first(f) && f.str(&k) && utf8.ValidString(k)
		case 2:
			ok = once.first(f) && f.typ == protowire.BytesType
			if ok {
				v, ok = decodeValue(f.b, depth)
			}
		default:
			ok = false
		}
		if !ok {
			return "", nil, false
		}
	}
	return k, v, once == 1<<1|1<<2
}

// decodeValue reads a google.protobuf.Value as AsInterface returns it:
// nil, float64, string, bool, map[string]any or []any.
func decodeValue(b []byte, depth int) (any, bool) {
	var v any
	kinds := 0
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		if f.num < 1 || f.num > 6 {
			continue
		}
		if kinds++; kinds > 1 {
			return nil, false
		}
		switch f.num {
		case 1:
			ok = f.typ == protowire.VarintType && f.u == 0
		case 2:
			// Infinities become strings, as structpb's AsInterface has
			// them (JSON holds no such number); NaN goes the general way.
			ok = f.typ == protowire.Fixed64Type
			switch x := math.Float64frombits(f.u); {
			case math.IsNaN(x):
				ok = false
			case math.IsInf(x, 1):
				v = "Infinity"
			case math.IsInf(x, -1):
				v = "-Infinity"
			default:
				v = x
			}
		case 3:
			var s string
			ok = f.str(&s) && utf8.ValidString(s)
			v = s
		case 4:
			var x bool
			ok = f.boolean(&x)
			v = x
		case 5:
			ok = f.typ == protowire.BytesType
			if ok {
				v, ok = decodeStruct(f.b, depth+1)
			}
		case 6:
			ok = f.typ == protowire.BytesType
			if ok {
				v, ok = decodeList(f.b, depth+1)
			}
		}
		if !ok {
			return nil, false
		}
	}
	return v, kinds == 1
}

// decodeList reads a google.protobuf.ListValue as AsSlice returns it.
func decodeList(b []byte, depth int) ([]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	l := []any{}
	for len(b) > 0 {
		f, ok := nextField(&b)
		if !ok {
			return nil, false
		}
		if f.num != 1 {
			continue
		}
		if f.typ != protowire.BytesType {
			return nil, false
		}
		v, ok := decodeValue(f.b, depth)
		if !ok {
			return nil, false
		}
		l = append(l, v)
	}
	return l, true
}
