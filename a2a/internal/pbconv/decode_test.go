package pbconv

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cloudwego/prutal"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/a2amesh/a2amesh/a2a"
)

// viaPrutal is the reference the direct decoding must equal: prutal's
// reading of b, converted.
func viaPrutal[P any, T any](b []byte, from func(*P) (T, error)) (T, error) {
	var pb P
	if err := prutal.Unmarshal(b, &pb); err != nil {
		var zero T
		return zero, err
	}
	return from(&pb)
}

// checkDecode wants what decode takes from b to be what prutal and from
// make of it, and reports whether decode took it.
func checkDecode[P any, T any](t *testing.T, b []byte, decode func([]byte) (T, bool), from func(*P) (T, error)) bool {
	t.Helper()
	got, ok := decode(b)
	if !ok {
		return false
	}
	want, err := viaPrutal(b, from)
	if err != nil {
		t.Fatalf("decoded %x, which prutal and the conversion refuse: %v", b, err)
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Fatalf("decoded %x otherwise than prutal and the conversion\n got: %s\nwant: %s\n got: %#v\nwant: %#v", b, g, w, got, want)
	}
	return true
}

// checkDecodeAll reads b with each direct decoding, and as an item of the
// stream whose identifiers ids holds.
func checkDecodeAll(t *testing.T, b []byte, ids *idCache) {
	t.Helper()
	checkDecode(t, b, DecodeEvent, EventFromPB)
	checkDecode(t, b, func(b []byte) (a2a.Event, bool) { return decodeEvent(b, ids) }, EventFromPB)
	checkDecode(t, b, DecodeSendResponse, SendResponseFromPB)
	checkDecode(t, b, DecodeSendRequest, SendRequestFromPB)
}

// TestDecodeEncoded reads what the direct encodings write for the
// round-trip and direct encoding cases: the decoding must take every one
// whose a2apb form converts back.
func TestDecodeEncoded(t *testing.T) {
	for _, tt := range directCases() {
		t.Run(tt.name, func(t *testing.T) {
			b, err := AppendEvent(nil, tt.ev)
			if err != nil {
				return
			}
			took := checkDecode(t, b, DecodeEvent, EventFromPB)
			if _, err := viaPrutal(b, EventFromPB); err == nil && !took {
				t.Errorf("DecodeEvent declined %x", b)
			}
			if b, err = AppendSendResponse(nil, tt.ev); err == nil {
				took := checkDecode(t, b, DecodeSendResponse, SendResponseFromPB)
				if _, err := viaPrutal(b, SendResponseFromPB); err == nil && !took {
					t.Errorf("DecodeSendResponse declined %x", b)
				}
			}
		})
	}
	reqs := sendRequestCases()
	for _, m := range messageCases() {
		reqs = append(reqs, &a2a.SendMessageRequest{Message: m.msg})
	}
	reqs = append(reqs, &a2a.SendMessageRequest{},
		&a2a.SendMessageRequest{Configuration: &a2a.SendMessageConfiguration{HistoryLength: intp(-3),
			TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{Authentication: &a2a.AuthenticationInfo{}}}})
	for i, r := range reqs {
		t.Run(fmt.Sprint("request ", i), func(t *testing.T) {
			b, err := AppendSendRequest(nil, r)
			if err != nil {
				t.Fatal(err)
			}
			took := checkDecode(t, b, DecodeSendRequest, SendRequestFromPB)
			if _, err := viaPrutal(b, SendRequestFromPB); err == nil && !took {
				t.Errorf("DecodeSendRequest declined %x", b)
			}
		})
	}
}

// TestDecodeDeclines lists what the direct decoding leaves to prutal, and
// some of what it takes: what it takes is read as the reference reads it.
func TestDecodeDeclines(t *testing.T) {
	tag := func(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }
	msg := func(num protowire.Number, body ...[]byte) []byte {
		var in []byte
		for _, b := range body {
			in = append(in, b...)
		}
		return protowire.AppendBytes(tag(num, protowire.BytesType), in)
	}
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(tag(num, protowire.VarintType), v)
	}
	str := func(num protowire.Number, s string) []byte {
		return protowire.AppendString(tag(num, protowire.BytesType), s)
	}
	entry := func(k string, v ...[]byte) []byte { return msg(1, str(1, k), msg(2, v...)) }
	var ids idCache
	event, request := func(b []byte) bool { _, ok := DecodeEvent(b); return ok }, func(b []byte) bool { _, ok := DecodeSendRequest(b); return ok }
	for _, tt := range []struct {
		name   string
		b      []byte
		decode func([]byte) bool
		take   bool
	}{
		{"empty event", nil, event, false},
		{"empty request", nil, request, true},
		{"two payloads", append(msg(1), msg(2)...), event, false},
		{"task twice", append(msg(1), msg(1)...), event, false},
		{"payload of another wire type", varint(1, 1), event, false},
		{"unknown fields", append(append(varint(99, 1), msg(3, str(1, "t"), msg(77))...), 0x7d, 0, 0, 0, 0), event, true},
		{"group", append(tag(9, protowire.StartGroupType), tag(9, protowire.EndGroupType)...), request, false},
		{"truncated", msg(1)[:1], request, false},
		{"unknown role", msg(2, varint(4, 3)), event, false},
		{"negative role", msg(2, varint(4, 1<<64-1)), event, false},
		{"unknown state", msg(3, msg(3, varint(1, 99))), event, false},
		{"bool 2", msg(4, varint(4, 2)), event, false},
		{"status twice", msg(3, msg(3), msg(3)), event, false},
		{"message twice", append(msg(2), msg(2)...), request, false},
		{"two part contents", msg(2, msg(5, str(1, "a"), str(3, "u"))), event, false},
		{"empty url", msg(2, msg(5, str(3, ""))), event, false},
		{"part without content, answered", msg(2, msg(5, str(6, "f"))), event, true},
		{"part without content, asked", msg(2, msg(5, str(6, "f"))), request, false},
		{"struct entry without value", msg(2, msg(6, msg(1, str(1, "k")))), event, false},
		{"struct entry without key", msg(2, msg(6, msg(1, msg(2, varint(4, 1))))), event, false},
		{"struct key twice", msg(2, msg(6, entry("k", varint(4, 1)), entry("k", varint(4, 0)))), event, false},
		{"value of no kind", msg(2, msg(6, entry("k"))), event, false},
		{"value of two kinds", msg(2, msg(6, entry("k", varint(4, 1), str(3, "x")))), event, false},
		{"null of 1", msg(2, msg(6, entry("k", varint(1, 1)))), event, false},
		{"NaN", msg(2, msg(6, entry("k", protowire.AppendFixed64(tag(2, protowire.Fixed64Type), 0x7ff8000000000001)))), event, false},
		{"deep", msg(2, msg(6, entry("k", nested(maxDepth+2)...))), event, false},
		{"not so deep", msg(2, msg(6, entry("k", nested(maxDepth-2)...))), event, true},
		{"timestamp", msg(3, msg(3, msg(3, varint(1, 1<<64-1), varint(2, 1<<40)))), event, true},
		{"history length of 64 bits", msg(3, varint(3, 1<<40)), request, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeAll(t, tt.b, &ids)
			if got := tt.decode(tt.b); got != tt.take {
				t.Errorf("took %x: %v, want %v", tt.b, got, tt.take)
			}
		})
	}
}

// nested is a Value holding a list in a list ... n deep.
func nested(n int) [][]byte {
	v := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 0)
	for range n {
		list := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), v)
		v = protowire.AppendBytes(protowire.AppendTag(nil, 6, protowire.BytesType), list)
	}
	return [][]byte{v}
}

// FuzzDecode reads fuzzed bytes with each direct decoding and wants what
// it takes to be what prutal and the conversion make of them.
func FuzzDecode(f *testing.F) {
	for _, tt := range directCases() {
		if b, err := AppendEvent(nil, tt.ev); err == nil {
			f.Add(b)
		}
		if b, err := AppendSendResponse(nil, tt.ev); err == nil {
			f.Add(b)
		}
	}
	for _, r := range sendRequestCases() {
		if b, err := AppendSendRequest(nil, r); err == nil {
			f.Add(b)
		}
	}
	var ids idCache // as one stream's
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDecodeAll(t, b, &ids)
	})
}

// BenchmarkReadStreamItem reads a streamed artifact chunk and a status
// update, as the echo agent sends them: by prutal then EventFromPB (the
// client's path before the direct decoding), directly, and directly as
// items of one stream.
func BenchmarkReadStreamItem(b *testing.B) {
	var items [][]byte
	for _, ev := range []a2a.Event{
		&a2a.TaskArtifactUpdateEvent{TaskID: "0193d1f4-7c1e-7b7a-9f00-000000000001", ContextID: "0193d1f4-7c1e-7b7a-9f00-000000000002",
			Artifact: a2a.Artifact{ArtifactID: "0193d1f4-7c1e-7b7a-9f00-000000000003", Parts: []a2a.Part{a2a.TextPart("hello, world")}},
			Append:   true},
		&a2a.TaskStatusUpdateEvent{TaskID: "0193d1f4-7c1e-7b7a-9f00-000000000001", ContextID: "0193d1f4-7c1e-7b7a-9f00-000000000002",
			Status:   a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when},
			Metadata: map[string]any{"model": "offline", "tokens": 12.0}},
	} {
		item, err := AppendEvent(nil, ev)
		if err != nil {
			b.Fatal(err)
		}
		items = append(items, item)
	}
	b.Run("prutal+EventFromPB", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, item := range items {
				if _, err := viaPrutal(item, EventFromPB); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, item := range items {
				if _, ok := DecodeEvent(item); !ok {
					b.Fatal("declined")
				}
			}
		}
	})
	b.Run("direct, one stream's", func(b *testing.B) {
		var in IncomingEvent // the client's, which keeps the stream's ids
		b.ReportAllocs()
		for b.Loop() {
			for _, item := range items {
				if err := in.Unmarshal(item); err != nil || in.ev == nil {
					b.Fatal("declined", err)
				}
			}
		}
	})
}
