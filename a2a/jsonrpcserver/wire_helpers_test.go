package jsonrpcserver_test

// Helpers of the wire-level tests: a real server per configuration, raw
// HTTP requests with hand-written JSON bodies, a strict SSE reader and the
// test executors.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
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
	t   *testing.T
	url string // the JSON-RPC endpoint, ending in "/"
	hc  *http.Client
}

// serve starts a real server for cfg (Logger defaults to a silent one) and
// returns a client for it; both are closed when the test ends.
func serve(t *testing.T, cfg server.Config, opts jsonrpcserver.Config) *wire {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	h := a2atest.NewHandler(t, cfg)
	url := a2atest.Serve(t, h, opts)
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	return &wire{t: t, url: url, hc: hc}
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

func serveEcho(t *testing.T, opts jsonrpcserver.Config) *wire {
	return serve(t, server.Config{Card: echoCard(), Executor: fastEcho()}, opts)
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

// v10 is the header a 1.0 client sends.
var v10 = hdr("A2A-Version", "1.0")

func (w *wire) newRequest(ctx context.Context, verb, path string, body io.Reader, headers map[string]string) *http.Request {
	w.t.Helper()
	req, err := http.NewRequestWithContext(ctx, verb, strings.TrimSuffix(w.url, "/")+path, body)
	if err != nil {
		w.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// do sends a request and reads the whole response.
func (w *wire) do(verb, path string, body io.Reader, headers map[string]string) reply {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := w.hc.Do(w.newRequest(ctx, verb, path, body, headers))
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

// post sends a JSON-RPC body to the endpoint.
func (w *wire) post(body string, headers map[string]string) reply {
	w.t.Helper()
	return w.do(http.MethodPost, "/", strings.NewReader(body), headers)
}

// rpc builds a request body by hand: id and params are raw JSON ("" leaves
// the member out).
func rpc(id, method, params string) string {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0"`)
	if id != "" {
		b.WriteString(`,"id":` + id)
	}
	b.WriteString(`,"method":"` + method + `"`)
	if params != "" {
		b.WriteString(`,"params":` + params)
	}
	b.WriteString("}")
	return b.String()
}

// Messages in both wire forms.
func msg10(text string) string {
	return `{"messageId":"m-` + text + `","role":"ROLE_USER","parts":[{"text":` + quote(text) + `}]}`
}

func msg03(text string) string {
	return `{"kind":"message","messageId":"m-` + text + `","role":"user","parts":[{"kind":"text","text":` + quote(text) + `}]}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// envelope is a decoded JSON-RPC response, members kept raw.
type envelope struct {
	members map[string]json.RawMessage
	id      json.RawMessage
	result  json.RawMessage
	err     *rpcError
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func decodeEnvelope(t *testing.T, b []byte) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(b, &e.members); err != nil {
		t.Fatalf("response is not a JSON object: %v\n%s", err, b)
	}
	if string(e.members["jsonrpc"]) != `"2.0"` {
		t.Fatalf(`response "jsonrpc" is %s, want "2.0": %s`, e.members["jsonrpc"], b)
	}
	id, ok := e.members["id"]
	if !ok {
		t.Fatalf(`response has no "id" member: %s`, b)
	}
	e.id = id
	res, hasResult := e.members["result"]
	errRaw, hasError := e.members["error"]
	if hasResult == hasError {
		t.Fatalf("response must have exactly one of result and error: %s", b)
	}
	if hasResult {
		e.result = res
		return e
	}
	e.err = new(rpcError)
	if err := json.Unmarshal(errRaw, e.err); err != nil {
		t.Fatalf("bad error object: %v: %s", err, b)
	}
	return e
}

// result decodes a successful JSON response and returns its result.
func (r reply) result(t *testing.T) json.RawMessage {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d: %s", r.status, r.body)
	}
	checkContentType(t, r.header, "application/json")
	e := decodeEnvelope(t, r.body)
	if e.err != nil {
		t.Fatalf("error %d %q: %s", e.err.Code, e.err.Message, e.err.Data)
	}
	return e.result
}

func checkContentType(t *testing.T, h http.Header, want string) {
	t.Helper()
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || mt != want {
		t.Fatalf("Content-Type %q, want %s", h.Get("Content-Type"), want)
	}
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
		if i, ok := index(key); ok {
			var arr []json.RawMessage
			if err := json.Unmarshal(cur, &arr); err != nil || i >= len(arr) {
				t.Fatalf("%s: no element %d in %s", p, i, cur)
			}
			cur = arr[i]
			continue
		}
		m := obj(t, cur)
		v, ok := m[key]
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

// sseEvent is one event of a stream as it was written.
type sseEvent struct {
	id    string // the value of the "id: " line; "" if there was none
	hasID bool
	data  string // the "data: " lines joined by "\n"
}

// sseStream reads an event stream strictly: every field line must be
// "id: ..." or "data: ...", comments are counted.
type sseStream struct {
	t        *testing.T
	resp     *http.Response
	r        *bufio.Reader
	cancel   context.CancelFunc
	comments []string
}

// stream posts a streaming request and checks the stream's headers.
func (w *wire) stream(body string, headers map[string]string) *sseStream {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	req := w.newRequest(ctx, http.MethodPost, "/", strings.NewReader(body), headers)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := w.hc.Do(req)
	if err != nil {
		cancel()
		w.t.Fatalf("stream: %v", err)
	}
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

// taskID returns the id of the task in a 1.0 SendMessage result.
func taskID10(t *testing.T, result json.RawMessage) string {
	t.Helper()
	return str(t, result, "task.id")
}

// sendText10 sends a blocking 1.0 SendMessage and returns the result.
func (w *wire) sendText10(text string) json.RawMessage {
	w.t.Helper()
	return w.post(rpc(`"setup"`, "SendMessage", `{"message":`+msg10(text)+`}`), v10).result(w.t)
}

// getTask10 returns a task's 1.0 JSON.
func (w *wire) getTask10(id string) json.RawMessage {
	w.t.Helper()
	return w.post(rpc(`"get"`, "GetTask", `{"id":`+quote(id)+`}`), v10).result(w.t)
}

// compact returns raw JSON without insignificant space.
func compact(t *testing.T, raw []byte) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact: %v: %s", err, raw)
	}
	return b.String()
}

// waitState polls GetTask until the task is in state (a 1.0 state name),
// for up to requestTimeout.
func waitState(t *testing.T, w *wire, id, state string) json.RawMessage {
	t.Helper()
	deadline := time.Now().Add(requestTimeout)
	for {
		task := w.on(t).getTask10(id)
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
