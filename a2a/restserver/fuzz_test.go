package restserver

import (
	"encoding/json"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// FuzzRESTRequest decodes untrusted requests as the binding does: the
// path to a route, then the query and the body to the route's request
// object. Nothing panics; a refusal is a protocol error with a reason, an
// HTTP status and a Status body that is JSON; a request that decodes
// carries the path's task and tenant.
func FuzzRESTRequest(f *testing.F) {
	for _, s := range []struct{ method, path, query, body string }{
		{"POST", "/message:send", "", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}`},
		{"POST", "/acme/message:stream", "", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":2}}`},
		{"GET", "/tasks", "contextId=c&status=TASK_STATE_WORKING&pageSize=5&pageToken=x&historyLength=1&statusTimestampAfter=2025-11-09T10:30:00Z&includeArtifacts=true", ""},
		{"GET", "/acme/tasks/t1", "historyLength=0&tenant=acme", ""},
		{"GET", "/tasks/t1", "currentGeneration=5&historyLength=2", ""},
		{"GET", "/acme/tasks/t1", "currentGeneration=-9223372036854775808", ""},
		{"POST", "/message:send", "", `{"message":{"messageId":"m","taskId":"t1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"ifGenerationMatch":"3"}}`},
		{"POST", "/tasks/t1:cancel", "", `{"metadata":{"k":[1,2]}}`},
		{"GET", "/tasks/t%2F1:subscribe", "", ""},
		{"POST", "/acme/tasks/t1:subscribe", "", `{"id":"t1"}`},
		{"POST", "/tasks/t1/pushNotificationConfigs", "", `{"task_id":"t1","url":"https://example.com/h","authentication":{"scheme":"Bearer"}}`},
		{"GET", "/tasks/t1/pushNotificationConfigs", "pageSize=2", ""},
		{"DELETE", "/acme/tasks/t1/pushNotificationConfigs/c1", "", ""},
		{"GET", "/extendedAgentCard", "", ""},
		{"GET", "/.well-known/agent-card.json", "", ""},
		{"POST", "/tasks/a:b:cancel", "a=%zz", `[`},
		{"PUT", "//tasks//", ";", `"x"`},
	} {
		f.Add(s.method, s.path, s.query, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method, path, query string, body []byte) {
		m, ok := matchPath(path)
		if !ok || m.card {
			return
		}
		if m.allow() == "" {
			t.Fatalf("%s matched a route served with no method", path)
		}
		op := m.forMethod(method)
		if op == 0 {
			return
		}
		m.op = op
		req, err := decodeRequest(m.target, query, body)
		if err != nil {
			if err.Code.Reason() == "" || err.Message == "" {
				t.Fatalf("error without a reason or a message: %#v", err)
			}
			code, status := httpStatus(err)
			if code != 400 && code != 404 {
				t.Fatalf("a request that does not decode answered %d %s: %v", code, status, err)
			}
			if !json.Valid(appendStatus(nil, code, status, err)) {
				t.Fatalf("Status of %v is not JSON", err)
			}
			return
		}
		var tenant, id string
		switch r := req.(type) {
		case *a2a.SendMessageRequest:
			tenant = r.Tenant
		case *a2a.GetTaskRequest:
			tenant, id = r.Tenant, r.ID
		case *a2a.ListTasksRequest:
			tenant = r.Tenant
		case *a2a.CancelTaskRequest:
			tenant, id = r.Tenant, r.ID
		case *a2a.SubscribeToTaskRequest:
			tenant, id = r.Tenant, r.ID
		case *a2a.TaskPushNotificationConfig:
			tenant, id = r.Tenant, r.TaskID
		case *a2a.GetTaskPushNotificationConfigRequest:
			tenant, id = r.Tenant, r.TaskID
		case *a2a.ListTaskPushNotificationConfigsRequest:
			tenant, id = r.Tenant, r.TaskID
		case *a2a.DeleteTaskPushNotificationConfigRequest:
			tenant, id = r.Tenant, r.TaskID
		case *a2a.GetExtendedAgentCardRequest:
			tenant = r.Tenant
		default:
			t.Fatalf("%s decoded to %T", op, req)
		}
		if m.tenant != "" && tenant != m.tenant {
			t.Fatalf("tenant %q, the path's %q", tenant, m.tenant)
		}
		if id != m.id {
			t.Fatalf("task %q, the path's %q", id, m.id)
		}
		if op == jsonrpc.OpSendMessage || op == jsonrpc.OpSendStreamingMessage {
			if _, err := a2a.AppendJSON(nil, req); err != nil {
				t.Fatalf("a decoded request does not encode: %v", err)
			}
		}
	})
}
