package pbconv

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/cloudwego/prutal"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// FuzzRequest reads protobuf bytes as the gRPC server reads a request (the
// generated types' decoding, then the conversion to the a2a model), and as
// the client reads an answer: whatever the bytes, the result is a request
// or an error, never a panic; and a request that converts writes back
// (pbwire) to bytes that read as the same request, so that nothing the
// server accepts changes on its way through.
func FuzzRequest(f *testing.F) {
	var enc pbwire.Encoder
	seed := func(msg any) {
		b, err := enc.Marshal(nil, msg)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart("hello"), a2a.TextPart(""), a2a.URLPart("https://x.test/f", "text/plain", "f"),
		a2a.RawPart([]byte{0, 1}, "application/octet-stream", "b"), a2a.Part{Data: json.RawMessage(`{"a":[1,false,""]}`)})
	msg.Metadata = map[string]any{"k": false, "n": 0.0}
	req, err := SendRequestToPB(&a2a.SendMessageRequest{Tenant: "t", Message: msg,
		Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, ReturnImmediately: true,
			IfGenerationMatch: new(a2a.Generation(3))}})
	if err != nil {
		f.Fatal(err)
	}
	seed(req)
	seed(&a2apb.ListTasksRequest{ContextId: "c", PageToken: "p"})
	// Metadata that is not UTF-8 (CI's find): read as the JSON bindings
	// read it, so it writes back unchanged.
	bad, err := prutal.MarshalAppend(nil, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER,
		Parts:    []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "x"}}},
		Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{"k\xff": structpb.NewStringValue("v\xfe")}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(bad)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}) // a length past the end

	f.Fuzz(func(t *testing.T, b []byte) {
		var pb a2apb.SendMessageRequest
		if prutal.Unmarshal(b, &pb) == nil {
			if r, err := SendRequestFromPB(&pb); err == nil {
				again, err := SendRequestToPB(r)
				if err != nil {
					t.Fatalf("a request read from the wire does not convert back: %v", err)
				}
				out, err := enc.Marshal(nil, again)
				if err != nil {
					t.Fatalf("pbwire cannot write a request read from the wire: %v", err)
				}
				var back a2apb.SendMessageRequest
				if err := prutal.Unmarshal(out, &back); err != nil {
					t.Fatalf("pbwire wrote bytes that do not read back: %v", err)
				}
				r2, err := SendRequestFromPB(&back)
				if err != nil || !reflect.DeepEqual(r, r2) {
					t.Fatalf("the request changed on its way through:\n%#v\n%#v (%v)", dump(r), dump(r2), err)
				}
			}
		}
		var list a2apb.ListTasksRequest
		if prutal.Unmarshal(b, &list) == nil {
			_, _ = ListTasksRequestFromPB(&list)
		}
		var ev a2apb.StreamResponse
		if prutal.Unmarshal(b, &ev) == nil {
			_, _ = EventFromPB(&ev)
		}
		var card a2apb.AgentCard
		if prutal.Unmarshal(b, &card) == nil {
			_ = CardFromPB(&card)
		}
	})
}

// dump shows a request with its message and configuration, which %#v prints
// as pointers.
func dump(r *a2a.SendMessageRequest) string {
	if r == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%#v\nmessage %#v\nconfiguration %#v", *r, r.Message, r.Configuration)
}
