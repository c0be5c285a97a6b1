package jsonrpcserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// reasons are the google.rpc.ErrorInfo reasons of the codes, spelled out
// here rather than taken from package a2a so that a change shows.
var reasons = map[int]string{
	-32700: "PARSE_ERROR",
	-32600: "INVALID_REQUEST",
	-32601: "METHOD_NOT_FOUND",
	-32602: "INVALID_PARAMS",
	-32603: "INTERNAL_ERROR",
	-32001: "TASK_NOT_FOUND",
	-32002: "TASK_NOT_CANCELABLE",
	-32003: "PUSH_NOTIFICATION_NOT_SUPPORTED",
	-32004: "UNSUPPORTED_OPERATION",
	-32005: "CONTENT_TYPE_NOT_SUPPORTED",
	-32006: "INVALID_AGENT_RESPONSE",
	-32007: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
	-32008: "EXTENSION_SUPPORT_REQUIRED",
	-32009: "VERSION_NOT_SUPPORTED",
}

const requiredExt = "https://example.com/ext/required/v1"

// Shapes of error.data.
const (
	shape10 = "1.0" // [{"@type": ErrorInfo, "reason": ...}, ...]
	shape03 = "0.3" // {"reason": ...}
	// shapeAny accepts either: used where the server cannot tell the
	// version from the method (the request failed before it was read).
	shapeAny = "any"
)

type errCase struct {
	name    string
	srv     string // key of the server to ask
	verb    string // HTTP method; "" is POST
	headers map[string]string
	body    string

	status int    // HTTP status; 0 is 200
	stream bool   // the answer is an event stream carrying the error as its only event
	wantID string // the id the answer must carry, as raw JSON
	code   int    // 0: the call must succeed
	shape  string // shape of error.data
}

// call builds a case whose body is a request with a raw JSON id.
func call(name, srv string, headers map[string]string, id, method, params string, code int, shape string) errCase {
	return errCase{name: name, srv: srv, headers: headers, body: rpc(id, method, params), wantID: id, code: code, shape: shape}
}

// streamCall is call for a streaming method.
func streamCall(name, srv string, headers map[string]string, id, method, params string, code int, shape string) errCase {
	c := call(name, srv, headers, id, method, params, code, shape)
	c.stream = true
	return c
}

// with returns headers extended by kv.
func with(headers map[string]string, kv ...string) map[string]string {
	out := hdr(kv...)
	for k, v := range headers {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

func errorCases() []errCase {
	var cs []errCase

	// Requests that fail before the method is known, on both wires: a 1.0
	// client (A2A-Version: 1.0) and a 0.3 client (no header).
	for _, w := range []struct {
		name    string
		headers map[string]string
		shape   string
	}{{"1.0", v10, shapeAny}, {"0.3", nil, shape03}} {
		pre := func(name, body, wantID string, code int) errCase {
			return errCase{name: w.name + "/" + name, srv: "echo", headers: w.headers, body: body, wantID: wantID, code: code, shape: w.shape}
		}
		cs = append(cs,
			pre("-32700 invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, "null", -32700),
			pre("-32700 truncated string", `{"jsonrpc":"2.0","id":"abc`, "null", -32700),
			pre("-32700 trailing garbage", `{"jsonrpc":"2.0","id":1,"method":"GetTask"} x`, "null", -32700),
			pre("-32700 empty body", ``, "null", -32700),
			pre("-32700 blank body", " \r\n\t ", "null", -32700),
			pre("-32600 string", `"hello"`, "null", -32600),
			pre("-32600 empty array", `[]`, "null", -32600),
			pre("-32600 number", `42`, "null", -32600),
			pre("-32600 null", `null`, "null", -32600),
			pre("-32600 batch", `[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}]`, "null", -32600),
			pre("-32600 missing jsonrpc", `{"id":7,"method":"GetTask","params":{"id":"x"}}`, "7", -32600),
			pre("-32600 jsonrpc 1.0", `{"jsonrpc":"1.0","id":"v1","method":"GetTask","params":{"id":"x"}}`, `"v1"`, -32600),
			pre("-32600 jsonrpc number", `{"jsonrpc":2.0,"id":-5,"method":"GetTask","params":{"id":"x"}}`, "-5", -32600),
			pre("-32600 object id", `{"jsonrpc":"2.0","id":{},"method":"GetTask","params":{"id":"x"}}`, "null", -32600),
			pre("-32600 boolean id", `{"jsonrpc":"2.0","id":true,"method":"GetTask","params":{"id":"x"}}`, "null", -32600),
			pre("-32600 array id", `{"jsonrpc":"2.0","id":[1],"method":"GetTask","params":{"id":"x"}}`, "null", -32600),
			// Echoed raw, the id would make the answer invalid JSON.
			pre("-32600 id not UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"GetTask\",\"params\":{\"id\":\"x\"}}", "null", -32600),
			pre("-32600 missing method", `{"jsonrpc":"2.0","id":8,"params":{"id":"x"}}`, "8", -32600),
			pre("-32600 empty method", `{"jsonrpc":"2.0","id":9,"method":"","params":{"id":"x"}}`, "9", -32600),
			pre("-32600 null method", `{"jsonrpc":"2.0","id":"n","method":null}`, `"n"`, -32600),
			pre("-32600 number method", `{"jsonrpc":"2.0","id":10,"method":5}`, "10", -32600),
			pre("-32600 object method", `{"jsonrpc":"2.0","id":11,"method":{"name":"GetTask"}}`, "11", -32600),
			pre("-32601 unknown method", rpc(`"u1"`, "NoSuchMethod", `{}`), `"u1"`, -32601),
			pre("-32601 method names are case-sensitive", rpc(`"u2"`, "sendMessage", `{"message":`+msg10("x")+`}`), `"u2"`, -32601),
			pre("-32601 0.3 name with 1.0 spelling", rpc(`"u3"`, "Message/Send", `{}`), `"u3"`, -32601),
		)
		get := errCase{name: w.name + "/-32600 GET is not allowed (405)", srv: "echo", verb: http.MethodGet, headers: w.headers,
			status: http.StatusMethodNotAllowed, wantID: "null", code: -32600, shape: w.shape}
		put := get
		put.name, put.verb, put.body = w.name+"/-32600 PUT is not allowed (405)", http.MethodPut, rpc("1", "GetTask", `{"id":"x"}`)
		big := `{"jsonrpc":"2.0","id":"big","method":"SendMessage","params":{"message":` + msg10(strings.Repeat("a", 2048)) + `}}`
		tooBig := errCase{name: w.name + "/-32600 body over MaxBodyBytes (413)", srv: "small", headers: w.headers, body: big,
			status: http.StatusRequestEntityTooLarge, wantID: "null", code: -32600, shape: w.shape}
		// A chunked body over the limit: see TestChunkedOversizedBodyGets413.
		cs = append(cs, get, put, tooBig)
		// A browser sends these content types (or none) across sites
		// without asking first: only JSON is served. Host and Origin:
		// see TestForeignHostsRefused.
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""} {
			cs = append(cs, errCase{name: w.name + "/-32600 Content-Type " + ct + " (415)", srv: "echo",
				headers: with(w.headers, "Content-Type", ct), body: rpc("1", "GetTask", `{"id":"x"}`),
				status: http.StatusUnsupportedMediaType, wantID: "null", code: -32600, shape: w.shape})
		}
	}

	// 1.0 wire.
	p := func(msg string) string { return `{"message":` + msg + `}` }
	cs = append(cs,
		call("1.0/-32601 1.0 method with A2A-Version 0.3", "echo", hdr("A2A-Version", "0.3"), `"h1"`, "SendMessage", p(msg10("hi")), -32601, shape10),

		// Bad params after a known method: see TestParamsErrorSpeaksTheMethodsVersion.
		call("1.0/-32602 array params", "echo", v10, `"p1"`, "SendMessage", `[{"message":`+msg10("hi")+`}]`, -32602, shapeAny),
		call("1.0/-32602 string params", "echo", v10, `"p2"`, "GetTask", `"abc"`, -32602, shapeAny),
		call("1.0/-32602 message missing", "echo", v10, `"p3"`, "SendMessage", `{}`, -32602, shape10),
		call("1.0/-32602 message null", "echo", v10, `"p3n"`, "SendMessage", `{"message":null}`, -32602, shape10),
		call("1.0/-32602 messageId missing", "echo", v10, `"p4"`, "SendMessage", p(`{"role":"ROLE_USER","parts":[{"text":"hi"}]}`), -32602, shape10),
		call("1.0/-32602 role missing", "echo", v10, `"p5"`, "SendMessage", p(`{"messageId":"m","parts":[{"text":"hi"}]}`), -32602, shape10),
		call("1.0/-32602 role unspecified", "echo", v10, `"p5u"`, "SendMessage", p(`{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"hi"}]}`), -32602, shape10),
		call("1.0/-32602 no parts", "echo", v10, `"p6"`, "SendMessage", p(`{"messageId":"m","role":"ROLE_USER","parts":[]}`), -32602, shape10),
		call("1.0/-32602 parts missing", "echo", v10, `"p6m"`, "SendMessage", p(`{"messageId":"m","role":"ROLE_USER"}`), -32602, shape10),
		call("1.0/-32602 part without content", "echo", v10, `"p6c"`, "SendMessage", p(`{"messageId":"m","role":"ROLE_USER","parts":[{"mediaType":"text/plain"}]}`), -32602, shape10),
		call("1.0/-32602 role user (0.3 spelling)", "echo", v10, `"p7"`, "SendMessage", p(`{"messageId":"m","role":"user","parts":[{"text":"hi"}]}`), -32602, shape10),
		call("1.0/-32602 message wrong type", "echo", v10, `"p7t"`, "SendMessage", `{"message":"hi"}`, -32602, shape10),
		call("1.0/-32602 negative historyLength on GetTask", "echo", v10, `"p8"`, "GetTask", `{"id":"$DONE","historyLength":-1}`, -32602, shape10),
		call("1.0/-32602 negative historyLength on SendMessage", "echo", v10, `"p8s"`, "SendMessage", `{"message":`+msg10("hi")+`,"configuration":{"historyLength":-1}}`, -32602, shape10),
		call("1.0/-32602 negative historyLength on ListTasks", "echo", v10, `"p8l"`, "ListTasks", `{"historyLength":-1}`, -32602, shape10),
		call("1.0/-32602 GetTask without id", "echo", v10, `"p9"`, "GetTask", `{}`, -32602, shape10),
		call("1.0/-32602 GetTask id over 256 bytes", "echo", v10, `"p9l"`, "GetTask", `{"id":"`+strings.Repeat("x", 257)+`"}`, -32602, shape10),
		call("1.0/-32602 push config id over 256 bytes", "echo", v10, `"p9p"`, "GetTaskPushNotificationConfig", `{"taskId":"$DONE","id":"`+strings.Repeat("x", 257)+`"}`, -32602, shape10),
		call("1.0/-32602 push config create, id over 256 bytes", "echo", v10, `"p9q"`, "CreateTaskPushNotificationConfig", `{"taskId":"$DONE","id":"`+strings.Repeat("x", 257)+`","url":"https://example.com/hook"}`, -32602, shape10),
		call("1.0/-32602 message contextId over 256 bytes", "echo", v10, `"p9m"`, "SendMessage",
			p(`{"messageId":"m","role":"ROLE_USER","contextId":"`+strings.Repeat("c", 257)+`","parts":[{"text":"hi"}]}`), -32602, shape10),
		call("1.0/-32602 CancelTask without id", "echo", v10, `"p9c"`, "CancelTask", `{}`, -32602, shape10),
		call("1.0/-32602 ListTasks pageSize -1", "echo", v10, `"p10"`, "ListTasks", `{"pageSize":-1}`, -32602, shape10),
		call("1.0/-32602 ListTasks pageSize 101", "echo", v10, `"p11"`, "ListTasks", `{"pageSize":101}`, -32602, shape10),
		call("1.0/-32602 ListTasks bad pageToken", "echo", v10, `"p12"`, "ListTasks", `{"pageToken":"not-a-token"}`, -32602, shape10),
		call("1.0/-32602 ListTasks bad status", "echo", v10, `"p12s"`, "ListTasks", `{"status":"TASK_STATE_BORED"}`, -32602, shape10),
		call("1.0/-32602 contextId mismatch on a follow-up", "echo", v10, `"p13"`, "SendMessage",
			p(`{"messageId":"m","role":"ROLE_USER","taskId":"$INPUT","contextId":"another-context","parts":[{"text":"more"}]}`), -32602, shape10),
		call("1.0/-32602 push config with a loopback URL", "echo", v10, `"p14"`, "CreateTaskPushNotificationConfig",
			`{"taskId":"$DONE","url":"http://127.0.0.1:9/hook"}`, -32602, shape10),
		call("1.0/-32602 push config with a localhost URL", "echo", v10, `"p14l"`, "CreateTaskPushNotificationConfig",
			`{"taskId":"$DONE","url":"http://localhost/hook"}`, -32602, shape10),
		call("1.0/-32602 push config without URL", "echo", v10, `"p14u"`, "CreateTaskPushNotificationConfig", `{"taskId":"$DONE"}`, -32602, shape10),
		call("1.0/-32602 send with a loopback push config", "echo", v10, `"p15"`, "SendMessage",
			`{"message":`+msg10("hi")+`,"configuration":{"taskPushNotificationConfig":{"url":"http://127.0.0.1/hook"}}}`, -32602, shape10),
		call("1.0/-32602 delete push config without id", "echo", v10, `"p16"`, "DeleteTaskPushNotificationConfig", `{"taskId":"$DONE"}`, -32602, shape10),
		streamCall("1.0/-32602 Last-Event-ID not a number", "echo", with(v10, "Last-Event-ID", "abc"), `"p17"`, "SubscribeToTask", `{"id":"$DONE"}`, -32602, shape10),
		streamCall("1.0/-32602 Last-Event-ID beyond the task's events", "echo", with(v10, "Last-Event-ID", "99"), `"p18"`, "SubscribeToTask", `{"id":"$DONE"}`, -32602, shape10),
		streamCall("1.0/-32602 streaming send without message", "echo", v10, `"p19"`, "SendStreamingMessage", `{}`, -32602, shape10),

		call("1.0/-32603 executor panics before any event", "panic", v10, `"i1"`, "SendMessage", p(msg10("hi")), -32603, shape10),
		streamCall("1.0/-32603 executor panics before any event, streaming", "panic", v10, `"i2"`, "SendStreamingMessage", p(msg10("hi")), -32603, shape10),

		call("1.0/-32001 GetTask unknown", "echo", v10, `"n1"`, "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("1.0/-32001 CancelTask unknown", "echo", v10, `"n2"`, "CancelTask", `{"id":"no-such-task"}`, -32001, shape10),
		streamCall("1.0/-32001 SubscribeToTask unknown", "echo", v10, `"n3"`, "SubscribeToTask", `{"id":"no-such-task"}`, -32001, shape10),
		streamCall("1.0/-32001 SubscribeToTask unknown with Last-Event-ID", "echo", with(v10, "Last-Event-ID", "1"), `"n3l"`, "SubscribeToTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("1.0/-32001 push config get, unknown task", "echo", v10, `"n4"`, "GetTaskPushNotificationConfig", `{"taskId":"no-such-task","id":"c"}`, -32001, shape10),
		call("1.0/-32001 push config list, unknown task", "echo", v10, `"n5"`, "ListTaskPushNotificationConfigs", `{"taskId":"no-such-task"}`, -32001, shape10),
		call("1.0/-32001 push config delete, unknown task", "echo", v10, `"n6"`, "DeleteTaskPushNotificationConfig", `{"taskId":"no-such-task","id":"c"}`, -32001, shape10),
		call("1.0/-32001 push config create, unknown task", "echo", v10, `"n6c"`, "CreateTaskPushNotificationConfig", `{"taskId":"no-such-task","url":"https://example.com/hook"}`, -32001, shape10),
		call("1.0/-32001 deleted push config", "echo", v10, `"n7"`, "GetTaskPushNotificationConfig", `{"taskId":"$DONE","id":"cfg-deleted"}`, -32001, shape10),
		call("1.0/-32001 message to an unknown task", "echo", v10, `"n8"`, "SendMessage",
			p(`{"messageId":"m","role":"ROLE_USER","taskId":"no-such-task","parts":[{"text":"hi"}]}`), -32001, shape10),

		call("1.0/-32002 cancel a completed task", "echo", v10, `"c1"`, "CancelTask", `{"id":"$DONE"}`, -32002, shape10),

		call("1.0/-32003 push config create", "nopush", v10, `"q1"`, "CreateTaskPushNotificationConfig", `{"taskId":"t","url":"https://example.com/hook"}`, -32003, shape10),
		call("1.0/-32003 push config get", "nopush", v10, `"q2"`, "GetTaskPushNotificationConfig", `{"taskId":"t","id":"c"}`, -32003, shape10),
		call("1.0/-32003 push config list", "nopush", v10, `"q3"`, "ListTaskPushNotificationConfigs", `{"taskId":"t"}`, -32003, shape10),
		call("1.0/-32003 push config delete", "nopush", v10, `"q4"`, "DeleteTaskPushNotificationConfig", `{"taskId":"t","id":"c"}`, -32003, shape10),
		call("1.0/-32003 send with a push config", "nopush", v10, `"q5"`, "SendMessage",
			`{"message":`+msg10("hi")+`,"configuration":{"taskPushNotificationConfig":{"url":"https://example.com/hook"}}}`, -32003, shape10),

		call("1.0/-32004 message to a terminal task", "echo", v10, `"o1"`, "SendMessage",
			p(`{"messageId":"m","role":"ROLE_USER","taskId":"$DONE","parts":[{"text":"again"}]}`), -32004, shape10),
		streamCall("1.0/-32004 SubscribeToTask on a terminal task", "echo", v10, `"o2"`, "SubscribeToTask", `{"id":"$DONE"}`, -32004, shape10),
		streamCall("1.0/-32004 SendStreamingMessage without streaming", "nostream", v10, `"o3"`, "SendStreamingMessage", p(msg10("hi")), -32004, shape10),
		streamCall("1.0/-32004 SubscribeToTask without streaming", "nostream", v10, `"o4"`, "SubscribeToTask", `{"id":"t"}`, -32004, shape10),
		call("1.0/-32004 GetExtendedAgentCard undeclared", "echo", v10, `"o5"`, "GetExtendedAgentCard", `{}`, -32004, shape10),

		call("1.0/-32005 image/png part", "echo", v10, `"ct1"`, "SendMessage",
			p(`{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"AAAA","mediaType":"image/png"}]}`), -32005, shape10),
		call("1.0/-32005 text part declared image/png", "echo", v10, `"ct2"`, "SendMessage",
			p(`{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"},{"url":"https://example.com/a.png","mediaType":"image/png"}]}`), -32005, shape10),
		call("1.0/-32005 acceptedOutputModes image/png", "echo", v10, `"ct3"`, "SendMessage",
			`{"message":`+msg10("hi")+`,"configuration":{"acceptedOutputModes":["image/png"]}}`, -32005, shape10),
		streamCall("1.0/-32005 image/png part, streaming", "echo", v10, `"ct4"`, "SendStreamingMessage",
			p(`{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"AAAA","mediaType":"image/png"}]}`), -32005, shape10),

		call("1.0/-32006 first event names another task", "stranger", v10, `"a1"`, "SendMessage", p(msg10("hi")), -32006, shape10),
		streamCall("1.0/-32006 first event names another task, streaming", "stranger", v10, `"a2"`, "SendStreamingMessage", p(msg10("hi")), -32006, shape10),

		call("1.0/-32007 extended card declared, none configured", "extnocfg", v10, `"x1"`, "GetExtendedAgentCard", `{}`, -32007, shape10),

		call("1.0/-32008 required extension not requested", "reqext", v10, `"e1"`, "SendMessage", p(msg10("hi")), -32008, shape10),
		call("1.0/-32008 another extension requested", "reqext", with(v10, "A2A-Extensions", "https://example.com/other"), `"e2"`, "SendMessage", p(msg10("hi")), -32008, shape10),
		streamCall("1.0/-32008 required extension not requested, streaming", "reqext", v10, `"e3"`, "SendStreamingMessage", p(msg10("hi")), -32008, shape10),
		call("1.0/ok required extension requested", "reqext", with(v10, "A2A-Extensions", requiredExt), `"e4"`, "SendMessage", p(msg10("hi")), 0, ""),
		call("1.0/ok required extension among others", "reqext", with(v10, "A2A-Extensions", "https://example.com/other, "+requiredExt), `"e5"`, "SendMessage", p(msg10("hi")), 0, ""),

		call("1.0/-32009 A2A-Version 2.0", "echo", hdr("A2A-Version", "2.0"), `"v1"`, "SendMessage", p(msg10("hi")), -32009, shape10),
		call("1.0/-32009 A2A-Version 1.1", "echo", hdr("A2A-Version", "1.1"), `"v2"`, "GetTask", `{"id":"$DONE"}`, -32009, shape10),
		// Header errors come before the stream: a plain JSON answer.
		call("1.0/-32009 A2A-Version 2.0, streaming method", "echo", hdr("A2A-Version", "2.0"), `"v3"`, "SendStreamingMessage", p(msg10("hi")), -32009, shape10),
		call("1.0/ok A2A-Version 1.0.1 is 1.0", "echo", hdr("A2A-Version", "1.0.1"), `"v4"`, "SendMessage", p(msg10("hi")), 0, ""),
		call("1.0/ok A2A-Version 1.0", "echo", v10, `"v5"`, "GetTask", `{"id":"$DONE"}`, 0, ""),
	)

	// 0.3 wire: no A2A-Version header.
	p3 := func(msg string) string { return `{"message":` + msg + `}` }
	cs = append(cs,
		call("0.3/-32601 0.3 method with A2A-Version 1.0", "echo", v10, "21", "message/send", p3(msg03("hi")), -32601, shape03),

		call("0.3/-32602 array params", "echo", nil, "1", "message/send", `[{"message":`+msg03("hi")+`}]`, -32602, shape03),
		call("0.3/-32602 message missing", "echo", nil, "2", "message/send", `{}`, -32602, shape03),
		call("0.3/-32602 messageId missing", "echo", nil, "3", "message/send", p3(`{"kind":"message","role":"user","parts":[{"kind":"text","text":"hi"}]}`), -32602, shape03),
		call("0.3/-32602 role missing", "echo", nil, "4", "message/send", p3(`{"kind":"message","messageId":"m","parts":[{"kind":"text","text":"hi"}]}`), -32602, shape03),
		call("0.3/-32602 role ROLE_USER (1.0 spelling)", "echo", nil, "5", "message/send", p3(`{"kind":"message","messageId":"m","role":"ROLE_USER","parts":[{"kind":"text","text":"hi"}]}`), -32602, shape03),
		call("0.3/-32602 no parts", "echo", nil, "6", "message/send", p3(`{"kind":"message","messageId":"m","role":"user","parts":[]}`), -32602, shape03),
		call("0.3/-32602 part without kind", "echo", nil, "7", "message/send", p3(`{"kind":"message","messageId":"m","role":"user","parts":[{"text":"hi"}]}`), -32602, shape03),
		call("0.3/-32602 negative historyLength on tasks/get", "echo", nil, "8", "tasks/get", `{"id":"$DONE","historyLength":-1}`, -32602, shape03),
		call("0.3/-32602 negative historyLength on message/send", "echo", nil, "8.5", "message/send", `{"message":`+msg03("hi")+`,"configuration":{"historyLength":-1}}`, -32602, shape03),
		call("0.3/-32602 tasks/get without id", "echo", nil, "9", "tasks/get", `{}`, -32602, shape03),
		call("0.3/-32602 tasks/list page_size 101", "echo", nil, "10", "tasks/list", `{"page_size":101}`, -32602, shape03),
		call("0.3/-32602 tasks/list page_size -1", "echo", nil, "10.5", "tasks/list", `{"page_size":-1}`, -32602, shape03),
		call("0.3/-32602 tasks/list bad page_token", "echo", nil, "11", "tasks/list", `{"page_token":"not-a-token"}`, -32602, shape03),
		call("0.3/-32602 tasks/list bad status", "echo", nil, "11.5", "tasks/list", `{"status":"bored"}`, -32602, shape03),
		call("0.3/-32602 contextId mismatch on a follow-up", "echo", nil, "12", "message/send",
			p3(`{"kind":"message","messageId":"m","role":"user","taskId":"$INPUT","contextId":"another-context","parts":[{"kind":"text","text":"more"}]}`), -32602, shape03),
		call("0.3/-32602 push config set with a loopback URL", "echo", nil, "13", "tasks/pushNotificationConfig/set",
			`{"taskId":"$DONE","pushNotificationConfig":{"url":"http://127.0.0.1:9/hook"}}`, -32602, shape03),
		call("0.3/-32602 send with a loopback push config", "echo", nil, "14", "message/send",
			`{"message":`+msg03("hi")+`,"configuration":{"pushNotificationConfig":{"url":"http://[::1]/hook"}}}`, -32602, shape03),
		call("0.3/-32602 push config delete without pushNotificationConfigId", "echo", nil, "15", "tasks/pushNotificationConfig/delete", `{"id":"$DONE"}`, -32602, shape03),
		streamCall("0.3/-32602 Last-Event-ID not a number", "echo", hdr("Last-Event-ID", "abc"), "16", "tasks/resubscribe", `{"id":"$DONE"}`, -32602, shape03),
		streamCall("0.3/-32602 message/stream without message", "echo", nil, "17", "message/stream", `{}`, -32602, shape03),

		call("0.3/-32603 executor panics before any event", "panic", nil, "30", "message/send", p3(msg03("hi")), -32603, shape03),
		streamCall("0.3/-32603 executor panics before any event, streaming", "panic", nil, "31", "message/stream", p3(msg03("hi")), -32603, shape03),

		call("0.3/-32001 tasks/get unknown", "echo", nil, "40", "tasks/get", `{"id":"no-such-task"}`, -32001, shape03),
		call("0.3/-32001 tasks/cancel unknown", "echo", nil, "41", "tasks/cancel", `{"id":"no-such-task"}`, -32001, shape03),
		streamCall("0.3/-32001 tasks/resubscribe unknown", "echo", nil, "42", "tasks/resubscribe", `{"id":"no-such-task"}`, -32001, shape03),
		call("0.3/-32001 push config get, unknown task", "echo", nil, "43", "tasks/pushNotificationConfig/get", `{"id":"no-such-task"}`, -32001, shape03),
		call("0.3/-32001 push config list, unknown task", "echo", nil, "44", "tasks/pushNotificationConfig/list", `{"id":"no-such-task"}`, -32001, shape03),
		call("0.3/-32001 push config delete, unknown task", "echo", nil, "45", "tasks/pushNotificationConfig/delete", `{"id":"no-such-task","pushNotificationConfigId":"c"}`, -32001, shape03),
		call("0.3/-32001 deleted push config", "echo", nil, "46", "tasks/pushNotificationConfig/get", `{"id":"$DONE","pushNotificationConfigId":"cfg-deleted"}`, -32001, shape03),
		call("0.3/-32001 push config get without id, none set", "echo", nil, "46.5", "tasks/pushNotificationConfig/get", `{"id":"$INPUT"}`, -32001, shape03),
		call("0.3/-32001 message to an unknown task", "echo", nil, "47", "message/send",
			p3(`{"kind":"message","messageId":"m","role":"user","taskId":"no-such-task","parts":[{"kind":"text","text":"hi"}]}`), -32001, shape03),

		call("0.3/-32002 cancel a completed task", "echo", nil, "50", "tasks/cancel", `{"id":"$DONE"}`, -32002, shape03),

		call("0.3/-32003 push config set", "nopush", nil, "60", "tasks/pushNotificationConfig/set", `{"taskId":"t","pushNotificationConfig":{"url":"https://example.com/hook"}}`, -32003, shape03),
		call("0.3/-32003 push config get", "nopush", nil, "61", "tasks/pushNotificationConfig/get", `{"id":"t"}`, -32003, shape03),
		call("0.3/-32003 push config list", "nopush", nil, "62", "tasks/pushNotificationConfig/list", `{"id":"t"}`, -32003, shape03),
		call("0.3/-32003 push config delete", "nopush", nil, "63", "tasks/pushNotificationConfig/delete", `{"id":"t","pushNotificationConfigId":"c"}`, -32003, shape03),
		call("0.3/-32003 send with a push config", "nopush", nil, "64", "message/send",
			`{"message":`+msg03("hi")+`,"configuration":{"pushNotificationConfig":{"url":"https://example.com/hook"}}}`, -32003, shape03),

		call("0.3/-32004 message to a terminal task", "echo", nil, "70", "message/send",
			p3(`{"kind":"message","messageId":"m","role":"user","taskId":"$DONE","parts":[{"kind":"text","text":"again"}]}`), -32004, shape03),
		streamCall("0.3/-32004 tasks/resubscribe on a terminal task", "echo", nil, "71", "tasks/resubscribe", `{"id":"$DONE"}`, -32004, shape03),
		streamCall("0.3/-32004 message/stream without streaming", "nostream", nil, "72", "message/stream", p3(msg03("hi")), -32004, shape03),
		streamCall("0.3/-32004 tasks/resubscribe without streaming", "nostream", nil, "73", "tasks/resubscribe", `{"id":"t"}`, -32004, shape03),
		call("0.3/-32004 extended card undeclared", "echo", nil, "74", "agent/getAuthenticatedExtendedCard", ``, -32004, shape03),

		call("0.3/-32005 image/png file part", "echo", nil, "80", "message/send",
			p3(`{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"file","file":{"mimeType":"image/png","bytes":"AAAA"}}]}`), -32005, shape03),
		call("0.3/-32005 acceptedOutputModes image/png", "echo", nil, "81", "message/send",
			`{"message":`+msg03("hi")+`,"configuration":{"acceptedOutputModes":["image/png"]}}`, -32005, shape03),

		call("0.3/-32006 first event names another task", "stranger", nil, "90", "message/send", p3(msg03("hi")), -32006, shape03),
		streamCall("0.3/-32006 first event names another task, streaming", "stranger", nil, "91", "message/stream", p3(msg03("hi")), -32006, shape03),

		call("0.3/-32007 extended card declared, none configured", "extnocfg", nil, "100", "agent/getAuthenticatedExtendedCard", ``, -32007, shape03),

		call("0.3/-32008 required extension not requested", "reqext", nil, "110", "message/send", p3(msg03("hi")), -32008, shape03),
		call("0.3/ok required extension requested", "reqext", hdr("A2A-Extensions", requiredExt), "111", "message/send", p3(msg03("hi")), 0, ""),

		call("0.3/-32009 A2A-Version 2.0", "echo", hdr("A2A-Version", "2.0"), "120", "message/send", p3(msg03("hi")), -32009, shape03),
		call("0.3/ok A2A-Version 0.3.0 is 0.3", "echo", hdr("A2A-Version", "0.3.0"), "121", "message/send", p3(msg03("hi")), 0, ""),
		call("0.3/ok no header", "echo", nil, "122", "tasks/get", `{"id":"$DONE"}`, 0, ""),
	)

	// Ids are echoed exactly as sent.
	cs = append(cs,
		call("id/big integer", "echo", v10, "123456789012345678901234567890", "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("id/exponent", "echo", v10, "1e3", "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("id/negative fraction", "echo", v10, "-0.25", "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("id/string with escapes", "echo", v10, `"a\"b\\c\u00e9"`, "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("id/empty string", "echo", v10, `""`, "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		call("id/null", "echo", v10, "null", "GetTask", `{"id":"no-such-task"}`, -32001, shape10),
		errCase{name: "id/absent (notification)", srv: "echo", headers: v10, body: rpc("", "GetTask", `{"id":"no-such-task"}`), wantID: "null", code: -32001, shape: shape10},
		errCase{name: "id/absent (notification), 0.3", srv: "echo", body: rpc("", "tasks/get", `{"id":"no-such-task"}`), wantID: "null", code: -32001, shape: shape03},
		errCase{name: "id/absent, success", srv: "echo", headers: v10, body: rpc("", "GetTask", `{"id":"$DONE"}`), wantID: "null"},
	)
	return cs
}

// TestErrorCodes drives every error code the binding and the handler
// produce with the request that produces it, on both wires, and checks the
// whole answer: HTTP status, Content-Type, echoed id, code, message and the
// shape of error.data.
func TestErrorCodes(t *testing.T) {
	servers := errorServers(t)

	// Tasks the cases refer to, made on the echo server.
	echo := servers["echo"]
	done := taskID10(t, echo.sendText10("hi"))
	input := echo.post(rpc(`"setup"`, "SendMessage",
		`{"message":{"messageId":"in","role":"ROLE_USER","contextId":"ctx-input","parts":[{"text":"input: more please"}]}}`), v10).result(t)
	if got := str(t, input, "task.status.state"); got != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("setup: input task is %s", got)
	}
	inputID := taskID10(t, input)
	echo.post(rpc(`"setup"`, "CreateTaskPushNotificationConfig", `{"taskId":"`+done+`","id":"cfg-deleted","url":"https://example.com/hook"}`), v10).result(t)
	echo.post(rpc(`"setup"`, "DeleteTaskPushNotificationConfig", `{"taskId":"`+done+`","id":"cfg-deleted"}`), v10).result(t)
	fill := strings.NewReplacer("$DONE", done, "$INPUT", inputID)

	codes := make(map[int]bool)
	for _, tc := range errorCases() {
		codes[tc.code] = true
		t.Run(tc.name, func(t *testing.T) {
			if servers[tc.srv] == nil {
				t.Fatalf("no server %q", tc.srv)
			}
			w := servers[tc.srv].on(t)
			body := fill.Replace(tc.body)
			if tc.stream {
				checkStreamError(t, w, tc, body)
				return
			}
			verb := tc.verb
			if verb == "" {
				verb = http.MethodPost
			}
			var rd io.Reader = strings.NewReader(body)
			if body == "" && verb != http.MethodPost {
				rd = nil
			}
			r := w.do(verb, "/", rd, tc.headers)
			checkAnswer(t, tc, r.status, r.header, r.body)
			if tc.status == http.StatusMethodNotAllowed {
				if got := r.header.Get("Allow"); got != "POST" {
					t.Errorf("Allow %q, want POST", got)
				}
			}
		})
	}

	// Every code of the protocol has a case.
	for code := range reasons {
		if !codes[code] {
			t.Errorf("no case produces %d", code)
		}
	}

	// The server survived the panicking executor.
	t.Run("panic/server still serves", func(t *testing.T) {
		r := servers["panic"].on(t).post(rpc("1", "GetTask", `{"id":"x"}`), v10)
		checkAnswer(t, errCase{wantID: "1", code: -32001, shape: shape10}, r.status, r.header, r.body)
	})
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
		"echo":     serveEcho(t, jsonrpcserver.Config{}),
		"small":    serveEcho(t, jsonrpcserver.Config{MaxBodyBytes: 1024}),
		"nopush":   serve(t, echoCfg(noPush), jsonrpcserver.Config{}),
		"nostream": serve(t, echoCfg(noStream), jsonrpcserver.Config{}),
		"extnocfg": serve(t, echoCfg(extNoCfg), jsonrpcserver.Config{}),
		"reqext":   serve(t, echoCfg(reqExt), jsonrpcserver.Config{}),
		"panic":    serve(t, server.Config{Card: echoCard(), Executor: panicky{}}, jsonrpcserver.Config{}),
		"stranger": serve(t, server.Config{Card: echoCard(), Executor: stranger{}}, jsonrpcserver.Config{}),
	}
}

// checkStreamError checks an error answered on a stream: one event, with
// no SSE id, whose data is the JSON-RPC error.
func checkStreamError(t *testing.T, w *wire, tc errCase, body string) {
	t.Helper()
	s := w.stream(body, tc.headers)
	evs := s.all()
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1: %+v", len(evs), evs)
	}
	if evs[0].hasID {
		t.Errorf("error event has an SSE id %q", evs[0].id)
	}
	h := http.Header{"Content-Type": []string{"application/json"}} // checked by stream
	checkAnswer(t, tc, http.StatusOK, h, []byte(evs[0].data))
}

// checkAnswer checks one JSON-RPC answer against a case.
func checkAnswer(t *testing.T, tc errCase, status int, header http.Header, body []byte) {
	t.Helper()
	want := tc.status
	if want == 0 {
		want = http.StatusOK
	}
	if status != want {
		t.Errorf("HTTP status %d, want %d", status, want)
	}
	checkContentType(t, header, "application/json")
	e := decodeEnvelope(t, body)
	if string(e.id) != tc.wantID {
		t.Errorf("id %s, want %s", e.id, tc.wantID)
	}
	if tc.code == 0 {
		if e.err != nil {
			t.Fatalf("error %d %q, want success", e.err.Code, e.err.Message)
		}
		return
	}
	if e.err == nil {
		t.Fatalf("result %s, want error %d", e.result, tc.code)
	}
	if e.err.Code != tc.code {
		t.Fatalf("code %d (%s), want %d", e.err.Code, e.err.Message, tc.code)
	}
	if strings.TrimSpace(e.err.Message) == "" {
		t.Errorf("empty error message")
	}
	checkErrorData(t, e.err.Data, reasons[tc.code], tc.shape)
}

func checkErrorData(t *testing.T, data json.RawMessage, reason, shape string) {
	t.Helper()
	if len(data) == 0 {
		t.Fatalf("error has no data")
	}
	is10 := data[0] == '['
	switch {
	case shape == shape10 && !is10:
		t.Fatalf("error.data %s, want the 1.0 array of details", data)
	case shape == shape03 && is10:
		t.Fatalf("error.data %s, want the 0.3 object", data)
	}
	if is10 {
		var details []map[string]any
		if err := json.Unmarshal(data, &details); err != nil || len(details) == 0 {
			t.Fatalf("error.data %s: want a non-empty array of objects", data)
		}
		info := details[0]
		if info["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || info["reason"] != reason || info["domain"] != "a2a-protocol.org" {
			t.Fatalf("error.data[0] %v, want an ErrorInfo with reason %s in domain a2a-protocol.org", info, reason)
		}
		return
	}
	var d map[string]any
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("error.data %s: want an object", data)
	}
	if d["reason"] != reason {
		t.Fatalf("error.data %s, want reason %s", data, reason)
	}
}

// TestInternalErrorHidesDetails checks that what an executor's panic says
// stays in the server log.
func TestInternalErrorHidesDetails(t *testing.T) {
	w := serve(t, server.Config{Card: echoCard(), Executor: panicky{}}, jsonrpcserver.Config{})
	for _, body := range []string{
		rpc("1", "SendMessage", `{"message":`+msg10("hi")+`}`),
		rpc("2", "message/send", `{"message":`+msg03("hi")+`}`),
	} {
		r := w.post(body, v10)
		if strings.Contains(string(r.body), "secret") || strings.Contains(string(r.body), "boom") {
			t.Errorf("the answer reveals the panic: %s", r.body)
		}
	}
	// Nothing was created.
	r := w.post(rpc("3", "ListTasks", `{}`), v10).result(t)
	if n := string(path(t, r, "totalSize")); n != "0" {
		t.Errorf("%s tasks after failed sends, want 0", n)
	}
}

// TestParamsErrorSpeaksTheMethodsVersion: a 1.0 request whose params are
// not an object gets its -32602 error in the 1.0 data shape, although the
// envelope check fails before the method is dispatched.
func TestParamsErrorSpeaksTheMethodsVersion(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, params := range []string{`[]`, `"x"`, `5`} {
		r := w.post(rpc(`"p"`, "SendMessage", params), v10)
		tc := errCase{wantID: `"p"`, code: int(a2a.CodeInvalidParams), shape: shape10}
		t.Run(params, func(t *testing.T) { checkAnswer(t, tc, r.status, r.header, r.body) })
	}
}

// TestChunkedOversizedBodyGets413: a body over the limit sent with
// chunked transfer encoding (no Content-Length) gets the same HTTP 413 with
// a JSON-RPC -32600 body as one with a Content-Length, even while the
// client is still sending: the server drains a bounded amount more of the
// body before answering, so the connection is not reset under the reply.
func TestChunkedOversizedBodyGets413(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{MaxBodyBytes: 1024})
	// 64 KiB: the client is still writing when the connection is reset,
	// which loses the answer about half the time, with or without -race.
	body := rpc(`"big"`, "SendMessage", `{"message":`+msg10(strings.Repeat("a", 64<<10))+`}`)
	const attempts = 30
	failed := 0
	var last string
	for range attempts {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		req := w.newRequest(ctx, http.MethodPost, "/", io.MultiReader(strings.NewReader(body)), v10) // no length: chunked
		resp, err := w.hc.Do(req)
		if err != nil {
			cancel()
			failed++
			last = err.Error()
			continue
		}
		b, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if rerr != nil || resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "-32600") {
			failed++
			last = fmt.Sprintf("HTTP %d %s (read error %v)", resp.StatusCode, b, rerr)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d chunked oversized requests did not get HTTP 413 with a JSON-RPC error; last: %s", failed, attempts, last)
	}
}

// TestEnvelopeMemberNamesAreCaseSensitive: JSON-RPC member names are
// case-sensitive, so "ID", "Id", "METHOD" or "JSONRPC" are not the
// envelope's members and cannot override them.
func TestEnvelopeMemberNamesAreCaseSensitive(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, tc := range []struct {
		name string
		body string
		want errCase
	}{
		{"upper-case members are not the members",
			`{"JSONRPC":"2.0","ID":1,"METHOD":"GetTask","PARAMS":{"id":"x"}}`,
			errCase{wantID: "null", code: -32600, shape: shapeAny}},
		{"Id does not replace id",
			`{"jsonrpc":"2.0","id":1,"Id":2,"method":"GetTask","params":{"id":"x"}}`,
			errCase{wantID: "1", code: -32001, shape: shape10}},
		{"Method does not replace method",
			`{"jsonrpc":"2.0","id":1,"method":"GetTask","Method":"NoSuch","params":{"id":"x"}}`,
			errCase{wantID: "1", code: -32001, shape: shape10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.on(t).post(tc.body, v10)
			checkAnswer(t, tc.want, r.status, r.header, r.body)
		})
	}
}

// TestVersionWithoutHeader: a request without A2A-Version is A2A 0.3, as
// the specification requires, so a 1.0 method needs the header, or the
// A2A-Version request parameter the specification allows instead.
func TestVersionWithoutHeader(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	body := rpc(`"v"`, "GetTask", `{"id":"nope"}`)
	r := w.post(body, nil)
	checkAnswer(t, errCase{wantID: `"v"`, code: int(a2a.CodeMethodNotFound), shape: shape10}, r.status, r.header, r.body)
	if !strings.Contains(string(r.body), "A2A-Version: 1.0") {
		t.Errorf("the error does not say what to send: %s", r.body)
	}
	r = w.do(http.MethodPost, "/?A2A-Version=1.0", strings.NewReader(body), nil)
	checkAnswer(t, errCase{wantID: `"v"`, code: int(a2a.CodeTaskNotFound), shape: shape10}, r.status, r.header, r.body)
	r = w.post(rpc(`"w"`, "tasks/get", `{"id":"nope"}`), nil)
	checkAnswer(t, errCase{wantID: `"w"`, code: int(a2a.CodeTaskNotFound), shape: shape03}, r.status, r.header, r.body)
}
