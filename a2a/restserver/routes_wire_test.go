package restserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// routeCase is one request on one route and what its answer must be.
type routeCase struct {
	name    string
	verb    string
	path    string // after the tenant; $DONE, $INPUT and $CANCEL name tasks
	body    string
	headers map[string]string
	status  int
	media   string // the answer's Content-Type; "" is application/json
	check   func(t *testing.T, body json.RawMessage)
}

// TestRoutes calls every route of the binding, at the root and under a
// tenant, and checks the whole answer: status, Content-Type and body.
func TestRoutes(t *testing.T) {
	card := echoCard()
	card.Capabilities.ExtendedAgentCard = true
	extended := echoCard()
	extended.Name = "echo (extended)"
	w := serve(t, server.Config{Card: card, ExtendedCard: extended, Executor: fastEcho()}, restserver.Config{})

	for _, tenant := range []string{"", "/acme"} {
		t.Run("tenant="+tenant, func(t *testing.T) {
			w := w.on(t)
			// A task is its tenant's: the routes under /acme reach the
			// tasks made under /acme.
			send := func(text string) json.RawMessage {
				return w.do("POST", tenant+"/message:send", `{"message":`+msg(text)+`}`, nil).ok(t)
			}
			done := str(t, send("hi"), "task.id")
			input := func() string { return str(t, send("input: more"), "task.id") }
			inputID, cancelID := input(), input()
			fill := strings.NewReplacer("$DONE", done, "$INPUT", inputID, "$CANCEL", cancelID)
			for _, tc := range routeCases() {
				t.Run(tc.name, func(t *testing.T) {
					r := w.on(t).do(tc.verb, tenant+fill.Replace(tc.path), fill.Replace(tc.body), tc.headers)
					if r.status != tc.status {
						t.Fatalf("HTTP %d, want %d: %s", r.status, tc.status, r.body)
					}
					media := tc.media
					if media == "" {
						media = "application/json"
					}
					checkContentType(t, r.header, media)
					if tc.check != nil {
						tc.check(t, r.body)
					}
				})
			}
		})
	}
}

func routeCases() []routeCase {
	task := func(state string) func(*testing.T, json.RawMessage) {
		return func(t *testing.T, b json.RawMessage) {
			if got := str(t, b, "status.state"); got != state {
				t.Errorf("state %s, want %s", got, state)
			}
		}
	}
	return []routeCase{
		{name: "POST message:send", verb: "POST", path: "/message:send", body: `{"message":` + msg("hello") + `}`, status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if got := str(t, b, "task.status.state"); got != "TASK_STATE_COMPLETED" {
					t.Errorf("state %s", got)
				}
				if got := str(t, b, "task.artifacts.0.parts.0.text"); got != "hello" {
					t.Errorf("echo %q", got)
				}
			}},
		{name: "POST message:send as application/a2a+json", verb: "POST", path: "/message:send", body: `{"message":` + msg("hello") + `}`,
			headers: hdr("Content-Type", "application/a2a+json"), status: 200, media: "application/a2a+json"},
		{name: "POST message:send, Accept of @a2a-js/sdk", verb: "POST", path: "/message:send", body: `{"message":` + msg("hello") + `}`,
			headers: hdr("Accept", "application/a2a+json, application/json"), status: 200, media: "application/a2a+json"},
		{name: "POST message:send, Accept of a2a-go", verb: "POST", path: "/message:send", body: `{"message":` + msg("hello") + `}`,
			headers: hdr("Content-Type", "application/a2a+json", "Accept", "application/json"), status: 200},
		{name: "POST message:send, snake_case members", verb: "POST", path: "/message:send",
			body: `{"message":` + msg("hello") + `,"configuration":{"historyLength":0},"metadata":{"a_b":1}}`, status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if has(t, path(t, b, "task"), "history") {
					t.Error("historyLength 0 kept the history")
				}
			}},
		{name: "GET tasks", verb: "GET", path: "/tasks", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				for _, k := range []string{"tasks", "nextPageToken", "pageSize", "totalSize"} {
					if !has(t, b, k) {
						t.Errorf("no %s in %s", k, b)
					}
				}
			}},
		{name: "GET tasks with every parameter", verb: "GET",
			path:   "/tasks?contextId=none&status=TASK_STATE_COMPLETED&pageSize=5&historyLength=0&statusTimestampAfter=2020-01-01T00:00:00Z&includeArtifacts=true",
			status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if got := string(path(t, b, "tasks")); got != "[]" {
					t.Errorf("tasks of context none: %s", got)
				}
				if got := string(path(t, b, "pageSize")); got != "5" {
					t.Errorf("pageSize %s", got)
				}
			}},
		{name: "GET tasks, status filter", verb: "GET", path: "/tasks?status=TASK_STATE_INPUT_REQUIRED&pageSize=100", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				var page struct{ Tasks []*a2a.Task }
				if err := json.Unmarshal(b, &page); err != nil {
					t.Fatal(err)
				}
				if len(page.Tasks) == 0 {
					t.Fatal("no input-required task listed")
				}
				for _, tk := range page.Tasks {
					if tk.Status.State != a2a.TaskStateInputRequired {
						t.Errorf("task %s is %s", tk.ID, tk.Status.State)
					}
				}
			}},
		{name: "GET tasks/{id}", verb: "GET", path: "/tasks/$DONE", status: 200, check: task("TASK_STATE_COMPLETED")},
		{name: "GET tasks/{id}?historyLength=0", verb: "GET", path: "/tasks/$DONE?historyLength=0", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if has(t, b, "history") {
					t.Error("historyLength=0 kept the history")
				}
			}},
		{name: "GET tasks/{id}?historyLength=1", verb: "GET", path: "/tasks/$DONE?historyLength=1", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				var h []json.RawMessage
				_ = json.Unmarshal(path(t, b, "history"), &h)
				if len(h) != 1 {
					t.Errorf("%d history messages, want 1", len(h))
				}
			}},
		{name: "POST tasks/{id}:cancel without a body", verb: "POST", path: "/tasks/$CANCEL:cancel", status: 200,
			headers: hdr("Content-Type", ""), check: task("TASK_STATE_CANCELED")},
		{name: "POST tasks/{id}:cancel with metadata", verb: "POST", path: "/tasks/$INPUT:cancel", body: `{"metadata":{"why":"test"}}`,
			status: 200, check: task("TASK_STATE_CANCELED")},
		{name: "POST tasks/{id}/pushNotificationConfigs", verb: "POST", path: "/tasks/$DONE/pushNotificationConfigs",
			body: `{"id":"hook-1","url":"https://example.com/hook","token":"tok"}`, status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if str(t, b, "taskId") == "" || str(t, b, "id") != "hook-1" || str(t, b, "url") != "https://example.com/hook" {
					t.Errorf("config %s", b)
				}
			}},
		{name: "POST tasks/{id}/pushNotificationConfigs, taskId in the body too", verb: "POST", path: "/tasks/$DONE/pushNotificationConfigs",
			body: `{"taskId":"$DONE","id":"hook-2","url":"https://example.com/hook"}`, status: 200},
		{name: "GET tasks/{id}/pushNotificationConfigs/{configId}", verb: "GET", path: "/tasks/$DONE/pushNotificationConfigs/hook-1", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if str(t, b, "id") != "hook-1" || str(t, b, "token") != "tok" {
					t.Errorf("config %s", b)
				}
			}},
		{name: "GET tasks/{id}/pushNotificationConfigs", verb: "GET", path: "/tasks/$DONE/pushNotificationConfigs?pageSize=10", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				var list struct {
					Configs []a2a.TaskPushNotificationConfig
				}
				if err := json.Unmarshal(b, &list); err != nil || len(list.Configs) != 2 {
					t.Errorf("configs %s (%v)", b, err)
				}
			}},
		{name: "DELETE tasks/{id}/pushNotificationConfigs/{configId}", verb: "DELETE", path: "/tasks/$DONE/pushNotificationConfigs/hook-2", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if string(b) != "{}" {
					t.Errorf("body %s, want {}", b)
				}
			}},
		{name: "GET extendedAgentCard", verb: "GET", path: "/extendedAgentCard", status: 200,
			check: func(t *testing.T, b json.RawMessage) {
				if got := str(t, b, "name"); got != "echo (extended)" {
					t.Errorf("name %q", got)
				}
				if has(t, b, "url") || has(t, b, "protocolVersion") {
					t.Errorf("the 1.0 card has 0.3 members: %s", b)
				}
			}},
		{name: "A2A-Version 1.0.1", verb: "GET", path: "/tasks/$DONE", headers: hdr("A2A-Version", "1.0.1"), status: 200},
		{name: "A2A-Version 1.0 as a query parameter", verb: "GET", path: "/tasks/$DONE?A2A-Version=1.0", status: 200},
	}
}

// The tenant in the path is the request's tenant: the Handler's bound on
// identifiers names it, on every route.
func TestTenantReachesTheHandler(t *testing.T) {
	w := serveEcho(t, restserver.Config{})
	long := strings.Repeat("t", server.DefaultMaxIDBytes+1)
	for _, tc := range []struct{ verb, path, body string }{
		{"POST", "/message:send", `{"message":` + msg("hi") + `}`},
		{"GET", "/tasks", ""},
		{"GET", "/tasks/x", ""},
		{"POST", "/tasks/x:cancel", ""},
		{"POST", "/tasks/x/pushNotificationConfigs", `{"url":"https://example.com/hook"}`},
		{"GET", "/tasks/x/pushNotificationConfigs", ""},
		{"GET", "/tasks/x/pushNotificationConfigs/c", ""},
		{"DELETE", "/tasks/x/pushNotificationConfigs/c", ""},
	} {
		t.Run(tc.verb+" "+tc.path, func(t *testing.T) {
			r := w.on(t).do(tc.verb, "/"+long+tc.path, tc.body, nil)
			sb := checkStatus(t, r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
			if !strings.Contains(sb.Error.Message, "tenant") {
				t.Errorf("message %q does not name the tenant", sb.Error.Message)
			}
		})
	}
	// The tenant query parameter of a route without one in its path.
	r := w.do("GET", "/tasks?tenant="+long, "", nil)
	checkStatus(t, r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
	// A body that names another tenant than the path is refused.
	r = w.do("POST", "/acme/message:send", `{"tenant":"other","message":`+msg("hi")+`}`, nil)
	checkStatus(t, r, 400, "INVALID_ARGUMENT", "INVALID_PARAMS")
	r = w.do("POST", "/acme/message:send", `{"tenant":"acme","message":`+msg("hi")+`}`, nil)
	r.ok(t)
}

// Unknown paths are 404 and known paths with another method 405 with
// Allow, both with a Status body.
func TestUnknownRoutes(t *testing.T) {
	w := serveEcho(t, restserver.Config{})
	for _, tc := range []struct {
		verb, path string
		status     int
		allow      string
	}{
		{"GET", "/", 404, ""},
		{"POST", "/", 404, ""},
		{"GET", "/nothing", 404, ""},
		{"POST", "/message:send/extra", 404, ""},
		{"POST", "/message:publish", 404, ""},
		{"GET", "/tasks/", 404, ""},
		{"GET", "/tasks/:subscribe", 404, ""},
		{"GET", "/tasks/x/somethingElse", 404, ""},
		{"GET", "/a/b/tasks/x", 404, ""},
		{"GET", "/acme/tasks/x/pushNotificationConfigs/c/more", 404, ""},
		{"GET", "/message:send", 405, "POST"},
		{"PUT", "/acme/message:stream", 405, "POST"},
		{"POST", "/tasks", 405, "GET"},
		{"DELETE", "/tasks/x", 405, "GET"},
		{"GET", "/tasks/x:cancel", 405, "POST"},
		{"DELETE", "/tasks/x:subscribe", 405, "GET, POST"},
		{"PUT", "/tasks/x/pushNotificationConfigs", 405, "GET, POST"},
		{"POST", "/tasks/x/pushNotificationConfigs/c", 405, "GET, DELETE"},
		{"POST", "/extendedAgentCard", 405, "GET"},
		{"POST", "/.well-known/agent-card.json", 405, "GET, HEAD"},
	} {
		t.Run(tc.verb+" "+tc.path, func(t *testing.T) {
			r := w.on(t).do(tc.verb, tc.path, "", nil)
			if tc.status == 404 {
				checkStatus(t, r, 404, "NOT_FOUND", "METHOD_NOT_FOUND")
				return
			}
			checkStatus(t, r, 405, "UNIMPLEMENTED", "METHOD_NOT_FOUND")
			if tc.allow != "" && r.header.Get("Allow") != tc.allow {
				t.Errorf("Allow %q, want %q", r.header.Get("Allow"), tc.allow)
			}
		})
	}
}

// The card is served beside the routes, as the JSON-RPC binding serves it.
func TestCard(t *testing.T) {
	w := serveEcho(t, restserver.Config{})
	r := w.do("GET", "/.well-known/agent-card.json", "", hdr("A2A-Version", "1.0"))
	b := r.ok(t)
	if str(t, b, "name") == "" || has(t, b, "url") {
		t.Errorf("1.0 card %s", b)
	}
	if r.header.Get("ETag") == "" || r.header.Get("Last-Modified") == "" {
		t.Errorf("no validators: %v", r.header)
	}
	if r := w.do("GET", "/.well-known/agent-card.json", "", hdr("If-None-Match", r.header.Get("ETag"), "A2A-Version", "1.0")); r.status != http.StatusNotModified {
		t.Errorf("conditional GET: HTTP %d", r.status)
	}
}
