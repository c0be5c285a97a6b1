package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// versions are the protocol versions every method is tried on.
var versions = []string{a2a.Version, a2a.Version03}

// The echo agent's timings in these tests: "slow:" tasks send 5 chunks 30
// ms apart.
const (
	slowChunks   = 5
	slowInterval = 30 * time.Millisecond
)

// gatedEcho is the echo agent; when hold is set, a "slow:" task stops
// after its first event until the test opens gate (or the run is
// canceled), so tests that need a running task do not depend on timing.
type gatedEcho struct {
	*echo.Executor
	hold bool
	gate chan struct{}
}

func (g *gatedEcho) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	inner := g.Executor.Execute(ctx, req)
	if !g.hold || req.Task != nil || !strings.HasPrefix(req.Message.Text(), echo.SlowPrefix) {
		return inner
	}
	return a2atest.PauseAfterFirst(ctx, inner, g.gate)
}

// echoServer is the echo agent served over JSON-RPC on 127.0.0.1, with a
// card naming its real URL.
type echoServer struct {
	URL     string // the endpoint and base URL, ending in "/"
	Handler *server.Handler
	gate    chan struct{}
	once    sync.Once
}

// release lets held "slow:" tasks go on.
func (s *echoServer) release() { s.once.Do(func() { close(s.gate) }) }

type serverOpts struct {
	// config adjusts the handler's configuration, whose card already
	// names the served URL.
	config func(cfg *server.Config)
	rpc    jsonrpcserver.Config
	agent  *echo.Executor
	hold   bool // hold "slow:" tasks after their first event until release
}

// startEcho serves the echo agent until the test ends. It listens first,
// so that the card can name the URL it is served at.
func startEcho(t *testing.T, o serverOpts) *echoServer {
	t.Helper()
	ln, url := a2atest.Listen(t)
	s := &echoServer{URL: url, gate: make(chan struct{})}
	agent := o.agent
	if agent == nil {
		agent = &echo.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval}
	}
	cfg := server.Config{Card: echo.Card(s.URL), Executor: &gatedEcho{Executor: agent, hold: o.hold, gate: s.gate}}
	if o.config != nil {
		o.config(&cfg)
	}
	s.Handler = a2atest.NewHandler(t, cfg)
	a2atest.ServeOn(t, ln, s.Handler, o.rpc)
	return s
}

// allowLoopbackPush lets the handler deliver push notifications to
// webhooks on 127.0.0.1.
func allowLoopbackPush(cfg *server.Config) {
	cfg.PushSender = &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, BaseBackoff: 10 * time.Millisecond}
}

// newHTTPClient returns an HTTP client of the test's own, so that the
// test can close its connections.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// dial resolves the server's card and returns a client speaking version.
func dial(t *testing.T, s *echoServer, version string) *client.Client {
	t.Helper()
	return dialConfig(t, s, version, client.Config{})
}

// dialConfig is dial with cfg, whose ProtocolVersion it sets to version
// and whose HTTPClient, when nil, to one of the test's own.
func dialConfig(t *testing.T, s *echoServer, version string, cfg client.Config) *client.Client {
	t.Helper()
	cfg.ProtocolVersion = version
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = newHTTPClient()
	}
	c, err := client.New(context.Background(), s.URL, cfg)
	if err != nil {
		t.Fatalf("New(%s, %s): %v", s.URL, version, err)
	}
	t.Cleanup(c.CloseIdleConnections)
	if got := c.ProtocolVersion(); got != version {
		t.Fatalf("ProtocolVersion() = %q, want %q", got, version)
	}
	return c
}

func textMessage(text string) *a2a.Message { return a2a.NewTextMessage(a2a.RoleUser, text) }

func sendReq(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: textMessage(text)}
}

// sendTask sends a message and returns the task it made.
func sendTask(t *testing.T, c *client.Client, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	ev, err := c.SendMessage(context.Background(), req)
	if err != nil {
		t.Fatalf("SendMessage(%q): %v", req.Message.Text(), err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage(%q) = %T, want *a2a.Task", req.Message.Text(), ev)
	}
	return task
}

// startHeld starts a "slow:" task on a server that holds it, without
// waiting for it: the task is running until the server's release.
func startHeld(t *testing.T, c *client.Client, text string) *a2a.Task {
	t.Helper()
	task := sendTask(t, c, &a2a.SendMessageRequest{
		Message:       textMessage(echo.SlowPrefix + text),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if task.Status.State.Terminal() {
		t.Fatalf("held task is already %s", task.Status.State)
	}
	return task
}

// completedTask runs a plain echo task to completion.
func completedTask(t *testing.T, c *client.Client, text string) *a2a.Task {
	t.Helper()
	task := sendTask(t, c, sendReq(text))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %q is %s, want COMPLETED", text, task.Status.State)
	}
	return task
}

// waitState polls the task until it is in state want, within a bound.
func waitState(t *testing.T, c *client.Client, id string, want a2a.TaskState) *a2a.Task {
	t.Helper()
	var last a2a.TaskState
	for range 500 {
		task, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("GetTask(%s): %v", id, err)
		}
		if last = task.Status.State; last == want {
			return task
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("task %s stayed %s, want %s", id, last, want)
	return nil
}

// collect drains a stream: its events and the error that ended it.
func collect(seq iter.Seq2[client.Event, error]) (evs []client.Event, err error) {
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// ids returns the events' SSE ids.
func ids(evs []client.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

// checkConsecutive checks that the events are numbered from, from+1, …:
// none lost, none repeated.
func checkConsecutive(t *testing.T, evs []client.Event, from int) {
	t.Helper()
	for i, ev := range evs {
		if want := strconv.Itoa(from + i); ev.ID != want {
			t.Fatalf("event %d has id %q, want %q (ids %v)", i, ev.ID, want, ids(evs))
		}
	}
}

// echoText concatenates the text the events deliver in the echo
// artifact: an artifact update that does not append starts it again.
func echoText(evs []client.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		switch e := ev.Event.(type) {
		case *a2a.Task:
			for i := range e.Artifacts {
				if e.Artifacts[i].ArtifactID == echo.ArtifactID {
					b.Reset()
					b.WriteString(e.Artifacts[i].Text())
				}
			}
		case *a2a.TaskArtifactUpdateEvent:
			if e.Artifact.ArtifactID != echo.ArtifactID {
				continue
			}
			if !e.Append {
				b.Reset()
			}
			b.WriteString(e.Artifact.Text())
		}
	}
	return b.String()
}

// finalState returns the state the last event sets.
func finalState(evs []client.Event) a2a.TaskState {
	if len(evs) == 0 {
		return ""
	}
	s, _ := a2a.StateOf(evs[len(evs)-1].Event)
	return s
}

func artifactText(task *a2a.Task) string {
	for i := range task.Artifacts {
		if task.Artifacts[i].ArtifactID == echo.ArtifactID {
			return task.Artifacts[i].Text()
		}
	}
	return ""
}

// recorded is one request a recorder saw.
type recorded struct {
	Method string // the JSON-RPC method; "" for GETs
	Path   string
	Header http.Header
	Body   []byte
}

// recorder is an http.RoundTripper that records requests and can cut
// streaming responses: the body of each cut stream fails with cutErr after
// cutAfter complete SSE events.
type recorder struct {
	base *http.Transport

	cutAfter   int   // events delivered before the cut
	cutLater   int   // events before the cut of streams after the first; -1: cutAfter
	cutStreams int   // how many streams to cut, first ones first; -1 for all
	cutErr     error // what the cut body's Read returns
	rewrite    func(*http.Request)

	mu   sync.Mutex
	reqs []recorded
	cuts int
}

var errCut = errors.New("connection cut by the test")

func newRecorder() *recorder {
	return &recorder{base: http.DefaultTransport.(*http.Transport).Clone(), cutErr: errCut, cutLater: -1}
}

// client returns an HTTP client that goes through the recorder.
func (r *recorder) client() *http.Client { return &http.Client{Transport: r} }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := recorded{Path: req.URL.Path, Header: req.Header.Clone()}
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			var env struct {
				Method string `json:"method"`
			}
			b, _ := io.ReadAll(body)
			body.Close()
			rec.Body = b
			if json.Unmarshal(b, &env) == nil {
				rec.Method = env.Method
			}
		}
	}
	if r.rewrite != nil {
		req = req.Clone(req.Context())
		r.rewrite(req)
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, rec)
	r.mu.Unlock()
	resp, err := r.base.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	r.mu.Lock()
	cut := r.cutStreams < 0 || r.cuts < r.cutStreams
	left := r.cutAfter
	if r.cuts > 0 && r.cutLater >= 0 {
		left = r.cutLater
	}
	if cut {
		r.cuts++
	}
	r.mu.Unlock()
	if cut {
		resp.Body = &cutBody{ReadCloser: resp.Body, left: left, err: r.cutErr}
	}
	return resp, nil
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport.
func (r *recorder) CloseIdleConnections() { r.base.CloseIdleConnections() }

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// streams returns the recorded streaming requests (those accepting SSE).
func (r *recorder) streams() []recorded {
	var out []recorded
	for _, q := range r.requests() {
		if q.Header.Get("Accept") == "text/event-stream" {
			out = append(out, q)
		}
	}
	return out
}

// cutBody passes a response body through until left SSE events (blank-line
// boundaries) have gone by, then fails with err.
type cutBody struct {
	io.ReadCloser
	left int
	err  error
	prev byte
	cut  bool
}

func (b *cutBody) Read(p []byte) (int, error) {
	if b.cut || b.left <= 0 {
		b.cut = true
		return 0, b.err
	}
	n, err := b.ReadCloser.Read(p)
	for i := range n {
		c := p[i]
		if c == '\n' && b.prev == '\n' {
			c = 0 // a further newline ends no other event
			if b.left--; b.left == 0 {
				b.cut = true
				return i + 1, nil
			}
		}
		b.prev = c
	}
	return n, err
}

// fromURL is client.NewFromURL for a test, which fails on its error.
func fromURL(t testing.TB, url string, cfg client.Config) *client.Client {
	t.Helper()
	c, err := client.NewFromURL(url, cfg)
	if err != nil {
		t.Fatalf("NewFromURL(%s): %v", url, err)
	}
	return c
}
