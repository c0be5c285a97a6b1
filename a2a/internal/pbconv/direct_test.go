package pbconv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cloudwego/prutal"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// viaPB is the reference the direct encoding must equal: the a2apb form,
// written by pbwire.
func viaPB[P any](enc *pbwire.Encoder, ev a2a.Event, to func(a2a.Event) (P, error)) ([]byte, error) {
	pb, err := to(ev)
	if err != nil {
		return nil, err
	}
	return enc.Marshal(nil, pb)
}

// sameEncoding wants direct and ref to be the same message: the same
// bytes, or, since both write a Struct's entries in map order, bytes of
// the same length that prutal reads as the same P (compared through
// encoding/json, which sorts map keys and ignores the runtime's internal
// fields of the well-known types, and tells a set oneof member holding a
// zero value from an unset one).
func sameEncoding[P any](t *testing.T, direct, ref []byte) {
	t.Helper()
	if bytes.Equal(direct, ref) {
		return
	}
	var d, r P
	if len(direct) != len(ref) {
		t.Fatalf("direct encoding has %d bytes, pbwire's %d\ndirect: %x\npbwire: %x", len(direct), len(ref), direct, ref)
	}
	if err := prutal.Unmarshal(direct, &d); err != nil {
		t.Fatalf("direct encoding does not decode: %v\n%x", err, direct)
	}
	if err := prutal.Unmarshal(ref, &r); err != nil {
		t.Fatalf("pbwire's encoding does not decode: %v", err)
	}
	dj, err := json.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	rj, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dj, rj) {
		t.Fatalf("direct encoding decodes otherwise than pbwire's\ndirect: %s\npbwire: %s", dj, rj)
	}
}

func directCases() []eventCase {
	events := eventCases()
	for _, m := range messageCases() {
		events = append(events, eventCase{"message " + m.name, m.msg})
	}
	return append(events,
		eventCase{"zero task", &a2a.Task{}},
		eventCase{"negative generations", &a2a.Task{Generation: -1}},
		eventCase{"largest generation", &a2a.TaskStatusUpdateEvent{Generation: 1<<63 - 1}},
		eventCase{"zero message", &a2a.Message{}},
		eventCase{"zero status update", &a2a.TaskStatusUpdateEvent{}},
		eventCase{"zero artifact update", &a2a.TaskArtifactUpdateEvent{}},
		eventCase{"empty lists and maps", &a2a.Task{
			Artifacts: []a2a.Artifact{{Parts: []a2a.Part{}, Metadata: map[string]any{}, Extensions: []string{}}},
			History:   []a2a.Message{{Parts: []a2a.Part{{}}, Extensions: []string{""}, ReferenceTaskIDs: []string{}}},
			Metadata:  map[string]any{},
		}},
		eventCase{"zero part", &a2a.TaskArtifactUpdateEvent{Artifact: a2a.Artifact{Parts: []a2a.Part{{}, {Raw: []byte{}}}}}},
		eventCase{"go metadata", &a2a.Message{Metadata: map[string]any{
			"int": 3, "neg": -1, "list": []string{"a", ""}, "map": map[string]int{"z": 0}, "bytes": []byte{1}, "bad\xff": "x\xfe",
		}}},
		eventCase{"nested metadata", &a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{}},
			Metadata: map[string]any{"o": map[string]any{"l": []any{map[string]any{}, []any{}, nil, -0.0, 1e300}}}}},
		eventCase{"before 1970", &a2a.Task{Status: a2a.TaskStatus{Timestamp: when.AddDate(-100, 0, 0)}}},
		eventCase{"unknown state and role", &a2a.Task{Status: a2a.TaskStatus{State: "nope", Message: &a2a.Message{Role: "nobody"}}}},
		// Metadata and data parts that go through their JSON form.
		eventCase{"appender metadata", &a2a.TaskStatusUpdateEvent{Metadata: map[string]any{
			"run": appender(`{"path":["a","b"],"n":1e3,"ok":false,"none":null,"o":{"x":"\u00e9\n<"},"e":{},"l":[]}`), "plain": 1.0}}},
		eventCase{"struct metadata", &a2a.Message{Metadata: map[string]any{"s": struct {
			A string  `json:"a"`
			B []int   `json:"b"`
			C float32 `json:"c"`
		}{"x", []int{1, 2}, 0.1}, "f": float32(0.1)}}},
		eventCase{"many members", &a2a.Message{Metadata: map[string]any{"s": manyMembers(40)}}},
		eventCase{"escaped data", textMsg("d1", a2a.RoleUser, a2a.Part{Data: json.RawMessage(` { "a\"b" : [ "\u0041\t", -0 , 1E-2 ] , "é": "ü" } `)})},
		eventCase{"repeated data member", textMsg("d2", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`{"a":1,"a":2}`)})},
		eventCase{"surrogate data", textMsg("d3", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`["\ud83d\ude00","\ud800"]`)})},
		eventCase{"huge number data", textMsg("d4", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`[1e999]`)})},
		eventCase{"appender repeating a member", &a2a.Message{Metadata: map[string]any{"r": appender(`{"a":1,"b":2,"a":3}`)}}},
		eventCase{"failing appender", &a2a.Message{Metadata: map[string]any{"r": appender(`{`)}}},
	)
}

// appender is metadata that writes its own JSON, as the bridge's does.
type appender string

func (a appender) AppendJSON(dst []byte) ([]byte, error) {
	if !json.Valid([]byte(a)) {
		return dst, errors.New("appender: invalid JSON")
	}
	return append(dst, a...), nil
}

func (a appender) MarshalJSON() ([]byte, error) { return a.AppendJSON(nil) }

// manyMembers is a struct's JSON form with n members, past the names
// checked for repeats one by one.
func manyMembers(n int) appender {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%d":%d`, i, i)
	}
	return appender(b.String() + "}")
}

func TestDirectEqualsPBWire(t *testing.T) {
	var enc pbwire.Encoder
	for _, tt := range directCases() {
		t.Run(tt.name, func(t *testing.T) {
			checkDirect(t, &enc, tt.ev)
		})
	}
}

// checkDirect wants AppendEvent and AppendSendResponse to write what
// pbwire writes for EventToPB and SendResponseToPB, or to fail as they
// do.
func checkDirect(t *testing.T, enc *pbwire.Encoder, ev a2a.Event) {
	t.Helper()
	ref, refErr := viaPB(enc, ev, EventToPB)
	direct, err := AppendEvent([]byte("prefix"), ev)
	if (err != nil) != (refErr != nil) {
		t.Fatalf("AppendEvent: error %v, EventToPB: %v", err, refErr)
	}
	if err == nil {
		if !bytes.HasPrefix(direct, []byte("prefix")) {
			t.Fatalf("AppendEvent did not append: %x", direct)
		}
		sameEncoding[a2apb.StreamResponse](t, direct[len("prefix"):], ref)
	}
	ref, refErr = viaPB(enc, ev, SendResponseToPB)
	direct, err = AppendSendResponse(nil, ev)
	if (err != nil) != (refErr != nil) {
		t.Fatalf("AppendSendResponse: error %v, SendResponseToPB: %v", err, refErr)
	}
	if err == nil {
		sameEncoding[a2apb.SendMessageResponse](t, direct, ref)
	}
}

func TestDirectSendRequest(t *testing.T) {
	reqs := sendRequestCases()
	for _, m := range messageCases() {
		reqs = append(reqs, &a2a.SendMessageRequest{Message: m.msg})
	}
	reqs = append(reqs,
		&a2a.SendMessageRequest{},
		&a2a.SendMessageRequest{Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
			Authentication: &a2a.AuthenticationInfo{}}}, Metadata: map[string]any{}},
		&a2a.SendMessageRequest{Configuration: &a2a.SendMessageConfiguration{HistoryLength: intp(-3), AcceptedOutputModes: []string{""}}},
		&a2a.SendMessageRequest{Configuration: &a2a.SendMessageConfiguration{HistoryLength: intp(1 << 40)}},
		&a2a.SendMessageRequest{Message: &a2a.Message{Metadata: map[string]any{"run": manyMembers(3)}},
			Metadata: map[string]any{"run": appender(`{"input":[{"role":"user","content":"hi"}],"streaming":true}`)}},
		&a2a.SendMessageRequest{Metadata: map[string]any{"f": func() {}}},
		&a2a.SendMessageRequest{Message: &a2a.Message{Parts: []a2a.Part{{Data: json.RawMessage(`{`)}}}},
	)
	var enc pbwire.Encoder
	for i, r := range reqs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			checkDirectRequest(t, &enc, r)
		})
	}
}

// checkDirectRequest wants AppendSendRequest to write what pbwire writes
// for SendRequestToPB, or to fail as it does.
func checkDirectRequest(t *testing.T, enc *pbwire.Encoder, r *a2a.SendMessageRequest) {
	t.Helper()
	var ref []byte
	pb, refErr := SendRequestToPB(r)
	if refErr == nil {
		if ref, refErr = enc.Marshal(nil, pb); refErr != nil {
			t.Fatal(refErr)
		}
	}
	direct, err := AppendSendRequest([]byte("prefix"), r)
	if (err != nil) != (refErr != nil) {
		t.Fatalf("AppendSendRequest: error %v, SendRequestToPB: %v", err, refErr)
	}
	if err == nil {
		if !bytes.HasPrefix(direct, []byte("prefix")) {
			t.Fatalf("AppendSendRequest did not append: %x", direct)
		}
		sameEncoding[a2apb.SendMessageRequest](t, direct[len("prefix"):], ref)
	}
}

func TestDirectRefusesWhatPBRefuses(t *testing.T) {
	for _, ev := range []a2a.Event{
		&a2a.Message{Parts: []a2a.Part{{Data: json.RawMessage(`{`)}}},
		&a2a.Message{Metadata: map[string]any{"f": func() {}}},
	} {
		if _, err := AppendEvent(nil, ev); err == nil {
			t.Errorf("AppendEvent(%#v) succeeded", ev)
		}
	}
	if _, err := AppendSendResponse(nil, &a2a.TaskStatusUpdateEvent{}); err == nil {
		t.Error("AppendSendResponse took a status update")
	}
}

// FuzzDirectEvent reads fuzzed JSON as a stream item (the JSON bindings'
// result of SendStreamingMessage), as each kind of event and as a
// SendMessage request, and wants the direct encoding of each to equal
// pbwire's of the converted message.
func FuzzDirectEvent(f *testing.F) {
	for _, tt := range directCases() {
		b, err := json.Marshal(a2a.Wrap(tt.ev))
		if err != nil {
			continue // what the JSON form has no room for (Go-typed metadata)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":""},{"data":{"a":[0,false,"",null]}}],"metadata":{"k":0}}}`))
	for _, r := range sendRequestCases() {
		if b, err := json.Marshal(r); err == nil {
			f.Add(b)
		}
	}
	var enc pbwire.Encoder
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ev := range []a2a.Event{new(a2a.Task), new(a2a.Message), new(a2a.TaskStatusUpdateEvent), new(a2a.TaskArtifactUpdateEvent)} {
			if a2a.Unmarshal(b, ev) == nil {
				checkDirect(t, &enc, ev)
			}
		}
		var sr a2a.StreamResponse
		if a2a.Unmarshal(b, &sr) == nil {
			if ev, err := sr.Event(); err == nil {
				checkDirect(t, &enc, ev)
			}
		}
		var req a2a.SendMessageRequest
		if a2a.Unmarshal(b, &req) == nil {
			checkDirectRequest(t, &enc, &req)
		}
	})
}

// BenchmarkStreamItem writes a streamed artifact chunk and a status
// update, as the echo agent sends them: by EventToPB then pbwire (the
// server's path before the direct encoding), and directly.
func BenchmarkStreamItem(b *testing.B) {
	events := []a2a.Event{
		&a2a.TaskArtifactUpdateEvent{TaskID: "0193d1f4-7c1e-7b7a-9f00-000000000001", ContextID: "0193d1f4-7c1e-7b7a-9f00-000000000002",
			Artifact: a2a.Artifact{ArtifactID: "0193d1f4-7c1e-7b7a-9f00-000000000003", Parts: []a2a.Part{a2a.TextPart("hello, world")}},
			Append:   true},
		&a2a.TaskStatusUpdateEvent{TaskID: "0193d1f4-7c1e-7b7a-9f00-000000000001", ContextID: "0193d1f4-7c1e-7b7a-9f00-000000000002",
			Status:   a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when},
			Metadata: map[string]any{"model": "offline", "tokens": 12.0}},
	}
	b.Run("EventToPB+pbwire", func(b *testing.B) {
		var enc pbwire.Encoder
		buf := make([]byte, 0, 512)
		b.ReportAllocs()
		for b.Loop() {
			for _, ev := range events {
				pb, err := EventToPB(ev)
				if err != nil {
					b.Fatal(err)
				}
				if buf, err = enc.Marshal(buf[:0], pb); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		buf := make([]byte, 0, 512)
		b.ReportAllocs()
		for b.Loop() {
			for _, ev := range events {
				var err error
				if buf, err = AppendEvent(buf[:0], ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkSendRequest writes a send request whose metadata holds a Go
// value writing its own JSON, as a bridge's run metadata does: by
// SendRequestToPB then pbwire (the client's path before the direct
// encoding), and directly.
func BenchmarkSendRequest(b *testing.B) {
	req := &a2a.SendMessageRequest{
		Message: &a2a.Message{MessageID: "0193d1f4-7c1e-7b7a-9f00-000000000004", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hello")}},
		Metadata: map[string]any{"a2amesh/run": appender(`{"run_path":[{"agent_name":"relay"},{"agent_name":"leaf"}],` +
			`"callers":[{"name":"relay","description":"relays to the leaf"}],` +
			`"input":[{"role":"user","content":"hello"}],"streaming":true}`)},
	}
	b.Run("SendRequestToPB+pbwire", func(b *testing.B) {
		var enc pbwire.Encoder
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			pb, err := SendRequestToPB(req)
			if err != nil {
				b.Fatal(err)
			}
			if buf, err = enc.Marshal(buf[:0], pb); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = AppendSendRequest(buf[:0], req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
