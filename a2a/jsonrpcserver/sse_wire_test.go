package jsonrpcserver_test

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// gated works only when the test lets it: it reports WORKING, waits for
// release, then sends chunks artifact chunks and completes. A test holds a
// task running for as long as it needs without relying on timing.
type gated struct {
	chunks  int
	release chan struct{}
	once    sync.Once
}

func newGated(chunks int) *gated { return &gated{chunks: chunks, release: make(chan struct{})} }

func (g *gated) open() { g.once.Do(func() { close(g.release) }) }

func (g *gated) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
			return
		}
		select {
		case <-g.release:
		case <-ctx.Done():
			return
		}
		for i := range g.chunks {
			art := a2a.Artifact{ArtifactID: "out", Parts: []a2a.Part{a2a.TextPart(strconv.Itoa(i))}}
			if !yield(a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, i > 0, i == g.chunks-1), nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, nil), nil)
	}
}

func (g *gated) Cancel(context.Context, *a2a.Task) error { return nil }

func serveGated(t *testing.T, chunks int) (*wire, *gated) {
	g := newGated(chunks)
	t.Cleanup(g.open)
	return serve(t, server.Config{Card: echoCard(), Executor: g}, jsonrpcserver.Config{}), g
}

// streamWire names the methods and spellings of one wire.
type streamWire struct {
	name                string
	headers             map[string]string
	send, subscribe     string
	msg                 func(string) string
	completed, working  string
	kindOf              func(t *testing.T, result json.RawMessage) string // event kind
	taskIDOf, stateOfSU func(t *testing.T, result json.RawMessage) string
}

var streamWires = []streamWire{
	{
		name: "1.0", headers: v10, send: "SendStreamingMessage", subscribe: "SubscribeToTask", msg: msg10,
		completed: "TASK_STATE_COMPLETED", working: "TASK_STATE_WORKING",
		kindOf: func(t *testing.T, r json.RawMessage) string {
			m := obj(t, r)
			if len(m) != 1 {
				t.Fatalf("stream result %s: want exactly one member", r)
			}
			for k := range m {
				return k
			}
			return ""
		},
		taskIDOf:  func(t *testing.T, r json.RawMessage) string { return str(t, r, "task.id") },
		stateOfSU: func(t *testing.T, r json.RawMessage) string { return str(t, r, "statusUpdate.status.state") },
	},
	{
		name: "0.3", send: "message/stream", subscribe: "tasks/resubscribe", msg: msg03,
		completed: "completed", working: "working",
		kindOf: func(t *testing.T, r json.RawMessage) string {
			return map[string]string{
				"task": "task", "status-update": "statusUpdate", "artifact-update": "artifactUpdate", "message": "message",
			}[str(t, r, "kind")]
		},
		taskIDOf:  func(t *testing.T, r json.RawMessage) string { return str(t, r, "id") },
		stateOfSU: func(t *testing.T, r json.RawMessage) string { return str(t, r, "status.state") },
	},
}

// streamed is one event as the tests compare them: its SSE id and the
// JSON-RPC result it carries.
type streamed struct {
	id     string
	result string // compact JSON
}

// results checks every event's envelope (the request id, a result, a
// single data line) and returns the events.
func results(t *testing.T, evs []sseEvent, reqID string) []streamed {
	t.Helper()
	out := make([]streamed, len(evs))
	for i, ev := range evs {
		if strings.Contains(ev.data, "\n") {
			t.Errorf("event %d: data spans several lines", i)
		}
		e := decodeEnvelope(t, []byte(ev.data))
		if string(e.id) != reqID {
			t.Errorf("event %d: JSON-RPC id %s, want %s", i, e.id, reqID)
		}
		if e.err != nil {
			t.Fatalf("event %d: error %d %s", i, e.err.Code, e.err.Message)
		}
		if !ev.hasID {
			t.Errorf("event %d has no SSE id", i)
		}
		out[i] = streamed{id: ev.id, result: compact(t, e.result)}
	}
	return out
}

// checkConsecutive checks SSE ids first, first+1, ...
func checkConsecutive(t *testing.T, evs []streamed, first int) {
	t.Helper()
	for i, ev := range evs {
		if want := strconv.Itoa(first + i); ev.id != want {
			t.Errorf("event %d: SSE id %q, want %s", i, ev.id, want)
		}
	}
}

// TestStreamFormat checks a whole SendStreamingMessage stream of the echo
// agent (the task, WORKING, 10 chunks, COMPLETED) on both wires.
func TestStreamFormat(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, sw := range streamWires {
		t.Run(sw.name, func(t *testing.T) {
			s := w.on(t).stream(rpc(`"st-1"`, sw.send, `{"message":`+sw.msg("hello stream")+`}`), sw.headers)
			evs := results(t, s.all(), `"st-1"`)
			if len(evs) != 13 {
				t.Fatalf("%d events, want 13", len(evs))
			}
			checkConsecutive(t, evs, 1)
			var text strings.Builder
			for i, ev := range evs {
				r := json.RawMessage(ev.result)
				kind := sw.kindOf(t, r)
				switch {
				case i == 0:
					if kind != "task" {
						t.Fatalf("first event is a %s, want the task", kind)
					}
				case i == 1 || i == 12:
					if kind != "statusUpdate" {
						t.Fatalf("event %d is a %s, want a status update", i, kind)
					}
					want := map[int]string{1: sw.working, 12: sw.completed}[i]
					if got := sw.stateOfSU(t, r); got != want {
						t.Errorf("event %d: state %s, want %s", i, got, want)
					}
					if sw.name == "0.3" {
						final := string(path(t, r, "final"))
						if want := strconv.FormatBool(i == 12); final != want {
							t.Errorf(`event %d: "final": %s, want %s`, i, final, want)
						}
					}
				default:
					if kind != "artifactUpdate" {
						t.Fatalf("event %d is a %s, want an artifact update", i, kind)
					}
					p := "artifactUpdate.artifact.parts.0.text"
					if sw.name == "0.3" {
						p = "artifact.parts.0.text"
					}
					text.WriteString(str(t, r, p))
				}
			}
			if text.String() != "hello stream" {
				t.Errorf("chunks make %q", text.String())
			}
		})
	}
}

// TestSubscribeStream subscribes to a running task: the first event is the
// task as it is, with the SSE id of the event it reflects, and the ids go
// on from there.
func TestSubscribeStream(t *testing.T) {
	for _, sw := range streamWires {
		t.Run(sw.name, func(t *testing.T) {
			w, g := serveGated(t, 3)
			res := w.post(rpc("1", "SendMessage", `{"message":`+msg10("go")+`,"configuration":{"returnImmediately":true}}`), v10).result(t)
			id := taskID10(t, res)
			waitState(t, w, id, "TASK_STATE_WORKING") // event 2 is logged

			s := w.stream(rpc(`"sub"`, sw.subscribe, `{"id":"`+id+`"}`), sw.headers)
			first := s.mustNext()
			g.open()
			evs := results(t, append([]sseEvent{first}, s.all()...), `"sub"`)
			// The task at event 2 (WORKING), 3 chunks, COMPLETED.
			if len(evs) != 5 {
				t.Fatalf("%d events, want 5: %v", len(evs), evs)
			}
			checkConsecutive(t, evs, 2)
			r0 := json.RawMessage(evs[0].result)
			if kind := sw.kindOf(t, r0); kind != "task" {
				t.Fatalf("first event is a %s, want the task", kind)
			}
			if got := sw.taskIDOf(t, r0); got != id {
				t.Errorf("task %s, want %s", got, id)
			}
			if got := sw.stateOfSU(t, json.RawMessage(evs[4].result)); got != sw.completed {
				t.Errorf("last state %s", got)
			}
		})
	}
}

// TestStreamIDOutlivesItsBody: a stream gives its request's buffer back
// once the request is decoded, so other requests reuse it while the
// stream is open; every event still echoes the stream's own JSON-RPC id.
func TestStreamIDOutlivesItsBody(t *testing.T) {
	for _, sw := range streamWires {
		t.Run(sw.name, func(t *testing.T) {
			w, g := serveGated(t, 3)
			res := w.post(rpc("1", "SendMessage", `{"message":`+msg10("go")+`,"configuration":{"returnImmediately":true}}`), v10).result(t)
			id := taskID10(t, res)
			mine := `"` + strings.Repeat("s", 64) + `"`
			s := w.stream(rpc(mine, sw.subscribe, `{"id":`+quote(id)+`}`), sw.headers)
			first := s.mustNext()
			// Requests of the same shape, whose ids sit where the stream's
			// did in its body.
			for i := range 20 {
				other := `"` + strings.Repeat(strconv.Itoa(i%10), 64) + `"`
				w.post(rpc(other, "GetTask", `{"id":`+quote(id)+`}`), v10).result(t)
			}
			g.open()
			evs := results(t, append([]sseEvent{first}, s.all()...), mine)
			if len(evs) != 5 {
				t.Fatalf("%d events, want 5 (the task, 3 chunks, COMPLETED)", len(evs))
			}
		})
	}
}

// TestSubscribeInterrupted subscribes to a task waiting for input: the
// snapshot arrives at once (without waiting for a keep-alive to flush it),
// and the stream follows the run the answer starts to its end.
func TestSubscribeInterrupted(t *testing.T) {
	// No keep-alive within the test's time, so a snapshot left unflushed
	// fails it instead of arriving late.
	w := serve(t, server.Config{Card: echoCard(), Executor: fastEcho()}, jsonrpcserver.Config{KeepAlive: time.Hour})
	for _, sw := range streamWires {
		t.Run(sw.name, func(t *testing.T) {
			w := w.on(t)
			id := taskID10(t, w.sendText10(echo.InputPrefix+" "+sw.name))
			s := w.stream(rpc(`"sub"`, sw.subscribe, `{"id":`+quote(id)+`}`), sw.headers)
			first := s.mustNext()
			answer := `{"messageId":"answer-` + sw.name + `","taskId":` + quote(id) + `,"role":"ROLE_USER","parts":[{"text":"the answer"}]}`
			if got := str(t, w.post(rpc(`"answer"`, "SendMessage", `{"message":`+answer+`}`), v10).result(t), "task.status.state"); got != "TASK_STATE_COMPLETED" {
				t.Fatalf("answer: task %s", got)
			}
			evs := results(t, append([]sseEvent{first}, s.all()...), `"sub"`)
			checkConsecutive(t, evs, 2)
			r0 := json.RawMessage(evs[0].result)
			if kind := sw.kindOf(t, r0); kind != "task" {
				t.Fatalf("first event is a %s, want the task", kind)
			}
			last := json.RawMessage(evs[len(evs)-1].result)
			if kind := sw.kindOf(t, last); kind != "statusUpdate" || sw.stateOfSU(t, last) != sw.completed {
				t.Fatalf("last event %s, want the completed status", last)
			}
		})
	}
}

// TestKeepAlive: an idle stream carries SSE comments.
func TestKeepAlive(t *testing.T) {
	slow := &echo.Executor{SlowChunks: 2, SlowInterval: 200 * time.Millisecond}
	w := serve(t, server.Config{Card: echoCard(), Executor: slow}, jsonrpcserver.Config{KeepAlive: 20 * time.Millisecond})
	for _, sw := range streamWires {
		t.Run(sw.name, func(t *testing.T) {
			s := w.on(t).stream(rpc("5", sw.send, `{"message":`+sw.msg("slow: ab")+`}`), sw.headers)
			evs := results(t, s.all(), "5")
			checkConsecutive(t, evs, 1)
			if len(evs) != 5 { // task, WORKING, 2 chunks, COMPLETED
				t.Errorf("%d events, want 5", len(evs))
			}
			if len(s.comments) == 0 {
				t.Fatal("no keep-alive comment on an idle stream")
			}
			for _, c := range s.comments {
				if strings.TrimSpace(strings.TrimPrefix(c, ":")) != "keep-alive" {
					t.Errorf("comment %q, want a keep-alive", c)
				}
			}
		})
	}
}

// TestLastEventIDReplay: SubscribeToTask with Last-Event-ID replays
// exactly the events after it, the same ids and payloads as the original
// stream, whether the task has ended or is still running.
func TestLastEventIDReplay(t *testing.T) {
	t.Run("completed task", func(t *testing.T) {
		w := serveEcho(t, jsonrpcserver.Config{})
		for _, sw := range streamWires {
			t.Run(sw.name, func(t *testing.T) {
				w := w.on(t)
				orig := results(t, w.stream(rpc(`"o"`, sw.send, `{"message":`+sw.msg("replay me")+`}`), sw.headers).all(), `"o"`)
				if len(orig) != 13 {
					t.Fatalf("%d events", len(orig))
				}
				id := sw.taskIDOf(t, json.RawMessage(orig[0].result))
				for _, last := range []int{0, 1, 2, 5, 12, 13} {
					s := w.stream(rpc(`"r"`, sw.subscribe, `{"id":"`+id+`"}`), with(sw.headers, "Last-Event-ID", strconv.Itoa(last)))
					got := results(t, s.all(), `"r"`)
					compareEvents(t, "Last-Event-ID "+strconv.Itoa(last), got, orig[last:])
				}
			})
		}
	})

	t.Run("running task", func(t *testing.T) {
		for _, sw := range streamWires {
			t.Run(sw.name, func(t *testing.T) {
				w, g := serveGated(t, 3)
				s := w.stream(rpc(`"o"`, sw.send, `{"message":`+sw.msg("go")+`}`), sw.headers)
				head := []sseEvent{s.mustNext(), s.mustNext()} // the task, WORKING
				id := sw.taskIDOf(t, json.RawMessage(results(t, head[:1], `"o"`)[0].result))
				r := w.stream(rpc(`"r"`, sw.subscribe, `{"id":"`+id+`"}`), with(sw.headers, "Last-Event-ID", "1"))
				replayed := r.mustNext() // event 2, replayed while the task waits
				g.open()
				orig := results(t, append(head, s.all()...), `"o"`)
				got := results(t, append([]sseEvent{replayed}, r.all()...), `"r"`)
				if len(orig) != 6 {
					t.Fatalf("original stream has %d events, want 6", len(orig))
				}
				compareEvents(t, "live", got, orig[1:])
			})
		}
	})

	t.Run("task completed after the client went away", func(t *testing.T) {
		for _, sw := range streamWires {
			t.Run(sw.name, func(t *testing.T) {
				w, g := serveGated(t, 3)
				s := w.stream(rpc(`"o"`, sw.send, `{"message":`+sw.msg("go")+`}`), sw.headers)
				head := results(t, []sseEvent{s.mustNext(), s.mustNext()}, `"o"`)
				id := sw.taskIDOf(t, json.RawMessage(head[0].result))
				s.close() // the client goes away mid-stream
				g.open()
				waitState(t, w, id, "TASK_STATE_COMPLETED")

				rest := results(t, w.stream(rpc(`"r"`, sw.subscribe, `{"id":"`+id+`"}`), with(sw.headers, "Last-Event-ID", head[1].id)).all(), `"r"`)
				all := results(t, w.stream(rpc(`"r"`, sw.subscribe, `{"id":"`+id+`"}`), with(sw.headers, "Last-Event-ID", "0")).all(), `"r"`)
				compareEvents(t, "the events the client saw", all[:2], head)
				compareEvents(t, "the events after them", rest, all[2:])
				if len(rest) != 4 {
					t.Fatalf("%d events after the cut, want 4", len(rest))
				}
				checkConsecutive(t, rest, 3)
				if got := sw.stateOfSU(t, json.RawMessage(rest[3].result)); got != sw.completed {
					t.Errorf("last state %s", got)
				}
			})
		}
	})
}

func compareEvents(t *testing.T, what string, got, want []streamed) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%s: event %d:\n got id %s %s\nwant id %s %s", what, i, got[i].id, got[i].result, want[i].id, want[i].result)
		}
	}
}

// TestClientDisconnectDoesNotStopTask: a client that reads two events of a
// slow stream and hangs up leaves the task running to completion.
func TestClientDisconnectDoesNotStopTask(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	for _, sw := range streamWires {
		t.Run(sw.name, func(t *testing.T) {
			w := w.on(t)
			s := w.stream(rpc("1", sw.send, `{"message":`+sw.msg("slow: abcde")+`}`), sw.headers)
			evs := results(t, []sseEvent{s.mustNext(), s.mustNext()}, "1")
			id := sw.taskIDOf(t, json.RawMessage(evs[0].result))
			s.close()
			task := waitState(t, w, id, "TASK_STATE_COMPLETED")
			var text strings.Builder // the chunks, appended
			for _, p := range arr(t, path(t, task, "artifacts.0.parts")) {
				text.WriteString(str(t, p, "text"))
			}
			if text.String() != "slow: abcde" {
				t.Errorf("artifact %q, want the whole text", text.String())
			}
		})
	}
}
