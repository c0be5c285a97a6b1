package restserver_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// serveGenerations serves the echo agent with a card that declares the
// generation extension.
func serveGenerations(t *testing.T) *wire {
	card := echoCard()
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: a2a.GenerationExtension}}
	return serve(t, server.Config{Card: card, Executor: fastEcho()}, restserver.Config{})
}

var activates = hdr("A2A-Extensions", a2a.GenerationExtension)

// The generation extension on the HTTP+JSON binding: the fields and the
// answer's A2A-Extensions header with it, the same bytes without it,
// currentGeneration as a query parameter, and ifGenerationMatch refused
// with 409 ABORTED and the ErrorInfo of the 1.1 draft's example.
func TestGenerationsWire(t *testing.T) {
	w := serveGenerations(t)
	waiting := func(t *testing.T) string { return str(t, w.on(t).send("input: x"), "task.id") }
	followUp := func(match string) string {
		return `{"message":{"messageId":"f","taskId":"$ID","role":"ROLE_USER","parts":[{"text":"more"}]},"configuration":{"ifGenerationMatch":` + match + `}}`
	}
	tests := []struct {
		name     string
		verb     string
		path     string // $ID is the task's id
		body     string
		headers  map[string]string
		want     string // the generation member, "" for none
		code     int    // an error's HTTP status
		status   string
		reason   string
		wantMeta map[string]string
	}{
		{name: "GetTask without the extension", verb: "GET", path: "/tasks/$ID"},
		{name: "GetTask", verb: "GET", path: "/tasks/$ID", headers: activates, want: "2"},
		{name: "GetTask under a tenant route", verb: "GET", path: "/tenant-x/tasks/$ID", headers: activates, code: 404, status: "NOT_FOUND", reason: "TASK_NOT_FOUND"},
		{name: "currentGeneration past", verb: "GET", path: "/tasks/$ID?currentGeneration=1&historyLength=0", headers: activates, want: "2"},
		{name: "currentGeneration not a number", verb: "GET", path: "/tasks/$ID?currentGeneration=soon", headers: activates, code: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS"},
		{name: "currentGeneration twice", verb: "GET", path: "/tasks/$ID?currentGeneration=1&currentGeneration=2", headers: activates, code: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS"},
		{name: "ifGenerationMatch stale", verb: "POST", path: "/message:send", body: followUp(`"1"`), headers: activates,
			code: 409, status: "ABORTED", reason: "TASK_GENERATION_MISMATCH", wantMeta: map[string]string{"expectedGeneration": "1", "currentGeneration": "2"}},
		{name: "ifGenerationMatch current", verb: "POST", path: "/message:send", body: followUp("2"), headers: activates, want: "5"},
		{name: "ifGenerationMatch stale, without the extension: not honoured", verb: "POST", path: "/message:send", body: followUp("1")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := waiting(t)
			target := strings.ReplaceAll(tt.path, "$ID", id)
			r := w.on(t).do(tt.verb, target, strings.ReplaceAll(tt.body, "$ID", id), tt.headers)
			if echoed, on := r.header.Get("A2A-Extensions"), tt.headers != nil; (echoed == a2a.GenerationExtension) != on || (!on && echoed != "") {
				t.Errorf("answer's A2A-Extensions %q", echoed)
			}
			if tt.code != 0 {
				sb := checkStatus(t, r, tt.code, tt.status, tt.reason)
				for _, d := range sb.Error.Details {
					if d["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || tt.wantMeta == nil {
						continue
					}
					md, _ := d["metadata"].(map[string]any)
					if md["taskId"] != id {
						t.Errorf("ErrorInfo metadata %v, want taskId %s", md, id)
					}
					for k, v := range tt.wantMeta {
						if md[k] != v {
							t.Errorf("ErrorInfo metadata %v, want %s=%s", md, k, v)
						}
					}
				}
				return
			}
			res := json.RawMessage(r.ok(t))
			if tt.verb == "POST" {
				res = path(t, res, "task")
			}
			if got := obj(t, res)["generation"]; string(got) != tt.want {
				t.Fatalf("generation %s, want %q: %s", got, tt.want, res)
			}
			if tt.want != "" && tt.verb == "GET" {
				plain := w.on(t).do("GET", target, "", nil).ok(t)
				if want := strings.Replace(string(r.body), `,"generation":`+tt.want, "", 1); string(plain) != want {
					t.Errorf("without the extension:\n%s\nwant\n%s", plain, want)
				}
			}
		})
	}
}

// Each streamed event carries its generation, which is its SSE id; a
// stream without the extension carries none.
func TestGenerationsStreamWire(t *testing.T) {
	w := serveGenerations(t)
	for _, tt := range []struct {
		name    string
		headers map[string]string
	}{{"with the extension", activates}, {"without it", nil}} {
		t.Run(tt.name, func(t *testing.T) {
			s := w.on(t).stream("POST", "/message:stream", `{"message":`+msg("hello there")+`}`, tt.headers)
			if got := s.resp.Header.Get("A2A-Extensions"); (got != "") != (tt.headers != nil) {
				t.Errorf("A2A-Extensions %q", got)
			}
			events := s.all()
			if len(events) != 13 {
				t.Fatalf("%d events, want 13", len(events))
			}
			for i, ev := range events {
				payload := path(t, json.RawMessage(ev.data), kind(t, ev.data))
				got, want := string(obj(t, payload)["generation"]), ""
				if tt.headers != nil {
					want = strconv.Itoa(i + 1)
				}
				if ev.id != strconv.Itoa(i+1) || got != want {
					t.Fatalf("event %d: id %s, generation %q, want %q", i, ev.id, got, want)
				}
			}
		})
	}
}
