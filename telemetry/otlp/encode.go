package otlp

import (
	"math"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2amesh/a2amesh/internal/pbwire"
)

// encoder writes spans as OTLP's protobuf messages (opentelemetry/proto
// trace/v1: ResourceSpans and what it holds) straight from the SDK's
// ReadOnlySpan, with no message structs in between: building those and
// marshaling them was most of what exporting a span cost. What it writes
// decodes to what the official exporter sends for the same spans (the
// test compares them). Its buffers are reused from one batch to the next;
// an encoder is used by one goroutine at a time.
type encoder struct {
	buf    []byte
	groups []group
}

// group is the spans of a batch that share a resource and an
// instrumentation scope, by their index in the batch.
type group struct {
	res   attribute.Distinct
	rp    *resource.Resource
	scope instrumentation.Scope
	spans []int
}

// encode returns the batch's spans as one encoded ResourceSpans message
// body per resource, in order of first appearance; the bytes are the
// encoder's, valid until the next encode.
func (e *encoder) encode(spans []sdktrace.ReadOnlySpan) [][]byte {
	e.groups = e.groups[:0]
	for i, s := range spans {
		if s == nil {
			continue
		}
		res, scope := s.Resource(), s.InstrumentationScope()
		d := distinct(res)
		g := slices.IndexFunc(e.groups, func(g group) bool { return g.res == d && g.scope == scope })
		if g < 0 {
			g = len(e.groups)
			if g < cap(e.groups) {
				e.groups = e.groups[:g+1]
				e.groups[g] = group{res: d, rp: res, scope: scope, spans: e.groups[g].spans[:0]}
			} else {
				e.groups = append(e.groups, group{res: d, rp: res, scope: scope})
			}
		}
		e.groups[g].spans = append(e.groups[g].spans, i)
	}
	if len(e.groups) == 0 {
		return nil
	}
	// Each resource's body is a range of buf: ends[i] is where the i-th ends.
	b := e.buf[:0]
	var ends []int
	for i, g := range e.groups {
		if slices.ContainsFunc(e.groups[:i], func(o group) bool { return o.res == g.res }) {
			continue // written with the first of its resource
		}
		if g.rp != nil {
			b = appendResource(b, g.rp)
		}
		for _, sg := range e.groups[i:] {
			if sg.res == g.res {
				b = appendScopeSpans(b, sg, spans)
			}
		}
		if g.rp != nil {
			b = pbwire.AppendString(b, 3, g.rp.SchemaURL()) // ResourceSpans.schema_url
		}
		ends = append(ends, len(b))
	}
	e.buf = b
	out := make([][]byte, len(ends))
	start := 0
	for i, end := range ends {
		out[i] = b[start:end:end]
		start = end
	}
	return out
}

func distinct(r *resource.Resource) attribute.Distinct {
	if r == nil {
		return attribute.Distinct{}
	}
	return r.Equivalent()
}

// appendResource appends ResourceSpans.resource (1).
func appendResource(b []byte, r *resource.Resource) []byte {
	b, m := openMessage(b, 1)
	for it := r.Iter(); it.Next(); {
		b = appendKeyValue(b, 1, it.Attribute()) // Resource.attributes
	}
	return closeMessage(b, m)
}

// appendScopeSpans appends ResourceSpans.scope_spans (2): g's spans.
func appendScopeSpans(b []byte, g group, spans []sdktrace.ReadOnlySpan) []byte {
	b, m := openMessage(b, 2)
	if g.scope != (instrumentation.Scope{}) {
		var sm int
		b, sm = openMessage(b, 1) // ScopeSpans.scope: InstrumentationScope
		b = pbwire.AppendString(b, 1, g.scope.Name)
		b = pbwire.AppendString(b, 2, g.scope.Version)
		for it := g.scope.Attributes.Iter(); it.Next(); {
			b = appendKeyValue(b, 3, it.Attribute())
		}
		b = closeMessage(b, sm)
	}
	for _, i := range g.spans {
		b = appendSpan(b, spans[i])
	}
	b = pbwire.AppendString(b, 3, g.scope.SchemaURL)
	return closeMessage(b, m)
}

// appendSpan appends ScopeSpans.spans (2): one Span.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	b, m := openMessage(b, 2)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	if sc.TraceState().Len() > 0 {
		b = pbwire.AppendString(b, 3, sc.TraceState().String())
	}
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, 4, psid[:])
	}
	b = pbwire.AppendString(b, 5, s.Name())
	if k := s.SpanKind(); k >= trace.SpanKindInternal && k <= trace.SpanKindConsumer {
		// The API's kinds and OTLP's have the same numbers; any other is
		// unspecified (0), which is not written.
		b = pbwire.AppendVarint(b, 6, uint64(k))
	}
	b = appendFixed64(b, 7, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, 8, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, 9, kv)
	}
	b = pbwire.AppendVarint(b, 10, clampUint32(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		var em int
		b, em = openMessage(b, 11) // Span.Event
		b = appendFixed64(b, 1, unixNano(ev.Time.UnixNano()))
		b = pbwire.AppendString(b, 2, ev.Name)
		for _, kv := range ev.Attributes {
			b = appendKeyValue(b, 3, kv)
		}
		b = pbwire.AppendVarint(b, 4, clampUint32(ev.DroppedAttributeCount))
		b = closeMessage(b, em)
	}
	b = pbwire.AppendVarint(b, 12, clampUint32(s.DroppedEvents()))
	for _, l := range s.Links() {
		var lm int
		b, lm = openMessage(b, 13) // Span.Link
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, 1, ltid[:])
		b = appendBytes(b, 2, lsid[:])
		// The official exporter sends no trace_state (3) of a link:
		// neither does this one, so that both send the same.
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, 4, kv)
		}
		b = pbwire.AppendVarint(b, 5, clampUint32(l.DroppedAttributeCount))
		b = appendFlags(b, 6, l.SpanContext.TraceFlags(), l.SpanContext.IsRemote())
		b = closeMessage(b, lm)
	}
	b = pbwire.AppendVarint(b, 14, clampUint32(s.DroppedLinks()))
	// Span.status (15) is written even when unset, as the official
	// exporter does.
	st := s.Status()
	var stm int
	b, stm = openMessage(b, 15)
	b = pbwire.AppendString(b, 2, st.Description)
	switch st.Code {
	case codes.Ok:
		b = pbwire.AppendVarint(b, 3, 1) // STATUS_CODE_OK
	case codes.Error:
		b = pbwire.AppendVarint(b, 3, 2) // STATUS_CODE_ERROR
	}
	b = closeMessage(b, stm)
	b = appendFlags(b, 16, sc.TraceFlags(), parent.IsRemote())
	return closeMessage(b, m)
}

// appendFlags appends a SpanFlags field: the W3C trace flags, and whether
// the parent (of a span; the linked context, of a link) is remote, a bit
// that says it is known.
func appendFlags(b []byte, num protowire.Number, tf trace.TraceFlags, remote bool) []byte {
	const hasIsRemote, isRemote = 0x100, 0x200 // SpanFlags' masks
	f := uint32(tf) | hasIsRemote
	if remote {
		f |= isRemote
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, f)
}

// appendKeyValue appends a KeyValue field.
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	b, m := openMessage(b, num)
	b = pbwire.AppendString(b, 1, string(kv.Key))
	b = appendAnyValue(b, 2, kv.Value)
	return closeMessage(b, m)
}

// appendAnyValue appends an AnyValue field. Its value is a oneof: written
// even when it is the zero of its type.
func appendAnyValue(b []byte, num protowire.Number, v attribute.Value) []byte {
	b, m := openMessage(b, num)
	switch v.Type() {
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, v.AsString())
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		b = protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		var am int
		b, am = openMessage(b, 6) // kvlist_value: KeyValueList
		for _, kv := range v.AsMap() {
			b = appendKeyValue(b, 1, kv)
		}
		b = closeMessage(b, am)
	case attribute.EMPTY:
		// An AnyValue with no value.
	default:
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, "INVALID")
	}
	return closeMessage(b, m)
}

// appendArray appends AnyValue.array_value (5): an ArrayValue of vs.
func appendArray[T any](b []byte, vs []T, value func(T) attribute.Value) []byte {
	b, m := openMessage(b, 5)
	for _, v := range vs {
		b = appendAnyValue(b, 1, value(v))
	}
	return closeMessage(b, m)
}

// openMessage appends the tag of a length-delimited field and a one-byte
// length that closeMessage fixes once the message is written; mark is
// where the length is.
func openMessage(b []byte, num protowire.Number) (_ []byte, mark int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return append(b, 0), len(b)
}

// closeMessage writes the length of the message written since
// openMessage, moving it up when the length takes more than a byte.
func closeMessage(b []byte, mark int) []byte {
	n := len(b) - mark - 1
	k := protowire.SizeVarint(uint64(n))
	if k == 1 {
		b[mark] = byte(n)
		return b
	}
	b = slices.Grow(b, k-1)[:len(b)+k-1]
	copy(b[mark+k:], b[mark+1:mark+1+n])
	protowire.AppendVarint(b[:mark], uint64(n))
	return b
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendFixed64 appends a fixed64 field other than 0.
func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

// unixNano is a time for OTLP: before 1970, 0.
func unixNano(ns int64) uint64 { return uint64(max(0, ns)) } //nolint:gosec // not negative

func clampUint32(v int) uint64 {
	return uint64(min(max(v, 0), math.MaxUint32)) //nolint:gosec // not negative
}
