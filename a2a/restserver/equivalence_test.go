package restserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/server"
)

// rpc posts a 1.0 JSON-RPC request to the JSON-RPC endpoint of a server
// that serves both bindings and returns its result.
func (w *wire) rpc(method, params string) json.RawMessage {
	w.t.Helper()
	r := w.do("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, hdr("A2A-Version", "1.0"))
	b := r.ok(w.t)
	if e, ok := obj(w.t, b)["error"]; ok {
		w.t.Fatalf("%s: error %s", method, e)
	}
	return path(w.t, b, "result")
}

// rpcStream posts a 1.0 JSON-RPC streaming request and returns the
// results of its events, with their SSE ids.
func (w *wire) rpcStream(method, params string, headers map[string]string) []sseEvent {
	w.t.Helper()
	h := hdr("A2A-Version", "1.0")
	for k, v := range headers {
		h[k] = v
	}
	evs := w.stream("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":`+params+`}`, h).all()
	for i := range evs {
		evs[i].data = string(path(w.t, json.RawMessage(evs[i].data), "result"))
	}
	return evs
}

// compact returns raw JSON without insignificant space.
func compact(t *testing.T, raw string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// One Handler, both bindings on one port: a task made over either is
// visible (GetTask), streamable (SubscribeToTask, with Last-Event-ID) and
// cancellable over the other, and both show it alike.
func TestTransportEquivalence(t *testing.T) {
	g := newGated(2)
	t.Cleanup(g.open)
	w := serveBoth(t, server.Config{Card: echoCard(), Executor: g})

	// The card, served at the same place, lists both at the same URL.
	card := w.do("GET", "/.well-known/agent-card.json", "", hdr("A2A-Version", "1.0")).ok(t)
	if a, b := str(t, card, "supportedInterfaces.0.url"), str(t, card, "supportedInterfaces.1.url"); a != w.base+"/" || b != a {
		t.Errorf("interfaces at %s and %s, want both at %s/", a, b, w.base)
	}
	if a, b := str(t, card, "supportedInterfaces.0.protocolBinding"), str(t, card, "supportedInterfaces.1.protocolBinding"); a != "JSONRPC" || b != "HTTP+JSON" {
		t.Errorf("bindings %s and %s", a, b)
	}
	// JSON-RPC's own refusals stay its own: a GET of its endpoint.
	if r := w.do("GET", "/", "", nil); r.status != 405 || r.header.Get("Allow") != "POST" || !strings.Contains(string(r.body), `"jsonrpc":"2.0"`) {
		t.Errorf("GET /: HTTP %d %s", r.status, r.body)
	}

	start := func(over string) string {
		body := `{"message":` + msg("go "+over) + `,"configuration":{"returnImmediately":true}}`
		if over == "rest" {
			return str(t, w.do("POST", "/message:send", body, nil).ok(t), "task.id")
		}
		return str(t, w.rpc("SendMessage", body), "task.id")
	}
	get := func(over, id string) string {
		if over == "rest" {
			return compact(t, string(w.do("GET", "/tasks/"+id, "", nil).ok(t)))
		}
		return compact(t, string(w.rpc("GetTask", `{"id":"`+id+`"}`)))
	}
	subscribe := func(over, id, last string) []sseEvent {
		h := map[string]string{}
		if last != "" {
			h["Last-Event-ID"] = last
		}
		if over == "rest" {
			return w.stream("GET", "/tasks/"+id+":subscribe", "", h).all()
		}
		return w.rpcStream("SubscribeToTask", `{"id":"`+id+`"}`, h)
	}
	cancel := func(over, id string) string {
		if over == "rest" {
			return str(t, w.do("POST", "/tasks/"+id+":cancel", "", nil).ok(t), "status.state")
		}
		return str(t, w.rpc("CancelTask", `{"id":"`+id+`"}`), "status.state")
	}
	other := map[string]string{"rest": "rpc", "rpc": "rest"}

	for _, made := range []string{"rest", "rpc"} {
		t.Run("made over "+made, func(t *testing.T) {
			w := w.on(t)
			seen := other[made]

			// A running task: visible alike, cancellable over the other.
			running := start(made)
			waitState(t, w, running, "TASK_STATE_WORKING")
			if a, b := get(made, running), get(seen, running); a != b {
				t.Errorf("GetTask differs:\n%s: %s\n%s: %s", made, a, seen, b)
			}
			if got := cancel(seen, running); got != "TASK_STATE_CANCELED" {
				t.Errorf("cancel over %s: %s", seen, got)
			}
			if a, b := get(made, running), get(seen, running); a != b || !strings.Contains(a, "TASK_STATE_CANCELED") {
				t.Errorf("after the cancel, GetTask differs:\n%s: %s\n%s: %s", made, a, seen, b)
			}

			// A task followed over the other binding to its end, then
			// replayed alike over both.
			id := start(made)
			waitState(t, w, id, "TASK_STATE_WORKING")
			s := w.stream("GET", "/tasks/"+id+":subscribe", "", nil)
			if seen == "rpc" {
				s = w.stream("POST", "/", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`, hdr("A2A-Version", "1.0"))
			}
			s.mustNext() // the snapshot
			g.open()
			if n := len(s.all()); n != 3 {
				t.Errorf("subscribed over %s: %d events after the snapshot, want 3", seen, n)
			}
			rest, rpc := subscribe("rest", id, "0"), subscribe("rpc", id, "0")
			if len(rest) != len(rpc) || len(rest) < 4 {
				t.Fatalf("replays: %d events over REST, %d over JSON-RPC", len(rest), len(rpc))
			}
			for i := range rest {
				if rest[i].id != rpc[i].id || compact(t, rest[i].data) != compact(t, rpc[i].data) {
					t.Errorf("event %d differs:\nREST %s %s\nRPC  %s %s", i, rest[i].id, rest[i].data, rpc[i].id, rpc[i].data)
				}
			}
			g.rearm()
		})
	}
}
