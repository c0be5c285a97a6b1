package jsonrpcserver_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// serveGenerations serves the echo agent with a card that declares the
// generation extension.
func serveGenerations(t *testing.T) *wire {
	card := echoCard()
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: a2a.GenerationExtension}}
	return serve(t, server.Config{Card: card, Executor: fastEcho()}, jsonrpcserver.Config{})
}

// withGenerations is the header of a 1.0 client that activates the
// extension.
var withGenerations = hdr("A2A-Version", "1.0", "A2A-Extensions", "urn:other, "+a2a.GenerationExtension)

// The generation extension on the JSON-RPC binding: the fields and the
// answer's A2A-Extensions header with it, the very same bytes without it,
// ifGenerationMatch refused with -32010 and its ErrorInfo, currentGeneration
// in both JSON forms of an int64.
func TestGenerationsWire(t *testing.T) {
	w := serveGenerations(t)
	// Each case gets a task of its own, waiting for input at generation 2
	// (the task the server made, the echo agent's question).
	waiting := func(t *testing.T) string { return taskID10(t, w.on(t).sendText10("input: x")) }
	tests := []struct {
		name    string
		method  string
		params  string // $ID is the task's id
		headers map[string]string
		// want is the result's generation member ("" for none), or
		// wantCode the error's code.
		want     string
		wantCode int
		wantMeta map[string]string
	}{
		{name: "GetTask without the extension", method: "GetTask", params: `{"id":"$ID"}`, headers: v10},
		{name: "GetTask", method: "GetTask", params: `{"id":"$ID"}`, headers: withGenerations, want: "2"},
		{name: "currentGeneration past, as a number", method: "GetTask", params: `{"id":"$ID","currentGeneration":1}`, headers: withGenerations, want: "2"},
		{name: "currentGeneration past, as ProtoJSON's string", method: "GetTask", params: `{"id":"$ID","currentGeneration":"-1"}`, headers: withGenerations, want: "2"},
		{name: "current_generation, the proto name", method: "GetTask", params: `{"id":"$ID","current_generation":"0"}`, headers: withGenerations, want: "2"},
		{name: "currentGeneration not a number", method: "GetTask", params: `{"id":"$ID","currentGeneration":"soon"}`, headers: withGenerations, wantCode: -32602},
		{name: "ifGenerationMatch stale", method: "SendMessage",
			params:  `{"message":{"messageId":"f1","taskId":"$ID","role":"ROLE_USER","parts":[{"text":"more"}]},"configuration":{"ifGenerationMatch":"1"}}`,
			headers: withGenerations, wantCode: -32010, wantMeta: map[string]string{"expectedGeneration": "1", "currentGeneration": "2"}},
		{name: "ifGenerationMatch current", method: "SendMessage",
			params:  `{"message":{"messageId":"f2","taskId":"$ID","role":"ROLE_USER","parts":[{"text":"more"}]},"configuration":{"ifGenerationMatch":2}}`,
			headers: withGenerations, want: "5"},
		{name: "ifGenerationMatch stale, without the extension: not honoured", method: "SendMessage",
			params:  `{"message":{"messageId":"f3","taskId":"$ID","role":"ROLE_USER","parts":[{"text":"more"}]},"configuration":{"ifGenerationMatch":1}}`,
			headers: v10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := waiting(t)
			r := w.on(t).post(rpc(`7`, tt.method, strings.ReplaceAll(tt.params, "$ID", id)), tt.headers)
			echoed := r.header.Get("A2A-Extensions")
			if on := tt.headers["A2A-Extensions"] != ""; (echoed == a2a.GenerationExtension) != on || (!on && echoed != "") {
				t.Errorf("answer's A2A-Extensions %q", echoed)
			}
			if tt.wantCode != 0 {
				e := decodeEnvelope(t, r.body)
				if e.err == nil || e.err.Code != tt.wantCode {
					t.Fatalf("answer %s, want error %d", r.body, tt.wantCode)
				}
				if tt.wantMeta != nil {
					checkErrorInfo(t, e.err.Data, "TASK_GENERATION_MISMATCH", id, tt.wantMeta)
				}
				return
			}
			res := r.result(t)
			if tt.method == "SendMessage" {
				res = path(t, res, "task")
			}
			if got := obj(t, res)["generation"]; string(got) != tt.want {
				t.Fatalf("generation %s, want %q: %s", got, tt.want, res)
			}
			if tt.want == "" {
				return
			}
			// Without the extension, the same answer lacks the field alone.
			if tt.method == "GetTask" {
				plain := w.on(t).post(rpc(`7`, "GetTask", `{"id":"`+id+`"}`), v10)
				if want := strings.Replace(string(r.body), `,"generation":`+tt.want, "", 1); string(plain.body) != want {
					t.Errorf("without the extension:\n%s\nwant\n%s", plain.body, want)
				}
			}
		})
	}
}

// checkErrorInfo checks a 1.0 error's data: a google.rpc.ErrorInfo first,
// naming reason and carrying the task and meta.
func checkErrorInfo(t *testing.T, data json.RawMessage, reason, taskID string, meta map[string]string) {
	t.Helper()
	var details []struct {
		Type     string            `json:"@type"`
		Reason   string            `json:"reason"`
		Domain   string            `json:"domain"`
		Metadata map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(data, &details); err != nil || len(details) == 0 {
		t.Fatalf("error data %s: %v", data, err)
	}
	d := details[0]
	if d.Type != "type.googleapis.com/google.rpc.ErrorInfo" || d.Reason != reason || d.Domain != "a2a-protocol.org" || d.Metadata["taskId"] != taskID {
		t.Fatalf("ErrorInfo %+v", d)
	}
	for k, v := range meta {
		if d.Metadata[k] != v {
			t.Errorf("ErrorInfo metadata %v, want %s=%s", d.Metadata, k, v)
		}
	}
}

// Each streamed event carries its generation, which is its SSE id; a
// stream without the extension carries none.
func TestGenerationsStreamWire(t *testing.T) {
	w := serveGenerations(t)
	for _, tt := range []struct {
		name    string
		headers map[string]string
		on      bool
	}{{"with the extension", withGenerations, true}, {"without it", v10, false}} {
		t.Run(tt.name, func(t *testing.T) {
			s := w.on(t).stream(rpc(`"s"`, "SendStreamingMessage", `{"message":`+msg10("hello there")+`}`), tt.headers)
			if got := s.resp.Header.Get("A2A-Extensions"); (got != "") != tt.on {
				t.Errorf("A2A-Extensions %q", got)
			}
			events := s.all()
			if len(events) != 13 {
				t.Fatalf("%d events, want 13", len(events))
			}
			for i, ev := range events {
				res := path(t, json.RawMessage(ev.data), "result")
				var payload json.RawMessage
				for _, k := range []string{"task", "statusUpdate", "artifactUpdate"} {
					if p, ok := obj(t, res)[k]; ok {
						payload = p
					}
				}
				got := string(obj(t, payload)["generation"])
				want := ""
				if tt.on {
					want = strconv.Itoa(i + 1)
				}
				if ev.id != strconv.Itoa(i+1) || got != want {
					t.Fatalf("event %d: id %s, generation %q, want %q", i, ev.id, got, want)
				}
			}
		})
	}
}

// A long poll over JSON-RPC answers once the task passes the generation.
func TestLongPollWire(t *testing.T) {
	w := serveGenerations(t)
	id := taskID10(t, w.sendText10("input: x"))
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req := w.newRequest(ctx, http.MethodPost, "/", strings.NewReader(rpc(`"p"`, "GetTask", `{"id":"`+id+`","currentGeneration":2}`)), withGenerations)
	type answer struct {
		body []byte
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		resp, err := w.hc.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		done <- answer{b, err}
	}()
	w.post(rpc(`"f"`, "SendMessage", `{"message":{"messageId":"f","taskId":"`+id+`","role":"ROLE_USER","parts":[{"text":"more"}]}}`), v10).result(t)
	a := <-done // bounded by the request's context
	if a.err != nil {
		t.Fatal(a.err)
	}
	e := decodeEnvelope(t, a.body)
	if e.err != nil {
		t.Fatalf("long poll: %s", a.body)
	}
	g, err := strconv.Atoi(string(obj(t, e.result)["generation"]))
	if err != nil || g <= 2 {
		t.Fatalf("long poll answered generation %d (%v): %s", g, err, a.body)
	}
}
