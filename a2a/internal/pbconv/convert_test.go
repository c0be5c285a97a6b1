package pbconv

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/prutal"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

var (
	when = time.Date(2026, 11, 24, 1, 2, 3, 456_000_000, time.UTC)
	meta = map[string]any{"n": 1.5, "s": "x", "b": true, "l": []any{"a", 2.0, nil, 0.0, false, ""}, "o": map[string]any{"k": nil},
		"zero": 0.0, "no": false, "empty": ""}
)

func textMsg(id string, role a2a.Role, parts ...a2a.Part) *a2a.Message {
	return &a2a.Message{MessageID: id, Role: role, Parts: parts}
}

func intp(n int) *int { return &n }

// roundTrip converts v to its protobuf form, through the binary wire (as
// the server writes it, with pbwire, and as a Kitex peer reads it, with
// prutal), and back, and wants v again.
func roundTrip[A any, P any](t *testing.T, v A, to func(A) (P, error), from func(P) (A, error)) {
	t.Helper()
	pb, err := to(v)
	if err != nil {
		t.Fatalf("to pb: %v", err)
	}
	var enc pbwire.Encoder
	b, err := enc.Marshal(nil, pb)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	wire := reflect.New(reflect.TypeOf(pb).Elem()).Interface().(P)
	if err := prutal.Unmarshal(b, wire); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	got, err := from(wire)
	if err != nil {
		t.Fatalf("from pb: %v", err)
	}
	if !reflect.DeepEqual(got, v) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(v)
		t.Errorf("round trip changed the value\n got: %s\nwant: %s\n got: %#v\nwant: %#v", g, w, got, v)
	}
}

func ok[A, B any](f func(A) B) func(A) (B, error) { return func(a A) (B, error) { return f(a), nil } }

type messageCase struct {
	name string
	msg  *a2a.Message
}

// messageCases are the messages of the round-trip tests, and of the
// direct encoding's (direct_test.go).
func messageCases() []messageCase {
	return []messageCase{
		{"text", textMsg("m1", a2a.RoleUser, a2a.TextPart("hello"))},
		// The zero values of oneof members: prutal alone would leave them
		// off the wire (see internal/pbwire).
		{"empty text", textMsg("m2", a2a.RoleAgent, a2a.TextPart(""))},
		{"raw", textMsg("m3", a2a.RoleUser, a2a.RawPart([]byte{0, 1, 2, 255}, "application/octet-stream", "f.bin"))},
		{"empty raw", textMsg("m4", a2a.RoleUser, a2a.RawPart(nil, "text/plain", "empty.txt"))},
		{"url", textMsg("m5", a2a.RoleUser, a2a.URLPart("https://example.com/f.pdf", "application/pdf", "f.pdf"))},
		{"data object", textMsg("m6", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`{"a":[1,"x",true,null],"b":{"c":2.5}}`), MediaType: "application/json"})},
		{"data zeros", textMsg("m6z", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`{"b":false,"l":[0,false,""],"n":0,"s":""}`)})},
		{"data scalar", textMsg("m7", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`"just a string"`)})},
		{"data zero scalar", textMsg("m7z", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`0`)})},
		{"data null", textMsg("m8", a2a.RoleUser, a2a.Part{Data: json.RawMessage(`null`)})},
		{"part metadata", textMsg("m9", a2a.RoleUser, a2a.Part{Text: "t", Metadata: meta})},
		{"empty part metadata", textMsg("m10", a2a.RoleUser, a2a.Part{Text: "t", Metadata: map[string]any{}})},
		{"every field", &a2a.Message{
			MessageID: "m11", ContextID: "c1", TaskID: "t1", Role: a2a.RoleAgent,
			Parts:    []a2a.Part{a2a.TextPart("a"), a2a.TextPart(""), a2a.URLPart("https://x.test/", "", "")},
			Metadata: meta, Extensions: []string{"https://ext.test/v1"}, ReferenceTaskIDs: []string{"t0", "t00"},
		}},
		{"no role, no parts", &a2a.Message{MessageID: "m12"}},
	}
}

func TestRoundTripMessages(t *testing.T) {
	for _, tt := range messageCases() {
		t.Run(tt.name, func(t *testing.T) { roundTrip(t, tt.msg, messageToPB, answerFromPB) })
	}
}

// answerFromPB reads a message of a server's answer.
func answerFromPB(m *a2apb.Message) (*a2a.Message, error) { return messageFromPB(m, true) }

// An answer's part without content is an empty text part; a request's is
// refused (TestFromPBRefuses).
func TestAnswerPartWithoutContent(t *testing.T) {
	ev, err := EventFromPB(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_ArtifactUpdate{ArtifactUpdate: &a2apb.TaskArtifactUpdateEvent{
		TaskId: "t", ContextId: "c", Artifact: &a2apb.Artifact{ArtifactId: "a", Parts: []*a2apb.Part{{}}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if p := ev.(*a2a.TaskArtifactUpdateEvent).Artifact.Parts; len(p) != 1 || p[0].Kind() != a2a.PartKindText || p[0].Text != "" {
		t.Errorf("parts %+v, want one empty text part", p)
	}
}

type eventCase struct {
	name string
	ev   a2a.Event
}

// eventCases are the events of the round-trip tests, and of the direct
// encoding's (direct_test.go); the first three are what SendMessage may
// answer.
func eventCases() []eventCase {
	art := a2a.Artifact{ArtifactID: "a1", Name: "echo", Description: "the echo", Parts: []a2a.Part{a2a.TextPart("hi")}, Metadata: meta, Extensions: []string{"e"}}
	status := a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: textMsg("q", a2a.RoleAgent, a2a.TextPart("more?")), Timestamp: when}
	events := []eventCase{
		{"bare task", &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}},
		{"full task", &a2a.Task{
			ID: "t2", ContextID: "c2", Status: status, Artifacts: []a2a.Artifact{art, {ArtifactID: "a2"}},
			History:  []a2a.Message{*textMsg("m1", a2a.RoleUser, a2a.TextPart("x")), *textMsg("m2", a2a.RoleAgent, a2a.TextPart("y"))},
			Metadata: meta, Generation: 9,
		}},
		{"message", textMsg("m3", a2a.RoleAgent, a2a.TextPart("direct reply"))},
		{"status update", &a2a.TaskStatusUpdateEvent{TaskID: "t3", ContextID: "c3", Status: status, Metadata: meta, Generation: 5}},
		{"artifact update", &a2a.TaskArtifactUpdateEvent{TaskID: "t4", ContextID: "c4", Artifact: art, Append: true, LastChunk: true, Metadata: meta, Generation: 1 << 40}},
	}
	for _, s := range []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateCompleted, a2a.TaskStateFailed,
		a2a.TaskStateCanceled, a2a.TaskStateInputRequired, a2a.TaskStateRejected, a2a.TaskStateAuthRequired} {
		events = append(events, eventCase{string(s), a2a.NewStatusUpdate("t", "c", s, nil)})
	}
	return events
}

func TestRoundTripTasksAndEvents(t *testing.T) {
	events := eventCases()
	for _, tt := range events {
		t.Run(tt.name, func(t *testing.T) { roundTrip(t, tt.ev, EventToPB, EventFromPB) })
	}
	for _, tt := range events[:3] { // a task or a message: what SendMessage answers
		t.Run("send response "+tt.name, func(t *testing.T) { roundTrip(t, tt.ev, SendResponseToPB, SendResponseFromPB) })
	}
}

var push = &a2a.TaskPushNotificationConfig{
	Tenant: "ten", ID: "p1", TaskID: "t1", URL: "https://hook.test/", Token: "tok",
	Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
}

// sendRequestCases are the SendMessage requests of the round-trip tests,
// and of the direct encoding's.
func sendRequestCases() []*a2a.SendMessageRequest {
	return []*a2a.SendMessageRequest{
		{Message: textMsg("m1", a2a.RoleUser, a2a.TextPart("hi"))},
		{Tenant: "ten", Message: textMsg("m2", a2a.RoleUser, a2a.TextPart("hi")), Metadata: meta,
			Configuration: &a2a.SendMessageConfiguration{
				AcceptedOutputModes: []string{"text/plain"}, TaskPushNotificationConfig: push,
				HistoryLength: intp(0), ReturnImmediately: true, IfGenerationMatch: new(a2a.Generation(12)),
			}},
		{Message: textMsg("m3", a2a.RoleUser), Configuration: &a2a.SendMessageConfiguration{HistoryLength: intp(7)}},
		// An optional field set to 0 is on the wire, unlike an unset one.
		{Message: textMsg("m4", a2a.RoleUser), Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: new(a2a.Generation(0))}},
	}
}

func TestRoundTripRequests(t *testing.T) {
	t.Run("send", func(t *testing.T) {
		for _, req := range sendRequestCases() {
			roundTrip(t, req, SendRequestToPB, SendRequestFromPB)
		}
	})
	t.Run("get task", func(t *testing.T) {
		for _, req := range []*a2a.GetTaskRequest{
			{ID: "t"},
			{Tenant: "ten", ID: "t", HistoryLength: intp(0), CurrentGeneration: new(a2a.Generation(0))},
			{ID: "t", CurrentGeneration: new(a2a.Generation(-4))},
		} {
			roundTrip(t, req, ok(GetTaskRequestToPB), ok(GetTaskRequestFromPB))
		}
	})
	t.Run("list tasks", func(t *testing.T) {
		after := when
		for _, req := range []*a2a.ListTasksRequest{
			{},
			{Tenant: "ten", ContextID: "c", Status: a2a.TaskStateWorking, PageSize: intp(10), PageToken: "p",
				HistoryLength: intp(2), StatusTimestampAfter: &after, IncludeArtifacts: true},
		} {
			roundTrip(t, req, ok(ListTasksRequestToPB), ListTasksRequestFromPB)
		}
		resp := &a2a.ListTasksResponse{
			Tasks:         []*a2a.Task{{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: when}}},
			NextPageToken: "next", PageSize: 1, TotalSize: 3,
		}
		roundTrip(t, resp, ListTasksResponseToPB, ListTasksResponseFromPB)
		roundTrip(t, &a2a.ListTasksResponse{Tasks: []*a2a.Task{}}, ListTasksResponseToPB, ListTasksResponseFromPB)
	})
	t.Run("push configs", func(t *testing.T) {
		roundTrip(t, push, ok(PushConfigToPB), ok(PushConfigFromPB))
		roundTrip(t, &a2a.TaskPushNotificationConfig{URL: "https://hook.test/"}, ok(PushConfigToPB), ok(PushConfigFromPB))
		resp := &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{*push}, NextPageToken: "n"}
		roundTrip(t, resp, ok(ListPushConfigsResponseToPB), ok(ListPushConfigsResponseFromPB))
	})
}

func TestRoundTripCard(t *testing.T) {
	scopes := map[string]string{"read": "read things"}
	card := &a2a.AgentCard{
		Name: "n", Description: "d", Version: "1.2.3", DocumentationURL: "https://doc.test/", IconURL: "https://icon.test/",
		SupportedInterfaces: []a2a.AgentInterface{{URL: "https://a.test/", ProtocolBinding: a2a.BindingGRPC, Tenant: "t", ProtocolVersion: a2a.Version}},
		Provider:            &a2a.AgentProvider{URL: "https://p.test/", Organization: "org"},
		Capabilities: a2a.AgentCapabilities{Streaming: true, PushNotifications: true, ExtendedAgentCard: true,
			Extensions: []a2a.AgentExtension{{URI: "https://ext.test/", Description: "x", Required: true, Params: meta}}},
		SecuritySchemes: map[string]a2a.SecurityScheme{
			"key":    {APIKey: &a2a.APIKeySecurityScheme{Description: "k", Location: "header", Name: "X-Key"}},
			"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
			"oidc":   {OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{OpenIDConnectURL: "https://oidc.test/"}},
			"mtls":   {MutualTLS: &a2a.MutualTLSSecurityScheme{Description: "m"}},
			"code": {OAuth2: &a2a.OAuth2SecurityScheme{OAuth2MetadataURL: "https://o.test/", Flows: a2a.OAuthFlows{
				AuthorizationCode: &a2a.AuthorizationCodeOAuthFlow{AuthorizationURL: "https://o.test/a", TokenURL: "https://o.test/t", Scopes: scopes, PKCERequired: true}}}},
			"cc": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
				ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://o.test/t", RefreshURL: "https://o.test/r", Scopes: scopes}}}},
			"implicit": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
				Implicit: &a2a.ImplicitOAuthFlow{AuthorizationURL: "https://o.test/a", Scopes: scopes}}}},
			"password": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
				Password: &a2a.PasswordOAuthFlow{TokenURL: "https://o.test/t", Scopes: scopes}}}},
			"device": {OAuth2: &a2a.OAuth2SecurityScheme{Flows: a2a.OAuthFlows{
				DeviceCode: &a2a.DeviceCodeOAuthFlow{DeviceAuthorizationURL: "https://o.test/d", TokenURL: "https://o.test/t", Scopes: scopes}}}},
		},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string][]string{"code": {"read"}, "key": {}}}},
		DefaultInputModes:    []string{"text/plain"},
		DefaultOutputModes:   []string{"text/plain", "application/json"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "d", Tags: []string{"t"}, Examples: []string{"e"},
			InputModes: []string{"i"}, OutputModes: []string{"o"},
			SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string][]string{"bearer": {}}}}}},
		Signatures: []a2a.AgentCardSignature{{Protected: "p", Signature: "s", Header: map[string]any{"kid": "k1"}}},
	}
	roundTrip(t, card, CardToPB, ok(CardFromPB))
	roundTrip(t, &a2a.AgentCard{Name: "bare"}, CardToPB, ok(CardFromPB))
}

// Requests the JSON decoder would refuse are refused here too, with the
// field's path.
func TestFromPBRefuses(t *testing.T) {
	msg := func(parts ...*a2apb.Part) *a2apb.SendMessageRequest {
		return &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: "m", Role: a2apb.Role_ROLE_USER, Parts: parts}}
	}
	tests := []struct {
		name string
		req  *a2apb.SendMessageRequest
		want string
	}{
		{"part without content", msg(&a2apb.Part{}), "message.parts[0].part has no content"},
		{"empty url", msg(&a2apb.Part{Content: &a2apb.Part_Text{Text: "a"}}, &a2apb.Part{Content: &a2apb.Part_Url{}}), "message.parts[1].url: must not be empty"},
		{"unknown role", &a2apb.SendMessageRequest{Message: &a2apb.Message{Role: 9}}, "message.role: unknown role 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SendRequestFromPB(tt.req)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want one starting %q", err, tt.want)
			}
		})
	}
	if _, err := ListTasksRequestFromPB(&a2apb.ListTasksRequest{Status: 42}); err == nil || err.Error() != "status: unknown task state 42" {
		t.Errorf("unknown state: error %v", err)
	}
}
