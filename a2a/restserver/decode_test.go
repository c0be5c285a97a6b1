package restserver

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

func TestMatchPath(t *testing.T) {
	type want struct {
		get, post, del   jsonrpc.Op
		tenant, id, cfg  string
		card, notMatched bool
	}
	for _, tt := range []struct {
		path string
		want want
	}{
		{"/message:send", want{post: jsonrpc.OpSendMessage}},
		{"/message:stream", want{post: jsonrpc.OpSendStreamingMessage}},
		{"/tasks", want{get: jsonrpc.OpListTasks}},
		{"/extendedAgentCard", want{get: jsonrpc.OpGetExtendedAgentCard}},
		{"/tasks/t1", want{get: jsonrpc.OpGetTask, id: "t1"}},
		{"/tasks/t1:cancel", want{post: jsonrpc.OpCancelTask, id: "t1"}},
		{"/tasks/t1:subscribe", want{get: jsonrpc.OpSubscribeToTask, post: jsonrpc.OpSubscribeToTask, id: "t1"}},
		{"/tasks/t1/pushNotificationConfigs", want{get: jsonrpc.OpListPushConfigs, post: jsonrpc.OpCreatePushConfig, id: "t1"}},
		{"/tasks/t1/pushNotificationConfigs/c1", want{get: jsonrpc.OpGetPushConfig, del: jsonrpc.OpDeletePushConfig, id: "t1", cfg: "c1"}},
		{"/acme/message:send", want{post: jsonrpc.OpSendMessage, tenant: "acme"}},
		{"/acme/tasks", want{get: jsonrpc.OpListTasks, tenant: "acme"}},
		{"/acme/tasks/t1:cancel", want{post: jsonrpc.OpCancelTask, tenant: "acme", id: "t1"}},
		{"/acme/tasks/t1/pushNotificationConfigs/c1", want{get: jsonrpc.OpGetPushConfig, del: jsonrpc.OpDeletePushConfig, tenant: "acme", id: "t1", cfg: "c1"}},
		{"/acme/extendedAgentCard", want{get: jsonrpc.OpGetExtendedAgentCard, tenant: "acme"}},
		// Escapes belong to the value they are in; the verb follows the
		// last colon, and a colon without a verb is the id's.
		{"/tasks/a%2Fb:cancel", want{post: jsonrpc.OpCancelTask, id: "a/b"}},
		{"/tasks/a%3Acancel", want{get: jsonrpc.OpGetTask, id: "a:cancel"}},
		{"/tasks/a:b:cancel", want{post: jsonrpc.OpCancelTask, id: "a:b"}},
		{"/tasks/a:b", want{get: jsonrpc.OpGetTask, id: "a:b"}},
		{"/ac%20me/tasks/t%201", want{get: jsonrpc.OpGetTask, tenant: "ac me", id: "t 1"}},
		// A path that is a route without a tenant is that route.
		{"/tasks/tasks", want{get: jsonrpc.OpGetTask, id: "tasks"}},
		{"/tasks/tasks/x", want{get: jsonrpc.OpGetTask, tenant: "tasks", id: "x"}},
		{"/.well-known/agent-card.json", want{card: true}},
		{"", want{notMatched: true}},
		{"/", want{notMatched: true}},
		{"tasks", want{notMatched: true}},
		{"/tasks/", want{notMatched: true}},
		{"/tasks/:cancel", want{notMatched: true}},
		{"//tasks", want{get: jsonrpc.OpListTasks}},
		{"/acme//tasks//t1:cancel", want{post: jsonrpc.OpCancelTask, tenant: "acme", id: "t1"}},
		{"/tasks/%zz", want{notMatched: true}},
		{"/tasks/x/pushNotificationConfigs/", want{notMatched: true}},
		{"/a/tasks/x/pushNotificationConfigs/c/d", want{notMatched: true}},
		{"/a/b/c/d/e/f", want{notMatched: true}},
		{"/tasks/x/pushNotificationConfigs/c/d", want{notMatched: true}},
		{"/message:send/", want{notMatched: true}},
		{"/Tasks", want{notMatched: true}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			m, ok := matchPath(tt.path)
			if ok == tt.want.notMatched {
				t.Fatalf("matched %v, want %v", ok, !tt.want.notMatched)
			}
			got := want{get: m.get, post: m.post, del: m.del, tenant: m.tenant, id: m.id, cfg: m.configID, card: m.card, notMatched: !ok}
			if ok && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestDecodeRequest(t *testing.T) {
	ptr := func(n int) *int { return &n }
	when := time.Date(2025, 11, 9, 10, 30, 0, 0, time.UTC)
	msg := &a2a.Message{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hi")}}
	for _, tt := range []struct {
		name  string
		rt    target
		query string
		body  string
		want  any
		code  a2a.ErrorCode
	}{
		{name: "send", rt: target{op: jsonrpc.OpSendMessage, tenant: "acme"},
			body: `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
			want: &a2a.SendMessageRequest{Tenant: "acme", Message: msg}},
		{name: "send, the same tenant in the body", rt: target{op: jsonrpc.OpSendMessage, tenant: "acme"},
			body: `{"tenant":"acme","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
			want: &a2a.SendMessageRequest{Tenant: "acme", Message: msg}},
		{name: "send, the tenant in the body alone", rt: target{op: jsonrpc.OpSendMessage},
			body: `{"tenant":"acme","message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`,
			want: &a2a.SendMessageRequest{Tenant: "acme", Message: msg}},
		{name: "send, another tenant in the body", rt: target{op: jsonrpc.OpSendMessage, tenant: "acme"},
			body: `{"tenant":"other"}`, code: a2a.CodeInvalidParams},
		{name: "send, body not JSON", rt: target{op: jsonrpc.OpSendMessage}, body: `{`, code: a2a.CodeParseError},
		{name: "send, body an array", rt: target{op: jsonrpc.OpSendMessage}, body: ` [1]`, code: a2a.CodeInvalidRequest},
		{name: "send, member of the wrong type", rt: target{op: jsonrpc.OpSendMessage}, body: `{"configuration":{"historyLength":"x"}}`, code: a2a.CodeInvalidParams},
		{name: "cancel, empty body", rt: target{op: jsonrpc.OpCancelTask, id: "t"}, want: &a2a.CancelTaskRequest{ID: "t"}},
		{name: "cancel, metadata", rt: target{op: jsonrpc.OpCancelTask, id: "t", tenant: "x"}, body: `{"metadata":{"k":"v"}}`,
			want: &a2a.CancelTaskRequest{ID: "t", Tenant: "x", Metadata: map[string]any{"k": "v"}}},
		{name: "cancel, another id", rt: target{op: jsonrpc.OpCancelTask, id: "t"}, body: `{"id":"u"}`, code: a2a.CodeInvalidParams},
		{name: "subscribe", rt: target{op: jsonrpc.OpSubscribeToTask, id: "t"}, query: "tenant=x", want: &a2a.SubscribeToTaskRequest{ID: "t", Tenant: "x"}},
		{name: "subscribe, tenants differ", rt: target{op: jsonrpc.OpSubscribeToTask, id: "t"}, query: "tenant=x", body: `{"tenant":"y"}`, code: a2a.CodeInvalidParams},
		{name: "create push config", rt: target{op: jsonrpc.OpCreatePushConfig, id: "t"}, body: `{"task_id":"t","url":"https://e.example/h"}`,
			want: &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://e.example/h"}},
		{name: "get task", rt: target{op: jsonrpc.OpGetTask, id: "t"}, query: "historyLength=3&unknown=1", want: &a2a.GetTaskRequest{ID: "t", HistoryLength: ptr(3)}},
		{name: "get task, empty historyLength", rt: target{op: jsonrpc.OpGetTask, id: "t"}, query: "historyLength=", want: &a2a.GetTaskRequest{ID: "t"}},
		{name: "get task, tenant in the query", rt: target{op: jsonrpc.OpGetTask, id: "t"}, query: "tenant=q", want: &a2a.GetTaskRequest{ID: "t", Tenant: "q"}},
		{name: "get task, tenant in the path and query", rt: target{op: jsonrpc.OpGetTask, id: "t", tenant: "p"}, query: "tenant=p", want: &a2a.GetTaskRequest{ID: "t", Tenant: "p"}},
		{name: "get task, tenants differ", rt: target{op: jsonrpc.OpGetTask, id: "t", tenant: "p"}, query: "tenant=q", code: a2a.CodeInvalidParams},
		{name: "get task, body ignored", rt: target{op: jsonrpc.OpGetTask, id: "t"}, body: `not json`, want: &a2a.GetTaskRequest{ID: "t"}},
		{name: "list tasks", rt: target{op: jsonrpc.OpListTasks, tenant: "a"},
			query: "contextId=c&status=TASK_STATE_WORKING&pageSize=7&pageToken=tok&historyLength=0&statusTimestampAfter=2025-11-09T10%3A30%3A00Z&includeArtifacts=true",
			want: &a2a.ListTasksRequest{Tenant: "a", ContextID: "c", Status: a2a.TaskStateWorking, PageSize: ptr(7), PageToken: "tok",
				HistoryLength: ptr(0), StatusTimestampAfter: &when, IncludeArtifacts: true}},
		{name: "list tasks, a2a-go's lastUpdatedAfter", rt: target{op: jsonrpc.OpListTasks}, query: "lastUpdatedAfter=2025-11-09T10:30:00Z",
			want: &a2a.ListTasksRequest{StatusTimestampAfter: &when}},
		{name: "list tasks, includeArtifacts=false", rt: target{op: jsonrpc.OpListTasks}, query: "includeArtifacts=false", want: &a2a.ListTasksRequest{}},
		{name: "list tasks, bad pageSize", rt: target{op: jsonrpc.OpListTasks}, query: "pageSize=1.5", code: a2a.CodeInvalidParams},
		{name: "list tasks, bad query", rt: target{op: jsonrpc.OpListTasks}, query: "a=%", code: a2a.CodeInvalidParams},
		{name: "list push configs", rt: target{op: jsonrpc.OpListPushConfigs, id: "t"}, query: "pageSize=2&pageToken=p",
			want: &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t", PageSize: 2, PageToken: "p"}},
		{name: "get push config", rt: target{op: jsonrpc.OpGetPushConfig, id: "t", configID: "c", tenant: "x"},
			want: &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "c", Tenant: "x"}},
		{name: "delete push config", rt: target{op: jsonrpc.OpDeletePushConfig, id: "t", configID: "c"},
			want: &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "c"}},
		{name: "extended card", rt: target{op: jsonrpc.OpGetExtendedAgentCard, tenant: "x"}, want: &a2a.GetExtendedAgentCardRequest{Tenant: "x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeRequest(tt.rt, tt.query, []byte(tt.body))
			if tt.code != 0 {
				if err == nil || err.Code != tt.code {
					t.Fatalf("error %v, want code %d", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tt.want)
				t.Errorf("got %s, want %s", g, w)
			}
		})
	}
}

// Every code has the HTTP status of specification §5.4 (and, for the
// JSON-RPC codes, of what HTTP says of the failure).
func TestHTTPStatus(t *testing.T) {
	for _, tt := range []struct {
		err    *a2a.Error
		code   int
		status string
	}{
		{a2a.Errorf(a2a.CodeTaskNotFound, "x"), 404, "NOT_FOUND"},
		{a2a.Errorf(a2a.CodeTaskNotCancelable, "x"), 400, "FAILED_PRECONDITION"},
		{a2a.Errorf(a2a.CodePushNotificationNotSupported, "x"), 400, "FAILED_PRECONDITION"},
		{a2a.Errorf(a2a.CodeUnsupportedOperation, "x"), 400, "FAILED_PRECONDITION"},
		{a2a.Errorf(a2a.CodeContentTypeNotSupported, "x"), 400, "INVALID_ARGUMENT"},
		{a2a.Errorf(a2a.CodeInvalidAgentResponse, "x"), 500, "INTERNAL"},
		{a2a.Errorf(a2a.CodeExtendedAgentCardNotConfigured, "x"), 400, "FAILED_PRECONDITION"},
		{a2a.Errorf(a2a.CodeExtensionSupportRequired, "x"), 400, "FAILED_PRECONDITION"},
		{a2a.Errorf(a2a.CodeVersionNotSupported, "x"), 400, "FAILED_PRECONDITION"},
		{a2a.Errorf(a2a.CodeTaskGenerationMismatch, "x"), 409, "ABORTED"},
		{a2a.Errorf(a2a.CodeParseError, "x"), 400, "INVALID_ARGUMENT"},
		{a2a.Errorf(a2a.CodeInvalidRequest, "x"), 400, "INVALID_ARGUMENT"},
		{a2a.Errorf(a2a.CodeInvalidParams, "x"), 400, "INVALID_ARGUMENT"},
		{a2a.Errorf(a2a.CodeMethodNotFound, "x"), 404, "NOT_FOUND"},
		{a2a.Errorf(a2a.CodeInternal, "x"), 500, "INTERNAL"},
		{a2a.Busy(1500*time.Millisecond, "x"), 503, "UNAVAILABLE"},
		{&a2a.Error{Code: -1}, 500, "INTERNAL"},
	} {
		t.Run(tt.err.Code.String(), func(t *testing.T) {
			code, status := httpStatus(tt.err)
			if code != tt.code || status != tt.status {
				t.Errorf("%d %s, want %d %s", code, status, tt.code, tt.status)
			}
		})
	}
}

func TestAppendStatus(t *testing.T) {
	e := a2a.Busy(1500*time.Millisecond, "too busy \"now\"")
	e.Details = []any{map[string]any{"@type": "type.googleapis.com/google.rpc.DebugInfo", "detail": "x"}, func() {}}
	got := string(appendStatus(nil, 503, "UNAVAILABLE", e))
	want := `{"error":{"code":503,"status":"UNAVAILABLE","message":"too busy \"now\"","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INTERNAL_ERROR","domain":"a2a-protocol.org"},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"},` +
		`{"@type":"type.googleapis.com/google.rpc.DebugInfo","detail":"x"}]}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := string(appendStatus(nil, 500, "INTERNAL", &a2a.Error{Code: -1})); got != `{"error":{"code":500,"status":"INTERNAL","message":"error -1","details":[]}}` {
		t.Errorf("an unknown code: %s", got)
	}
}

func TestResponseType(t *testing.T) {
	for _, tt := range []struct{ accept, contentType, want string }{
		{"", "", mediaJSON},
		{"*/*", "application/a2a+json", mediaA2A},
		{"*/*", "application/a2a+json; charset=utf-8", mediaA2A},
		{"application/a2a+json, application/json", "application/json", mediaA2A},
		{"application/json, application/a2a+json;q=0.9", "", mediaJSON},
		{"application/a2a+json;q=0", "", mediaJSON},
		{"application/json;q=0, application/a2a+json;q=0", "application/a2a+json", mediaA2A},
		{"application/json;q=bad", "", mediaJSON},
		{"text/html, application/json;q=0.1", "", mediaJSON},
		{"application/vnd.other+json", "", mediaJSON},
	} {
		if got := responseType([]byte(tt.accept), []byte(tt.contentType)); got != tt.want {
			t.Errorf("Accept %q, Content-Type %q: %s, want %s", tt.accept, tt.contentType, got, tt.want)
		}
	}
}
