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

// codeOf are the A2A error codes by google.rpc.ErrorInfo reason, spelled
// out here rather than taken from package a2a so that a change shows.
var codeOf = map[string]a2a.ErrorCode{
	"PARSE_ERROR":                        -32700,
	"INVALID_REQUEST":                    -32600,
	"METHOD_NOT_FOUND":                   -32601,
	"INVALID_PARAMS":                     -32602,
	"INTERNAL_ERROR":                     -32603,
	"TASK_NOT_FOUND":                     -32001,
	"TASK_NOT_CANCELABLE":                -32002,
	"PUSH_NOTIFICATION_NOT_SUPPORTED":    -32003,
	"UNSUPPORTED_OPERATION":              -32004,
	"CONTENT_TYPE_NOT_SUPPORTED":         -32005,
	"INVALID_AGENT_RESPONSE":             -32006,
	"EXTENDED_AGENT_CARD_NOT_CONFIGURED": -32007,
	"EXTENSION_SUPPORT_REQUIRED":         -32008,
	"VERSION_NOT_SUPPORTED":              -32009,
}

const requiredExt = "https://example.com/ext/required/v1"

type errCase struct {
	name    string
	srv     string // key of the server to ask
	verb    string
	path    string // $DONE and $INPUT name tasks
	body    string
	headers map[string]string

	status int    // HTTP status
	gstat  string // google.rpc.Code name
	reason string // ErrorInfo reason
	// mention is a text the message must contain: the parameter or
	// member at fault.
	mention string
}

func ec(name, srv, verb, path, body string, status int, gstat, reason string) errCase {
	return errCase{name: name, srv: srv, verb: verb, path: path, body: body, status: status, gstat: gstat, reason: reason}
}

func (c errCase) with(kv ...string) errCase {
	h := hdr(kv...)
	for k, v := range c.headers {
		if _, ok := h[k]; !ok {
			h[k] = v
		}
	}
	c.headers = h
	return c
}

func (c errCase) naming(s string) errCase { c.mention = s; return c }

const (
	badRequest, notFound, internal = "INVALID_ARGUMENT", "NOT_FOUND", "INTERNAL"
	precondition                   = "FAILED_PRECONDITION"
)

func errorCases() []errCase {
	send := func(m string) string { return `{"message":` + m + `}` }
	return []errCase{
		ec("-32700 body not JSON", "echo", "POST", "/message:send", `{"message":`, 400, badRequest, "PARSE_ERROR"),
		ec("-32700 body not JSON, streaming", "echo", "POST", "/message:stream", `{"message`, 400, badRequest, "PARSE_ERROR"),

		ec("-32600 body an array", "echo", "POST", "/message:send", `[]`, 400, badRequest, "INVALID_REQUEST"),
		ec("-32600 body a string", "echo", "POST", "/tasks/$DONE:cancel", `"hello"`, 400, badRequest, "INVALID_REQUEST"),
		ec("-32600 body over MaxBodyBytes (413)", "small", "POST", "/message:send", send(msg(strings.Repeat("x", 2048))), 413, badRequest, "INVALID_REQUEST"),
		ec("-32600 foreign Host (403)", "echo", "GET", "/tasks/$DONE", "", 403, "PERMISSION_DENIED", "INVALID_REQUEST").with("Host", "evil.example"),
		ec("-32600 foreign Origin (403)", "echo", "POST", "/message:send", send(msg("hi")), 403, "PERMISSION_DENIED", "INVALID_REQUEST").with("Origin", "https://evil.example"),

		ec("-32601 unknown route (404)", "echo", "GET", "/tasks/x/history", "", 404, notFound, "METHOD_NOT_FOUND"),
		ec("-32601 wrong method (405)", "echo", "GET", "/message:send", "", 405, "UNIMPLEMENTED", "METHOD_NOT_FOUND"),

		ec("-32602 message missing", "echo", "POST", "/message:send", `{}`, 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 empty body", "echo", "POST", "/message:send", ``, 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 message wrong type", "echo", "POST", "/message:send", `{"message":"hi"}`, 400, badRequest, "INVALID_PARAMS").naming("message"),
		ec("-32602 role unspecified", "echo", "POST", "/message:send", send(`{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"hi"}]}`), 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 streaming send without message", "echo", "POST", "/message:stream", `{}`, 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 historyLength not a number", "echo", "GET", "/tasks/$DONE?historyLength=ten", "", 400, badRequest, "INVALID_PARAMS").naming("historyLength"),
		ec("-32602 historyLength negative", "echo", "GET", "/tasks/$DONE?historyLength=-1", "", 400, badRequest, "INVALID_PARAMS").naming("historyLength"),
		ec("-32602 historyLength beyond int32", "echo", "GET", "/tasks?historyLength=99999999999", "", 400, badRequest, "INVALID_PARAMS").naming("historyLength"),
		ec("-32602 pageSize -1", "echo", "GET", "/tasks?pageSize=-1", "", 400, badRequest, "INVALID_PARAMS").naming("pageSize"),
		ec("-32602 pageSize twice", "echo", "GET", "/tasks?pageSize=1&pageSize=2", "", 400, badRequest, "INVALID_PARAMS").naming("pageSize"),
		ec("-32602 bad pageToken", "echo", "GET", "/tasks?pageToken=not-a-token", "", 400, badRequest, "INVALID_PARAMS").naming("pageToken"),
		ec("-32602 bad status", "echo", "GET", "/tasks?status=TASK_STATE_BORED", "", 400, badRequest, "INVALID_PARAMS").naming("status"),
		ec("-32602 includeArtifacts yes", "echo", "GET", "/tasks?includeArtifacts=yes", "", 400, badRequest, "INVALID_PARAMS").naming("includeArtifacts"),
		ec("-32602 statusTimestampAfter not a time", "echo", "GET", "/tasks?statusTimestampAfter=yesterday", "", 400, badRequest, "INVALID_PARAMS").naming("statusTimestampAfter"),
		ec("-32602 query escape malformed", "echo", "GET", "/tasks?contextId=%zz", "", 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 push config list pageSize", "echo", "GET", "/tasks/$DONE/pushNotificationConfigs?pageSize=x", "", 400, badRequest, "INVALID_PARAMS").naming("pageSize"),
		ec("-32602 cancel, the body names another task", "echo", "POST", "/tasks/$INPUT:cancel", `{"id":"other"}`, 400, badRequest, "INVALID_PARAMS").naming("id"),
		ec("-32602 push config, the body names another task", "echo", "POST", "/tasks/$DONE/pushNotificationConfigs", `{"taskId":"other","url":"https://example.com/hook"}`, 400, badRequest, "INVALID_PARAMS").naming("taskId"),
		ec("-32602 push config without url", "echo", "POST", "/tasks/$DONE/pushNotificationConfigs", `{}`, 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 push config with a loopback URL", "echo", "POST", "/tasks/$DONE/pushNotificationConfigs", `{"url":"http://127.0.0.1:9/hook"}`, 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 task id over 256 bytes", "echo", "GET", "/tasks/"+strings.Repeat("x", 257), "", 400, badRequest, "INVALID_PARAMS"),
		ec("-32602 Last-Event-ID not a number", "echo", "GET", "/tasks/$DONE:subscribe", "", 400, badRequest, "INVALID_PARAMS").with("Last-Event-ID", "abc"),
		ec("-32602 Last-Event-ID beyond the task's events", "echo", "POST", "/tasks/$DONE:subscribe", "", 400, badRequest, "INVALID_PARAMS").with("Last-Event-ID", "99"),

		ec("-32603 executor panics", "panic", "POST", "/message:send", send(msg("hi")), 500, internal, "INTERNAL_ERROR"),
		ec("-32603 executor panics, streaming", "panic", "POST", "/message:stream", send(msg("hi")), 500, internal, "INTERNAL_ERROR"),

		ec("-32001 GET unknown task", "echo", "GET", "/tasks/no-such-task", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 cancel unknown task", "echo", "POST", "/tasks/no-such-task:cancel", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 subscribe to an unknown task (GET)", "echo", "GET", "/tasks/no-such-task:subscribe", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 subscribe to an unknown task (POST)", "echo", "POST", "/tasks/no-such-task:subscribe", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 an id with an escaped slash", "echo", "GET", "/tasks/a%2Fb", "", 404, notFound, "TASK_NOT_FOUND").naming("a/b"),
		ec("-32001 an id with a colon", "echo", "GET", "/tasks/a:b", "", 404, notFound, "TASK_NOT_FOUND").naming("a:b"),
		ec("-32001 push config of an unknown task", "echo", "GET", "/tasks/no-such-task/pushNotificationConfigs/c", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 push configs of an unknown task", "echo", "GET", "/tasks/no-such-task/pushNotificationConfigs", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 delete a push config of an unknown task", "echo", "DELETE", "/tasks/no-such-task/pushNotificationConfigs/c", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 unknown push config", "echo", "GET", "/tasks/$DONE/pushNotificationConfigs/none", "", 404, notFound, "TASK_NOT_FOUND"),
		ec("-32001 message to an unknown task", "echo", "POST", "/message:send", send(`{"messageId":"m","role":"ROLE_USER","taskId":"no-such-task","parts":[{"text":"hi"}]}`), 404, notFound, "TASK_NOT_FOUND"),

		ec("-32002 cancel a completed task", "echo", "POST", "/tasks/$DONE:cancel", "", 400, precondition, "TASK_NOT_CANCELABLE"),

		ec("-32003 push config create", "nopush", "POST", "/tasks/t/pushNotificationConfigs", `{"url":"https://example.com/hook"}`, 400, precondition, "PUSH_NOTIFICATION_NOT_SUPPORTED"),
		ec("-32003 push config list", "nopush", "GET", "/tasks/t/pushNotificationConfigs", "", 400, precondition, "PUSH_NOTIFICATION_NOT_SUPPORTED"),

		ec("-32004 message to a terminal task", "echo", "POST", "/message:send", send(`{"messageId":"m","role":"ROLE_USER","taskId":"$DONE","parts":[{"text":"again"}]}`), 400, precondition, "UNSUPPORTED_OPERATION"),
		ec("-32004 subscribe to a terminal task", "echo", "POST", "/tasks/$DONE:subscribe", "", 400, precondition, "UNSUPPORTED_OPERATION"),
		ec("-32004 stream without streaming", "nostream", "POST", "/message:stream", send(msg("hi")), 400, precondition, "UNSUPPORTED_OPERATION"),
		ec("-32004 extended card undeclared", "echo", "GET", "/extendedAgentCard", "", 400, precondition, "UNSUPPORTED_OPERATION"),

		ec("-32005 image/png part", "echo", "POST", "/message:send", send(`{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"AAAA","mediaType":"image/png"}]}`), 400, badRequest, "CONTENT_TYPE_NOT_SUPPORTED"),
		ec("-32005 image/png part, streaming", "echo", "POST", "/message:stream", send(`{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"AAAA","mediaType":"image/png"}]}`), 400, badRequest, "CONTENT_TYPE_NOT_SUPPORTED"),
		ec("-32005 body as text/plain (415)", "echo", "POST", "/message:send", send(msg("hi")), 415, badRequest, "CONTENT_TYPE_NOT_SUPPORTED").with("Content-Type", "text/plain"),
		ec("-32005 body as a form (415)", "echo", "POST", "/tasks/$INPUT:cancel", "", 415, badRequest, "CONTENT_TYPE_NOT_SUPPORTED").with("Content-Type", "application/x-www-form-urlencoded"),

		ec("-32006 first event names another task", "stranger", "POST", "/message:send", send(msg("hi")), 500, internal, "INVALID_AGENT_RESPONSE"),
		ec("-32006 first event names another task, streaming", "stranger", "POST", "/message:stream", send(msg("hi")), 500, internal, "INVALID_AGENT_RESPONSE"),

		ec("-32007 extended card declared, none configured", "extnocfg", "GET", "/extendedAgentCard", "", 400, precondition, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"),

		ec("-32008 required extension not requested", "reqext", "POST", "/message:send", send(msg("hi")), 400, precondition, "EXTENSION_SUPPORT_REQUIRED"),
		ec("-32008 another extension requested", "reqext", "POST", "/message:send", send(msg("hi")), 400, precondition, "EXTENSION_SUPPORT_REQUIRED").with("A2A-Extensions", "https://example.com/other"),

		ec("-32009 A2A-Version 0.3", "echo", "POST", "/message:send", send(msg("hi")), 400, precondition, "VERSION_NOT_SUPPORTED").with("A2A-Version", "0.3"),
		ec("-32009 A2A-Version 2.0 on a stream", "echo", "POST", "/message:stream", send(msg("hi")), 400, precondition, "VERSION_NOT_SUPPORTED").with("A2A-Version", "2.0"),
		ec("-32009 A2A-Version 1.1 as a query parameter", "echo", "GET", "/tasks?A2A-Version=1.1", "", 400, precondition, "VERSION_NOT_SUPPORTED"),
	}
}

// errorServers starts the servers the cases name.
func errorServers(t *testing.T) map[string]*wire {
	t.Helper()
	echoCfg := func(card *a2a.AgentCard) server.Config {
		return server.Config{Card: card, Executor: fastEcho()}
	}
	noPush, noStream, extNoCfg, reqExt := echoCard(), echoCard(), echoCard(), echoCard()
	noPush.Capabilities.PushNotifications = false
	noStream.Capabilities.Streaming = false
	extNoCfg.Capabilities.ExtendedAgentCard = true
	reqExt.Capabilities.Extensions = []a2a.AgentExtension{
		{URI: "https://example.com/ext/optional/v1"},
		{URI: requiredExt, Required: true},
	}
	return map[string]*wire{
		"echo":     serveEcho(t, restserver.Config{}),
		"small":    serveEcho(t, restserver.Config{MaxBodyBytes: 1024}),
		"nopush":   serve(t, echoCfg(noPush), restserver.Config{}),
		"nostream": serve(t, echoCfg(noStream), restserver.Config{}),
		"extnocfg": serve(t, echoCfg(extNoCfg), restserver.Config{}),
		"reqext":   serve(t, echoCfg(reqExt), restserver.Config{}),
		"panic":    serve(t, server.Config{Card: echoCard(), Executor: panicky{}}, restserver.Config{}),
		"stranger": serve(t, server.Config{Card: echoCard(), Executor: stranger{}}, restserver.Config{}),
	}
}

// TestErrorCodes drives every error code the binding and the handler
// produce with the request that produces it and checks the whole answer:
// the HTTP status of specification §5.4, a JSON Content-Type, and a
// google.rpc.Status body with the status name and the ErrorInfo reason.
// Streaming operations that fail before their first event answer the
// same way, not with a stream.
func TestErrorCodes(t *testing.T) {
	servers := errorServers(t)
	echo := servers["echo"]
	done := str(t, echo.send("hi"), "task.id")
	input := str(t, echo.send("input: more"), "task.id")
	fill := strings.NewReplacer("$DONE", done, "$INPUT", input)

	reasons := map[string]bool{}
	for _, tc := range errorCases() {
		reasons[tc.reason] = true
		t.Run(tc.name, func(t *testing.T) {
			w := servers[tc.srv].on(t)
			headers := map[string]string{}
			for k, v := range tc.headers {
				headers[k] = v
			}
			if strings.HasSuffix(tc.path, "stream") || strings.HasSuffix(tc.path, "subscribe") {
				headers["Accept"] = "text/event-stream"
			}
			var r reply
			if host, ok := headers["Host"]; ok {
				delete(headers, "Host")
				r = w.doHost(tc.verb, fill.Replace(tc.path), tc.body, headers, host)
			} else {
				r = w.do(tc.verb, fill.Replace(tc.path), fill.Replace(tc.body), headers)
			}
			sb := checkStatus(t, r, tc.status, tc.gstat, tc.reason)
			if tc.mention != "" && !strings.Contains(sb.Error.Message, tc.mention) {
				t.Errorf("message %q does not mention %q", sb.Error.Message, tc.mention)
			}
			if strings.Contains(sb.Error.Message, "secret") {
				t.Errorf("message %q tells an internal detail", sb.Error.Message)
			}
		})
	}
	for reason := range codeOf {
		if !reasons[reason] {
			t.Errorf("no case produces %s", reason)
		}
	}
}

// doHost is do with another Host header.
func (w *wire) doHost(verb, path, body string, headers map[string]string, host string) reply {
	w.t.Helper()
	return w.doWith(verb, path, body, headers, func(r *http.Request) { r.Host = host })
}

// A refusal the client may retry is 503 with Retry-After and a
// google.rpc.RetryInfo, on a unary call and on a stream's start.
func TestBusyIs503(t *testing.T) {
	cfg := server.Config{Card: echoCard(), Executor: fastEcho()}
	cfg.Limits.MaxLiveTasks = 1
	w := serve(t, cfg, restserver.Config{})
	w.send("input: wait")
	for _, path := range []string{"/message:send", "/message:stream"} {
		t.Run(path, func(t *testing.T) {
			r := w.on(t).do("POST", path, `{"message":`+msg("one more")+`}`, nil)
			sb := checkStatus(t, r, http.StatusServiceUnavailable, "UNAVAILABLE", "INTERNAL_ERROR")
			if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
				t.Errorf("Retry-After %q, want a number of seconds", ra)
			}
			for _, d := range sb.Error.Details {
				if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" && strings.HasSuffix(d["retryDelay"].(string), "s") {
					return
				}
			}
			t.Errorf("details %v have no google.rpc.RetryInfo", sb.Error.Details)
		})
	}
}

// The answer's JSON is the same whichever media type it is labelled with.
func TestErrorMediaType(t *testing.T) {
	w := serveEcho(t, restserver.Config{})
	for _, tc := range []struct{ accept, contentType, want string }{
		{"", "", "application/json"},
		{"*/*", "", "application/json"},
		{"application/json", "", "application/json"},
		{"application/a2a+json", "", "application/a2a+json"},
		{"application/json;q=0.5, application/a2a+json", "", "application/a2a+json"},
		{"application/a2a+json;q=0.5, application/json", "", "application/json"},
		{"text/event-stream", "", "application/json"},
		{"text/event-stream", "application/a2a+json", "application/a2a+json"},
		{"application/json", "application/a2a+json", "application/json"},
	} {
		t.Run(tc.accept+"|"+tc.contentType, func(t *testing.T) {
			body := ""
			if tc.contentType != "" {
				body = `{}`
			}
			r := w.on(t).do("POST", "/tasks/none:cancel", body, hdr("Accept", tc.accept, "Content-Type", tc.contentType))
			if r.status != 404 {
				t.Fatalf("HTTP %d: %s", r.status, r.body)
			}
			checkContentType(t, r.header, tc.want)
			var sb statusBody
			if err := json.Unmarshal(r.body, &sb); err != nil || sb.Error.Code != 404 {
				t.Errorf("body %s", r.body)
			}
		})
	}
}
