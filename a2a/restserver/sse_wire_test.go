package restserver_test

import (
	"context"
	"encoding/json"
	"iter"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// gated works only when the test lets it: it reports WORKING, waits for
// the gate to open, then sends chunks artifact chunks and completes. A
// test holds a task running for as long as it needs without relying on
// timing.
type gated struct {
	chunks int

	mu     sync.Mutex
	gate   chan struct{}
	opened bool
}

func newGated(chunks int) *gated { return &gated{chunks: chunks, gate: make(chan struct{})} }

// open lets the tasks waiting, and those to come, go on.
func (g *gated) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.opened {
		close(g.gate)
		g.opened = true
	}
}

// rearm makes the tasks to come wait again.
func (g *gated) rearm() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.opened {
		g.gate, g.opened = make(chan struct{}), false
	}
}

func (g *gated) current() chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.gate
}

func (g *gated) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	gate := g.current()
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
			return
		}
		select {
		case <-gate:
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
	return serve(t, server.Config{Card: echoCard(), Executor: g}, restserver.Config{}), g
}

// checkSequence checks a whole stream: one StreamResponse per event on one
// data line, the Task first, SSE ids rising by one from first, and the
// final state last.
func checkSequence(t *testing.T, evs []sseEvent, first uint64, final string) string {
	t.Helper()
	if len(evs) == 0 {
		t.Fatal("no events")
	}
	var taskID string
	for i, ev := range evs {
		if ev.event != "" {
			t.Errorf("event %d has type %q", i, ev.event)
		}
		if strings.Contains(ev.data, "\n") {
			t.Errorf("event %d: data spans several lines", i)
		}
		if want := strconv.FormatUint(first+uint64(i), 10); ev.id != want {
			t.Errorf("event %d: SSE id %q, want %s", i, ev.id, want)
		}
		k := kind(t, ev.data)
		if i == 0 && first == 1 && k != "task" {
			t.Errorf("first event is %s, want task", k)
		}
		if i == 0 && k == "task" {
			taskID = str(t, json.RawMessage(ev.data), "task.id")
		}
	}
	last := json.RawMessage(evs[len(evs)-1].data)
	if got := str(t, last, kind(t, string(last))+".status.state"); got != final {
		t.Errorf("last event's state %s, want %s", got, final)
	}
	return taskID
}

// A streaming send is an event stream of StreamResponse objects whose SSE
// ids are the task's event sequence numbers; it ends with the task.
func TestStreamingSend(t *testing.T) {
	w := serveEcho(t, restserver.Config{})
	for _, prefix := range []string{"", "/acme"} {
		t.Run("tenant="+prefix, func(t *testing.T) {
			s := w.on(t).stream("POST", prefix+"/message:stream", `{"message":`+msg("hello")+`}`, nil)
			evs := s.all()
			id := checkSequence(t, evs, 1, "TASK_STATE_COMPLETED")
			if s.resp.Header.Get("Cache-Control") == "" {
				t.Error("no Cache-Control on the stream")
			}
			// The stream is what GetTask then shows.
			task := w.on(t).do("GET", prefix+"/tasks/"+id, "", nil).ok(t)
			if got := str(t, task, "status.state"); got != "TASK_STATE_COMPLETED" || !has(t, task, "artifacts") {
				t.Errorf("task after its stream: %s", task)
			}
		})
	}
}

// A subscription, by GET (the proto) or POST (the specification's text),
// starts with the task's snapshot under its sequence number and follows
// the task to its end; Last-Event-ID resumes after the event it names,
// with nothing lost or repeated.
func TestSubscribe(t *testing.T) {
	w, g := serveGated(t, 3)
	r := w.do("POST", "/message:send", `{"message":`+msg("go")+`,"configuration":{"returnImmediately":true}}`, nil).ok(t)
	id := str(t, r, "task.id")
	waitState(t, w, id, "TASK_STATE_WORKING")

	subs := map[string]*sseStream{}
	for _, verb := range []string{"GET", "POST"} {
		s := w.stream(verb, "/tasks/"+id+":subscribe", "", nil)
		first := s.mustNext()
		if kind(t, first.data) != "task" || first.id == "" {
			t.Fatalf("%s: first event %+v, want the task with its sequence number", verb, first)
		}
		subs[verb] = s
	}
	g.open()
	for verb, s := range subs {
		evs := s.all()
		if len(evs) != 4 { // 3 chunks and the final status
			t.Errorf("%s: %d events after the snapshot, want 4", verb, len(evs))
		}
		if len(evs) > 0 && !strings.Contains(evs[len(evs)-1].data, "TASK_STATE_COMPLETED") {
			t.Errorf("%s: last event %s", verb, evs[len(evs)-1].data)
		}
	}

	// The whole history from the first event, then from each point.
	all := w.stream("GET", "/tasks/"+id+":subscribe", "", hdr("Last-Event-ID", "0")).all()
	checkSequence(t, all, 1, "TASK_STATE_COMPLETED")
	for n := 1; n < len(all); n++ {
		got := w.stream("POST", "/tasks/"+id+":subscribe", "", hdr("Last-Event-ID", strconv.Itoa(n))).all()
		if len(got) != len(all)-n {
			t.Fatalf("Last-Event-ID %d: %d events, want %d", n, len(got), len(all)-n)
		}
		for i, ev := range got {
			if ev.id != all[n+i].id || ev.data != all[n+i].data {
				t.Errorf("Last-Event-ID %d, event %d: %s %s, want %s %s", n, i, ev.id, ev.data, all[n+i].id, all[n+i].data)
			}
		}
	}
}

// A client that goes away mid-stream ends its request: no goroutine of
// the binding's stays behind for it while the task goes on, and the task
// still completes.
func TestStreamClientGoesAway(t *testing.T) {
	w, g := serveGated(t, 2)
	for _, tc := range []struct{ name, verb, path string }{
		{"send", "POST", "/message:stream"},
		{"subscribe", "GET", "/tasks/$ID:subscribe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := w.on(t)
			id := str(t, w.do("POST", "/message:send", `{"message":`+msg("go")+`,"configuration":{"returnImmediately":true}}`, nil).ok(t), "task.id")
			body := ""
			if tc.verb == "POST" {
				body = `{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"go on"}]}}`
			}
			s := w.stream(tc.verb, strings.ReplaceAll(tc.path, "$ID", id), body, nil)
			s.mustNext()
			if n := streamsServed(); n == 0 {
				t.Fatal("no goroutine is serving the stream")
			}
			s.close() // the client goes away mid-stream
			deadline := time.Now().Add(requestTimeout)
			for streamsServed() > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d goroutines still serve a stream whose client went away", streamsServed())
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
	g.open()
	for _, task := range taskIDs(t, w.do("GET", "/tasks", "", nil).ok(t)) {
		waitState(t, w, task, "TASK_STATE_COMPLETED")
	}
}

// streamsServed counts the goroutines in the binding's serveStream.
func streamsServed() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), "restserver.(*Server).serveStream(")
		}
		buf = make([]byte, 2*len(buf))
	}
}
