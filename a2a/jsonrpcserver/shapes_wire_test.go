package jsonrpcserver_test

import (
	"encoding/json"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestSendMessageShapes checks the result of a send on both wires.
func TestSendMessageShapes(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})

	t.Run("1.0", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc(`"s1"`, "SendMessage", `{"message":`+msg10("hello")+`}`), v10).result(t)
		if m := obj(t, res); len(m) != 1 || m["task"] == nil {
			t.Fatalf(`result %s, want {"task": ...}`, res)
		}
		task := path(t, res, "task")
		if has(t, task, "kind") {
			t.Errorf(`1.0 task has a "kind": %s`, task)
		}
		for p, want := range map[string]string{
			"status.state":             "TASK_STATE_COMPLETED",
			"history.0.role":           "ROLE_USER",
			"history.0.messageId":      "m-hello",
			"history.0.parts.0.text":   "hello",
			"artifacts.0.artifactId":   echo.ArtifactID,
			"artifacts.0.parts.0.text": "hello",
			"history.0.taskId":         str(t, task, "id"),
			"history.0.contextId":      str(t, task, "contextId"),
			"status.timestamp":         str(t, task, "status.timestamp"), // present
			"artifacts.0.name":         "echo",
		} {
			if got := str(t, task, p); got != want {
				t.Errorf("task.%s = %q, want %q", p, got, want)
			}
		}
		if n := len(arr(t, path(t, task, "history"))); n != 1 {
			t.Errorf("%d history messages, want 1", n)
		}
		if id := str(t, task, "id"); id == "" {
			t.Error("task without id")
		}
	})

	t.Run("0.3", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc("7", "message/send", `{"message":`+msg03("hello")+`}`), nil).result(t)
		for p, want := range map[string]string{
			"kind":                     "task",
			"status.state":             "completed",
			"history.0.kind":           "message",
			"history.0.role":           "user",
			"history.0.parts.0.kind":   "text",
			"history.0.parts.0.text":   "hello",
			"artifacts.0.artifactId":   echo.ArtifactID,
			"artifacts.0.parts.0.kind": "text",
			"artifacts.0.parts.0.text": "hello",
			"history.0.taskId":         str(t, res, "id"),
			"history.0.contextId":      str(t, res, "contextId"),
			"history.0.messageId":      "m-hello",
			"artifacts.0.name":         "echo",
			"status.timestamp":         str(t, res, "status.timestamp"),
		} {
			if got := str(t, res, p); got != want {
				t.Errorf("result.%s = %q, want %q", p, got, want)
			}
		}
		if has(t, res, "task") {
			t.Errorf(`0.3 result is wrapped: %s`, res)
		}
	})

	t.Run("1.0 input required then follow-up", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc(`"i1"`, "SendMessage", `{"message":`+msg10("input: name?")+`}`), v10).result(t)
		if got := str(t, res, "task.status.state"); got != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("state %s", got)
		}
		if got := str(t, res, "task.status.message.role"); got != "ROLE_AGENT" {
			t.Errorf("status message role %s, want ROLE_AGENT", got)
		}
		id, ctxID := str(t, res, "task.id"), str(t, res, "task.contextId")
		res = w.post(rpc(`"i2"`, "SendMessage", `{"message":{"messageId":"f","role":"ROLE_USER","taskId":"`+id+`","parts":[{"text":"Ada"}]}}`), v10).result(t)
		if got := str(t, res, "task.status.state"); got != "TASK_STATE_COMPLETED" {
			t.Fatalf("state %s", got)
		}
		if got := str(t, res, "task.contextId"); got != ctxID {
			t.Errorf("contextId %s, want %s", got, ctxID)
		}
		if got := str(t, res, "task.artifacts.0.parts.0.text"); got != "Ada" {
			t.Errorf("artifact %q", got)
		}
	})

	t.Run("0.3 input required then follow-up", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc("1", "message/send", `{"message":`+msg03("input: name?")+`}`), nil).result(t)
		if got := str(t, res, "status.state"); got != "input-required" {
			t.Fatalf("state %s", got)
		}
		if got := str(t, res, "status.message.role"); got != "agent" {
			t.Errorf("status message role %s, want agent", got)
		}
		id := str(t, res, "id")
		res = w.post(rpc("2", "message/send", `{"message":{"kind":"message","messageId":"f","role":"user","taskId":"`+id+`","parts":[{"kind":"text","text":"Ada"}]}}`), nil).result(t)
		if got := str(t, res, "status.state"); got != "completed" {
			t.Fatalf("state %s", got)
		}
	})

	t.Run("1.0 returnImmediately", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc(`"r"`, "SendMessage", `{"message":`+msg10("slow: x")+`,"configuration":{"returnImmediately":true}}`), v10).result(t)
		if got := str(t, res, "task.status.state"); got == "TASK_STATE_COMPLETED" || got == "" {
			t.Errorf("state %q: want the task as it was created", got)
		}
		waitState(t, w, str(t, res, "task.id"), "TASK_STATE_COMPLETED")
	})

	t.Run("0.3 blocking false", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc(`"r"`, "message/send", `{"message":`+msg03("slow: x")+`,"configuration":{"blocking":false}}`), nil).result(t)
		if got := str(t, res, "status.state"); got == "completed" || got == "" {
			t.Errorf("state %q: want the task as it was created", got)
		}
		waitState(t, w, str(t, res, "id"), "TASK_STATE_COMPLETED")
	})
}

// TestHistoryLengthZeroOmitsHistory checks the raw JSON: no "history" key.
func TestHistoryLengthZeroOmitsHistory(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	id := taskID10(t, w.sendText10("hi"))
	for _, tc := range []struct {
		name, body string
		headers    map[string]string
		task       string // path of the task in the result
	}{
		{"1.0 SendMessage", rpc("1", "SendMessage", `{"message":`+msg10("a")+`,"configuration":{"historyLength":0}}`), v10, "task"},
		{"1.0 GetTask", rpc("2", "GetTask", `{"id":"`+id+`","historyLength":0}`), v10, ""},
		{"1.0 ListTasks", rpc("3", "ListTasks", `{"historyLength":0}`), v10, "tasks.0"},
		{"0.3 message/send", rpc("4", "message/send", `{"message":`+msg03("a")+`,"configuration":{"historyLength":0}}`), nil, ""},
		{"0.3 tasks/get", rpc("5", "tasks/get", `{"id":"`+id+`","historyLength":0}`), nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := path(t, w.on(t).post(tc.body, tc.headers).result(t), tc.task)
			if has(t, task, "history") {
				t.Errorf(`"history" present: %s`, task)
			}
			if !has(t, task, "status") || !has(t, task, "id") {
				t.Errorf("not a task: %s", task)
			}
		})
	}
	t.Run("historyLength 1 keeps the last message", func(t *testing.T) {
		task := w.on(t).post(rpc("6", "GetTask", `{"id":"`+id+`","historyLength":1}`), v10).result(t)
		if n := len(arr(t, path(t, task, "history"))); n != 1 {
			t.Errorf("%d messages", n)
		}
	})
	t.Run("no historyLength keeps all", func(t *testing.T) {
		task := w.on(t).post(rpc("7", "GetTask", `{"id":"`+id+`"}`), v10).result(t)
		if !has(t, task, "history") {
			t.Errorf("history missing: %s", task)
		}
	})
}

// TestListTasksShapes checks artifacts, nextPageToken and paging.
func TestListTasksShapes(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, text := range []string{"one", "two", "three"} {
		w.sendText10(text)
	}

	t.Run("1.0", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc("1", "ListTasks", `{}`), v10).result(t)
		if !has(t, res, "nextPageToken") {
			t.Errorf(`no "nextPageToken": %s`, res)
		}
		if got := str(t, res, "nextPageToken"); got != "" {
			t.Errorf("nextPageToken %q on the only page", got)
		}
		tasks := arr(t, path(t, res, "tasks"))
		if len(tasks) != 3 || string(path(t, res, "totalSize")) != "3" {
			t.Fatalf("tasks %d, totalSize %s", len(tasks), path(t, res, "totalSize"))
		}
		for _, task := range tasks {
			if has(t, task, "artifacts") {
				t.Errorf("artifacts without includeArtifacts: %s", task)
			}
		}
		res = w.post(rpc("2", "ListTasks", `{"includeArtifacts":true}`), v10).result(t)
		for _, task := range arr(t, path(t, res, "tasks")) {
			if !has(t, task, "artifacts") {
				t.Errorf("no artifacts with includeArtifacts: %s", task)
			}
		}

		// Paging: two pages of 2 and 1, each task once.
		res = w.post(rpc("3", "ListTasks", `{"pageSize":2}`), v10).result(t)
		tok := str(t, res, "nextPageToken")
		if tok == "" || len(arr(t, path(t, res, "tasks"))) != 2 || string(path(t, res, "pageSize")) != "2" {
			t.Fatalf("first page %s", res)
		}
		seen := map[string]bool{}
		for _, task := range arr(t, path(t, res, "tasks")) {
			seen[str(t, task, "id")] = true
		}
		res = w.post(rpc("4", "ListTasks", `{"pageSize":2,"pageToken":`+quote(tok)+`}`), v10).result(t)
		if !has(t, res, "nextPageToken") || str(t, res, "nextPageToken") != "" {
			t.Errorf("last page nextPageToken: %s", res)
		}
		for _, task := range arr(t, path(t, res, "tasks")) {
			seen[str(t, task, "id")] = true
		}
		if len(seen) != 3 {
			t.Errorf("pages hold %d distinct tasks, want 3", len(seen))
		}
	})

	t.Run("1.0 empty", func(t *testing.T) {
		res := w.on(t).post(rpc("1", "ListTasks", `{"contextId":"no-such-context"}`), v10).result(t)
		if got := compact(t, path(t, res, "tasks")); got != "[]" {
			t.Errorf("tasks %s, want []", got)
		}
		if !has(t, res, "nextPageToken") {
			t.Errorf(`no "nextPageToken": %s`, res)
		}
	})

	t.Run("0.3", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc("1", "tasks/list", `{}`), nil).result(t)
		if !has(t, res, "next_page_token") {
			t.Errorf(`no "next_page_token": %s`, res)
		}
		tasks := arr(t, path(t, res, "tasks"))
		if len(tasks) != 3 {
			t.Fatalf("%d tasks", len(tasks))
		}
		for _, task := range tasks {
			if has(t, task, "artifacts") {
				t.Errorf("artifacts without include_artifacts: %s", task)
			}
			if str(t, task, "kind") != "task" || str(t, task, "status.state") != "completed" {
				t.Errorf("not a 0.3 task: %s", task)
			}
		}
		res = w.post(rpc("2", "tasks/list", `{"include_artifacts":true}`), nil).result(t)
		for _, task := range arr(t, path(t, res, "tasks")) {
			if !has(t, task, "artifacts") {
				t.Errorf("no artifacts with include_artifacts: %s", task)
			}
		}
		res = w.post(rpc("3", "tasks/list", `{"page_size":1}`), nil).result(t)
		if str(t, res, "next_page_token") == "" {
			t.Errorf("no next page token on a partial page: %s", res)
		}
	})
}

// TestPushConfigShapes checks the push config operations' results.
func TestPushConfigShapes(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	// Configs on a completed task: stored, never delivered.
	id := taskID10(t, w.sendText10("hi"))

	t.Run("1.0", func(t *testing.T) {
		w := w.on(t)
		res := w.post(rpc("1", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"c1","url":"https://example.com/hook","token":"tok"}`), v10).result(t)
		for p, want := range map[string]string{"id": "c1", "taskId": id, "url": "https://example.com/hook", "token": "tok"} {
			if got := str(t, res, p); got != want {
				t.Errorf("%s = %q, want %q", p, got, want)
			}
		}
		res = w.post(rpc("2", "CreateTaskPushNotificationConfig", `{"taskId":"`+id+`","url":"https://example.com/other"}`), v10).result(t)
		if str(t, res, "id") == "" {
			t.Errorf("no id assigned: %s", res)
		}
		res = w.post(rpc("3", "GetTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"c1"}`), v10).result(t)
		if str(t, res, "url") != "https://example.com/hook" {
			t.Errorf("get: %s", res)
		}
		res = w.post(rpc("4", "ListTaskPushNotificationConfigs", `{"taskId":"`+id+`"}`), v10).result(t)
		if n := len(arr(t, path(t, res, "configs"))); n != 2 {
			t.Errorf("%d configs: %s", n, res)
		}
		res = w.post(rpc("5", "DeleteTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"c1"}`), v10).result(t)
		if got := compact(t, res); got != "{}" {
			t.Errorf("delete result %s, want {}", got)
		}
		// Deleting again succeeds.
		res = w.post(rpc("6", "DeleteTaskPushNotificationConfig", `{"taskId":"`+id+`","id":"c1"}`), v10).result(t)
		if got := compact(t, res); got != "{}" {
			t.Errorf("second delete result %s, want {}", got)
		}
	})

	t.Run("0.3", func(t *testing.T) {
		w := w.on(t)
		id := taskID10(t, w.sendText10("hi")) // a task of its own
		res := w.post(rpc("1", "tasks/pushNotificationConfig/set", `{"taskId":"`+id+`","pushNotificationConfig":{"url":"https://example.com/hook","token":"tok"}}`), nil).result(t)
		if str(t, res, "taskId") != id || str(t, res, "pushNotificationConfig.url") != "https://example.com/hook" {
			t.Errorf("set: %s", res)
		}
		if got := str(t, res, "pushNotificationConfig.id"); got != id {
			t.Errorf("config id %q, want the task id %q", got, id)
		}
		// get without pushNotificationConfigId: the task's config.
		res = w.post(rpc("2", "tasks/pushNotificationConfig/get", `{"id":"`+id+`"}`), nil).result(t)
		if str(t, res, "taskId") != id || str(t, res, "pushNotificationConfig.url") != "https://example.com/hook" || str(t, res, "pushNotificationConfig.token") != "tok" {
			t.Errorf("get without config id: %s", res)
		}
		res = w.post(rpc("3", "tasks/pushNotificationConfig/list", `{"id":"`+id+`"}`), nil).result(t)
		list := arr(t, res)
		if len(list) != 1 || str(t, list[0], "pushNotificationConfig.url") != "https://example.com/hook" {
			t.Errorf("list: %s", res)
		}
		r := w.post(rpc("4", "tasks/pushNotificationConfig/delete", `{"id":"`+id+`","pushNotificationConfigId":"`+id+`"}`), nil)
		res = r.result(t)
		if string(res) != "null" {
			t.Errorf("delete result %s, want null", res)
		}
		res = w.post(rpc("5", "tasks/pushNotificationConfig/list", `{"id":"`+id+`"}`), nil).result(t)
		if got := compact(t, res); got != "[]" {
			t.Errorf("list after delete %s, want []", got)
		}
	})
}

// TestCancelShapes cancels an input-required task on both wires.
func TestCancelShapes(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, tc := range []struct {
		name, method, want string
		headers            map[string]string
	}{
		{"1.0", "CancelTask", "TASK_STATE_CANCELED", v10},
		{"0.3", "tasks/cancel", "canceled", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := w.on(t)
			id := taskID10(t, w.sendText10("input: wait"))
			res := w.post(rpc("1", tc.method, `{"id":"`+id+`"}`), tc.headers).result(t)
			if got := str(t, res, "status.state"); got != tc.want {
				t.Errorf("state %s, want %s", got, tc.want)
			}
			// Canceling again returns the canceled task.
			res = w.post(rpc("2", tc.method, `{"id":"`+id+`"}`), tc.headers).result(t)
			if got := str(t, res, "status.state"); got != tc.want {
				t.Errorf("second cancel: state %s, want %s", got, tc.want)
			}
		})
	}
}

// TestExtendedCardShapes gets a configured extended card on both wires.
func TestExtendedCardShapes(t *testing.T) {
	card, ext := echoCard(), echoCard()
	card.Capabilities.ExtendedAgentCard = true
	ext.Name = "echo (extended)"
	w := serve(t, server.Config{Card: card, ExtendedCard: ext, Executor: fastEcho()}, jsonrpcserver.Config{})

	res := w.post(rpc("1", "GetExtendedAgentCard", `{}`), v10).result(t)
	if str(t, res, "name") != "echo (extended)" || !has(t, res, "supportedInterfaces") {
		t.Errorf("1.0 extended card: %s", res)
	}
	res = w.post(rpc("2", "agent/getAuthenticatedExtendedCard", ``), nil).result(t)
	if str(t, res, "name") != "echo (extended)" || str(t, res, "protocolVersion") != "0.3" || str(t, res, "url") == "" {
		t.Errorf("0.3 extended card: %s", res)
	}
}

// TestNotifications: a request without an id is still answered, with a
// null id, for results and errors alike.
func TestNotifications(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, tc := range []struct {
		name, body string
		headers    map[string]string
		wantError  bool
	}{
		{"1.0 SendMessage", rpc("", "SendMessage", `{"message":`+msg10("hi")+`}`), v10, false},
		{"0.3 message/send", rpc("", "message/send", `{"message":`+msg03("hi")+`}`), nil, false},
		{"1.0 ListTasks", rpc("", "ListTasks", `{}`), v10, false},
		{"1.0 error", rpc("", "GetTask", `{"id":"nope"}`), v10, true},
		{"0.3 error", rpc("", "tasks/get", `{"id":"nope"}`), nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := w.on(t).post(tc.body, tc.headers)
			if r.status != 200 {
				t.Fatalf("HTTP %d", r.status)
			}
			checkContentType(t, r.header, "application/json")
			e := decodeEnvelope(t, r.body)
			if string(e.id) != "null" {
				t.Errorf("id %s, want null", e.id)
			}
			if (e.err != nil) != tc.wantError {
				t.Errorf("error %v, want error: %v", e.err, tc.wantError)
			}
		})
	}
	t.Run("streaming", func(t *testing.T) {
		s := w.on(t).stream(rpc("", "SendStreamingMessage", `{"message":`+msg10("hi")+`}`), v10)
		evs := s.all()
		if len(evs) == 0 {
			t.Fatal("no events")
		}
		for _, ev := range evs {
			if id := string(decodeEnvelope(t, []byte(ev.data)).id); id != "null" {
				t.Errorf("event id %s, want null", id)
			}
		}
	})
}

func arr(t *testing.T, raw json.RawMessage) []json.RawMessage {
	t.Helper()
	var a []json.RawMessage
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("not an array: %s", raw)
	}
	return a
}

// TestProtoFieldNames checks that 1.0 params may name their fields as the
// proto does (task_id beside taskId): the specification's JSON is ProtoJSON
// (section 5.5, ADR-001), whose parsers accept both names. The A2A TCK's
// JSON-RPC client sends them so.
func TestProtoFieldNames(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	id := taskID10(t, w.sendText10("hi"))
	for _, c := range []struct{ method, params, path, want string }{
		{"CreateTaskPushNotificationConfig", `{"task_id":"` + id + `","id":"c1","url":"https://example.com/hook"}`, "taskId", id},
		{"GetTaskPushNotificationConfig", `{"task_id":"` + id + `","id":"c1"}`, "url", "https://example.com/hook"},
		{"ListTaskPushNotificationConfigs", `{"task_id":"` + id + `","page_size":1}`, "configs.0.id", "c1"},
		{"GetTask", `{"id":"` + id + `","history_length":0}`, "id", id},
		{"DeleteTaskPushNotificationConfig", `{"task_id":"` + id + `","id":"c1"}`, "", ""},
	} {
		t.Run(c.method, func(t *testing.T) {
			res := w.on(t).post(rpc("1", c.method, c.params), v10).result(t)
			if c.path != "" {
				if got := str(t, res, c.path); got != c.want {
					t.Errorf("%s = %q, want %q: %s", c.path, got, c.want, res)
				}
			}
			if c.method == "GetTask" {
				if _, ok := obj(t, res)["history"]; ok {
					t.Errorf("history_length 0 ignored: %s", res)
				}
			}
		})
	}

	// Both names of one field is a duplicate, as ProtoJSON parsers say.
	r := w.post(rpc("1", "GetTaskPushNotificationConfig", `{"task_id":"`+id+`","taskId":"`+id+`","id":"c1"}`), v10)
	if e := decodeEnvelope(t, r.body); e.err == nil || e.err.Code != -32602 {
		t.Errorf("task_id and taskId: %s, want error -32602", r.body)
	}
}
