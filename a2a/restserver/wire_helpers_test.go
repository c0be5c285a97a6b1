package restserver_test

// Helpers of the wire-level tests: a real server per configuration, raw
// HTTP requests with hand-written JSON bodies and a strict SSE reader.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// requestTimeout bounds every request of these tests, so that a server
// that hangs fails the test instead of the whole run.
const requestTimeout = 10 * time.Second

var quiet = slog.New(slog.DiscardHandler)

// wire is a running server and an HTTP client of its own.
type wire struct {
	t    *testing.T
	base string // the base URL, without a trailing slash
	h    *server.Handler
	hc   *http.Client
}

// serve starts a real REST server for cfg (Logger defaults to a silent
// one) and returns a client for it; both are closed when the test ends.
func serve(t *testing.T, cfg server.Config, rcfg restserver.Config) *wire {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if rcfg.Logger == nil {
		rcfg.Logger = quiet
	}
	h := a2atest.NewHandler(t, cfg)
	srv, err := restserver.New(h, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	return run(t, listen(t), h, srv)
}

// listen opens a fresh 127.0.0.1 port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveBoth serves JSON-RPC at "/" and REST on one port over one Handler,
// with a card that lists both at the server's URL, its only interfaces.
func serveBoth(t *testing.T, cfg server.Config) *wire {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	ln := listen(t)
	url := "http://" + ln.Addr().String() + "/"
	cfg.Card.SupportedInterfaces = []a2a.AgentInterface{
		{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
		{URL: url, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version},
	}
	h := a2atest.NewHandler(t, cfg)
	rpc, err := jsonrpcserver.New(h, jsonrpcserver.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := restserver.New(h, restserver.Config{JSONRPC: rpc, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return run(t, ln, h, srv)
}

// run serves srv on ln, mounted as the tests running mount their
// bindings, until the test ends; then it closes h.
func run(t *testing.T, ln net.Listener, h *server.Handler, srv *restserver.Server) *wire {
	t.Helper()
	t.Cleanup(func() { // after the server stops: cleanups run last first
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	a2atest.ServeBinding(t, ln, srv)
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	return &wire{t: t, base: "http://" + ln.Addr().String(), h: h, hc: hc}
}

// on returns w reporting to t, for use in a subtest.
func (w *wire) on(t *testing.T) *wire {
	c := *w
	c.t = t
	return &c
}

// echoCard returns the echo agent's card, to be modified by a test.
func echoCard() *a2a.AgentCard { return echo.Card("http://placeholder/") }

// fastEcho is the echo agent with short timings: "slow:" takes 5 chunks
// 20 ms apart.
func fastEcho() *echo.Executor {
	return &echo.Executor{SlowChunks: 5, SlowInterval: 20 * time.Millisecond}
}

func serveEcho(t *testing.T, rcfg restserver.Config) *wire {
	return serve(t, server.Config{Card: echoCard(), Executor: fastEcho()}, rcfg)
}

// reply is a complete HTTP response.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// hdr builds a header map from key, value pairs.
func hdr(kv ...string) map[string]string {
	m := make(map[string]string, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func (w *wire) newRequest(ctx context.Context, verb, path, body string, headers map[string]string) *http.Request {
	w.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, verb, w.base+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

// do sends a request and reads the whole response. A header whose value
// is "" is left out.
func (w *wire) do(verb, path, body string, headers map[string]string) reply {
	w.t.Helper()
	return w.doWith(verb, path, body, headers, func(*http.Request) {})
}

// doWith is do with the request changed by edit before it is sent.
func (w *wire) doWith(verb, path, body string, headers map[string]string, edit func(*http.Request)) reply {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req := w.newRequest(ctx, verb, path, body, headers)
	edit(req)
	resp, err := w.hc.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", verb, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		w.t.Fatalf("%s %s: read body: %v", verb, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// ok checks a successful JSON answer and returns its body.
func (r reply) ok(t *testing.T) json.RawMessage {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	checkContentType(t, r.header, "application/json")
	return r.body
}

func checkContentType(t *testing.T, h http.Header, want string) {
	t.Helper()
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != want {
		t.Fatalf("Content-Type %q, want %s", h.Get("Content-Type"), want)
	}
}

// msg is a 1.0 user message.
func msg(text string) string {
	return `{"messageId":"m-` + text + `","role":"ROLE_USER","parts":[{"text":` + quote(text) + `}]}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// obj decodes a raw JSON object into its raw members.
func obj(t *testing.T, raw json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %s", err, raw)
	}
	return m
}

// path walks raw JSON by object keys and array indexes ("task.history.0.role").
func path(t *testing.T, raw json.RawMessage, p string) json.RawMessage {
	t.Helper()
	cur := raw
	for _, key := range strings.Split(p, ".") {
		if key == "" {
			continue
		}
		var arr []json.RawMessage
		if i, ok := index(key); ok && json.Unmarshal(cur, &arr) == nil {
			if i >= len(arr) {
				t.Fatalf("%s: no element %d in %s", p, i, cur)
			}
			cur = arr[i]
			continue
		}
		v, ok := obj(t, cur)[key]
		if !ok {
			t.Fatalf("%s: no member %q in %s", p, key, cur)
		}
		cur = v
	}
	return cur
}

func index(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// str returns the JSON string at p.
func str(t *testing.T, raw json.RawMessage, p string) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(path(t, raw, p), &s); err != nil {
		t.Fatalf("%s: not a string: %s", p, path(t, raw, p))
	}
	return s
}

func has(t *testing.T, raw json.RawMessage, key string) bool {
	t.Helper()
	_, ok := obj(t, raw)[key]
	return ok
}

// taskIDs returns the ids of a ListTasksResponse's tasks.
func taskIDs(t *testing.T, b json.RawMessage) []string {
	t.Helper()
	var page struct{ Tasks []struct{ ID string } }
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatalf("not a ListTasksResponse: %v: %s", err, b)
	}
	ids := make([]string, len(page.Tasks))
	for i, tk := range page.Tasks {
		ids[i] = tk.ID
	}
	return ids
}

// send sends a blocking message and returns the SendMessageResponse.
func (w *wire) send(text string) json.RawMessage {
	w.t.Helper()
	return w.do("POST", "/message:send", `{"message":`+msg(text)+`}`, nil).ok(w.t)
}

// statusBody is a google.rpc.Status answer.
type statusBody struct {
	Error struct {
		Code    int              `json:"code"`
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

// checkStatus checks an error answer: the HTTP status, a JSON
// Content-Type, and a google.rpc.Status body with the same code, the
// status name, a message, and an ErrorInfo with the reason (none when
// reason is "").
func checkStatus(t *testing.T, r reply, code int, status, reason string) statusBody {
	t.Helper()
	if r.status != code {
		t.Errorf("HTTP status %d, want %d: %s", r.status, code, r.body)
	}
	checkContentType(t, r.header, "application/json")
	return checkStatusJSON(t, r.body, code, status, reason)
}

func checkStatusJSON(t *testing.T, body []byte, code int, status, reason string) statusBody {
	t.Helper()
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || len(top) != 1 || top["error"] == nil {
		t.Fatalf("body is not a google.rpc.Status object with error alone: %s", body)
	}
	var sb statusBody
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sb); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if sb.Error.Code != code || sb.Error.Status != status {
		t.Errorf("error.code %d, error.status %q, want %d %q", sb.Error.Code, sb.Error.Status, code, status)
	}
	if sb.Error.Message == "" {
		t.Error("error.message is empty")
	}
	var got string
	for _, d := range sb.Error.Details {
		if d["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" {
			if got != "" {
				t.Errorf("two ErrorInfo details: %s", body)
			}
			got, _ = d["reason"].(string)
			if d["domain"] != "a2a-protocol.org" {
				t.Errorf("ErrorInfo domain %v", d["domain"])
			}
		}
	}
	if got != reason {
		t.Errorf("ErrorInfo reason %q, want %q: %s", got, reason, body)
	}
	return sb
}

// sseEvent is one event of a stream as it was written.
type sseEvent struct {
	id    string // the value of the "id: " line; "" if there was none
	hasID bool
	event string // the "event: " line's value
	data  string // the "data: " lines joined by "\n"
}

// sseStream reads an event stream strictly: every field line must be
// "id: ...", "event: ..." or "data: ...", comments are counted.
type sseStream struct {
	t        *testing.T
	resp     *http.Response
	r        *bufio.Reader
	cancel   context.CancelFunc
	comments []string
}

// open sends a request and returns the response with its body open.
func (w *wire) open(verb, path, body string, headers map[string]string) (*http.Response, context.CancelFunc) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	req := w.newRequest(ctx, verb, path, body, headers)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := w.hc.Do(req)
	if err != nil {
		cancel()
		w.t.Fatalf("%s %s: %v", verb, path, err)
	}
	return resp, cancel
}

// stream sends a streaming request and checks the stream's headers.
func (w *wire) stream(verb, path, body string, headers map[string]string) *sseStream {
	w.t.Helper()
	resp, cancel := w.open(verb, path, body, headers)
	s := &sseStream{t: w.t, resp: resp, r: bufio.NewReader(resp.Body), cancel: cancel}
	w.t.Cleanup(s.close)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		w.t.Fatalf("stream: HTTP %d: %s", resp.StatusCode, b)
	}
	checkContentType(w.t, resp.Header, "text/event-stream")
	return s
}

func (s *sseStream) close() {
	s.resp.Body.Close()
	s.cancel()
}

// next returns the next event, or io.EOF at the end of the stream.
func (s *sseStream) next() (sseEvent, error) {
	s.t.Helper()
	var ev sseEvent
	var data []string
	started := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && !started {
				return ev, io.EOF
			}
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if !started {
				continue
			}
			ev.data = strings.Join(data, "\n")
			return ev, nil
		case strings.HasPrefix(line, ":"):
			s.comments = append(s.comments, line)
		case strings.HasPrefix(line, "id: "):
			started, ev.hasID, ev.id = true, true, strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			started, ev.event = true, strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			started = true
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			s.t.Fatalf("unexpected line in event stream: %q", line)
		}
	}
}

// mustNext returns the next event or fails.
func (s *sseStream) mustNext() sseEvent {
	s.t.Helper()
	ev, err := s.next()
	if err != nil {
		s.t.Fatalf("read event: %v", err)
	}
	return ev
}

// all reads events until the stream ends.
func (s *sseStream) all() []sseEvent {
	s.t.Helper()
	var out []sseEvent
	for {
		ev, err := s.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			s.t.Fatalf("read event %d: %v", len(out)+1, err)
		}
		out = append(out, ev)
	}
}

// kind returns the one member of a StreamResponse.
func kind(t *testing.T, data string) string {
	t.Helper()
	m := obj(t, json.RawMessage(data))
	if len(m) != 1 {
		t.Fatalf("stream response %s: want exactly one member", data)
	}
	for k := range m {
		return k
	}
	return ""
}

// waitState polls GET /tasks/{id} until the task is in state, for up to
// requestTimeout.
func waitState(t *testing.T, w *wire, id, state string) json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(requestTimeout)
	for {
		task := w.on(t).do("GET", "/tasks/"+id, "", nil).ok(t)
		got := str(t, task, "status.state")
		if got == state {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is still %s, want %s", id, got, state)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Test executors.

// panicky panics before producing any event.
type panicky struct{}

func (panicky) Execute(context.Context, *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(func(a2a.Event, error) bool) { panic("boom: secret internal detail") }
}

func (panicky) Cancel(context.Context, *a2a.Task) error { return nil }

// stranger's first event names another task.
type stranger struct{}

func (stranger) Execute(_ context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdate("someone-elses-task", req.ContextID, a2a.TaskStateWorking, nil), nil)
	}
}

func (stranger) Cancel(context.Context, *a2a.Task) error { return nil }
