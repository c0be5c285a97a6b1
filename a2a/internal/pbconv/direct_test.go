package pbconv

import (
	"bytes"
	"encoding/json"
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
	)
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
// result of SendStreamingMessage) and as each kind of event, and wants the direct encoding
// of its event to equal pbwire's of the converted message.
func FuzzDirectEvent(f *testing.F) {
	for _, tt := range directCases() {
		b, err := json.Marshal(a2a.Wrap(tt.ev))
		if err != nil {
			continue // what the JSON form has no room for (Go-typed metadata)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":""},{"data":{"a":[0,false,"",null]}}],"metadata":{"k":0}}}`))
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
