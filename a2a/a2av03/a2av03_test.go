package a2av03

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

func sampleTask() *a2a.Task {
	ts := time.Date(2025, 3, 15, 10, 0, 0, 5_000_000, time.UTC)
	return &a2a.Task{
		ID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{
			State:     a2a.TaskStateInputRequired,
			Message:   &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("which city?")}},
			Timestamp: ts,
		},
		Artifacts: []a2a.Artifact{{
			ArtifactID: "a1", Name: "report",
			Parts: []a2a.Part{
				a2a.TextPart("hello"),
				a2a.RawPart([]byte("png"), "image/png", "x.png"),
				a2a.URLPart("https://example.com/f", "text/plain", "f.txt"),
				{Data: json.RawMessage(`{"k":[1,2]}`)},
			},
		}},
		History:  []a2a.Message{{MessageID: "m1", TaskID: "t1", ContextID: "c1", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("book a flight")}}},
		Metadata: map[string]any{"x": "y"},
	}
}

func TestTaskRoundTrip(t *testing.T) {
	task := sampleTask()
	b, err := json.Marshal(FromTask(task))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"kind":"task"`, `"state":"input-required"`, `"role":"user"`, `"kind":"file"`, `"bytes":"cG5n"`, `"uri":"https://example.com/f"`, `"kind":"data"`, `"timestamp":"2025-03-15T10:00:00.005Z"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("0.3 JSON lacks %s: %s", want, b)
		}
	}
	ev, err := DecodeEvent(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ev, task) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", ev, task)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	events := []a2a.Event{
		a2a.NewTextMessage(a2a.RoleAgent, "hi"),
		&a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}},
		&a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("x")}}, Append: true, LastChunk: true},
	}
	for _, ev := range events {
		b, err := json.Marshal(FromEvent(ev))
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeEvent(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !reflect.DeepEqual(got, ev) {
			t.Fatalf("round trip %s:\n got %#v\nwant %#v", b, got, ev)
		}
	}
}

func TestStatusUpdateFinal(t *testing.T) {
	for state, final := range map[a2a.TaskState]bool{
		a2a.TaskStateWorking: false, a2a.TaskStateCompleted: true, a2a.TaskStateInputRequired: true, a2a.TaskStateCanceled: true,
	} {
		e := FromEvent(&a2a.TaskStatusUpdateEvent{Status: a2a.TaskStatus{State: state}}).(*TaskStatusUpdateEvent)
		if e.Final != final || e.Kind != KindStatusUpdate {
			t.Errorf("%s: final = %v kind = %q", state, e.Final, e.Kind)
		}
	}
}

func TestNonObjectDataIsWrapped(t *testing.T) {
	p := FromPart(&a2a.Part{Data: json.RawMessage(`[1,2]`)})
	if string(p.Data) != `{"value":[1,2]}` {
		t.Fatalf("data = %s", p.Data)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := map[string]string{
		"no kind":           `{"id":"t"}`,
		"unknown kind":      `{"kind":"thing"}`,
		"bad state":         `{"kind":"task","id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}`,
		"bad role":          `{"kind":"message","messageId":"m","role":"ROLE_USER","parts":[]}`,
		"part no kind":      `{"kind":"message","messageId":"m","role":"user","parts":[{"text":"x"}]}`,
		"file both":         `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"eA==","uri":"u"}}]}`,
		"file neither":      `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{}}]}`,
		"data not object":   `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"data","data":[1]}]}`,
		"bad bytes":         `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"bytes":"***"}}]}`,
		"text part no text": `{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text"}]}`,
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			if ev, err := DecodeEvent([]byte(in)); err == nil {
				t.Fatalf("decoded: %#v", ev)
			}
		})
	}
}

func TestTimestampShapes(t *testing.T) {
	want := time.Date(2025, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	for _, in := range []string{`"2025-01-02T03:04:05.6Z"`, `"2025-01-02T04:04:05.6+01:00"`, `"2025-01-02T03:04:05.600000"`} {
		var ts Timestamp
		if err := json.Unmarshal([]byte(in), &ts); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !ts.Equal(want) {
			t.Fatalf("%s = %v", in, ts.Time)
		}
	}
}

func TestSendParams(t *testing.T) {
	in := `{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]},
	"configuration":{"blocking":false,"historyLength":2,"pushNotificationConfig":{"url":"https://h/w","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"c"}}}}`
	var p MessageSendParams
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	req, err := p.ToSendMessageRequest()
	if err != nil {
		t.Fatal(err)
	}
	c := req.Configuration
	if !c.ReturnImmediately || *c.HistoryLength != 2 || c.TaskPushNotificationConfig.Authentication.Scheme != "Bearer" || req.Message.Text() != "hi" {
		t.Fatalf("converted: %+v %+v", req, c)
	}
	var blocking MessageSendParams
	if err := json.Unmarshal([]byte(`{"message":{"kind":"message","messageId":"m","role":"user","parts":[]},"configuration":{}}`), &blocking); err != nil {
		t.Fatal(err)
	}
	r2, _ := blocking.ToSendMessageRequest()
	if r2.Configuration.ReturnImmediately {
		t.Fatal("absent blocking must mean blocking")
	}
	back := FromSendMessageRequest(req)
	if *back.Configuration.Blocking || back.Configuration.PushNotificationConfig.Authentication.Schemes[0] != "Bearer" {
		t.Fatalf("back: %+v", back.Configuration)
	}
}

func TestPushConfigDefaultsIDToTask(t *testing.T) {
	c := (&PushNotificationConfig{URL: "https://x"}).ToPushConfig("task-1")
	if c.ID != "task-1" || c.TaskID != "task-1" {
		t.Fatalf("%+v", c)
	}
}

func TestCardUnion(t *testing.T) {
	card := &a2a.AgentCard{
		Name: "echo", Description: "echoes", Version: "1.0.0",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "http://h/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
			{URL: "http://h/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"},
		},
		Capabilities:         a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true},
		SecuritySchemes:      map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}, "key": {APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: "X-API-Key"}}},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string][]string{"bearer": {}}}},
		DefaultInputModes:    []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "echo", Name: "Echo", Description: "echo", Tags: []string{"test"}}},
	}
	b, err := CardJSON(card)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"url":"http://h/"`, `"preferredTransport":"JSONRPC"`, `"protocolVersion":"0.3"`, `"supportsAuthenticatedExtendedCard":true`, `"type":"http"`, `"httpAuthSecurityScheme":{"scheme":"Bearer"}`, `"security":[{"bearer":[]}]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("card lacks %s: %s", want, b)
		}
	}
	got, err := ParseCard(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, card) {
		t.Fatalf("round trip:\n got %#v\nwant %#v", got, card)
	}
}

func TestParseCard03(t *testing.T) {
	in := `{"name":"n","description":"d","version":"1","url":"http://a/rpc","protocolVersion":"0.3",
	"additionalInterfaces":[{"url":"http://a/rpc","transport":"JSONRPC"},{"url":"a:50051","transport":"GRPC"}],
	"capabilities":{"streaming":true},"supportsAuthenticatedExtendedCard":true,
	"securitySchemes":{"k":{"type":"apiKey","in":"header","name":"X-Key"}},"security":[{"k":[]}],
	"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}`
	card, err := ParseCard([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []a2a.AgentInterface{
		{URL: "http://a/rpc", ProtocolBinding: "JSONRPC", ProtocolVersion: "0.3"},
		{URL: "a:50051", ProtocolBinding: "GRPC", ProtocolVersion: "0.3"},
	}
	if !reflect.DeepEqual(card.SupportedInterfaces, want) {
		t.Fatalf("interfaces = %+v", card.SupportedInterfaces)
	}
	if !card.Capabilities.ExtendedAgentCard || card.SecuritySchemes["k"].APIKey.Name != "X-Key" || len(card.SecurityRequirements) != 1 {
		t.Fatalf("card = %+v", card)
	}
	if _, err := ParseCard([]byte(`{"name":"n"}`)); err == nil {
		t.Fatal("card without endpoint accepted")
	}
}
