package serve_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// bound bounds every wait in these tests.
const bound = 30 * time.Second

// probe GETs url's path and returns the status and body; status 0 when
// the request failed.
func probe(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// await probes url until its status is want, failing after bound; it
// returns the body.
func await(t *testing.T, url string, want int) string {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		code, body := probe(t, http.MethodGet, url)
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %q, want %d within %s", url, code, body, want, bound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The health endpoints answer on the A2A port, on their exact paths only:
// a tenant of their names still reaches the HTTP+JSON routes under it.
func TestHealthEndpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	base := strings.TrimSuffix(s.URL(), "/")
	tests := []struct {
		method, path string
		code         int
		body         string // a part of it
	}{
		{"GET", "/healthz", 200, "ok"},
		{"HEAD", "/healthz", 200, ""},
		{"GET", "/readyz", 200, "ready"},
		{"HEAD", "/readyz", 200, ""},
		// Under a tenant named so, the A2A routes as ever.
		{"GET", "/healthz/tasks", 200, `"tasks"`},
		{"GET", "/readyz/tasks/nope", 404, "TASK_NOT_FOUND"},
		// No A2A route is a single segment of these names anyway.
		{"POST", "/healthz", 404, "no A2A HTTP+JSON route"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			code, body := probe(t, tt.method, base+tt.path)
			if code != tt.code || !strings.Contains(body, tt.body) {
				t.Fatalf("%d %q, want %d with %q", code, body, tt.code, tt.body)
			}
		})
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// With the state on NATS, a server is ready while it reaches NATS, not
// while NATS is down, and ready again when NATS is back.
func TestReadyFollowsNATS(t *testing.T) {
	dir := t.TempDir()
	srv := startNATS(t, dir, -1, "")
	port := srv.Addr().(*net.TCPAddr).Port
	s, _, logs := start(t, serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL(), Heartbeat: time.Second}})
	readyz := s.URL() + "readyz"
	await(t, readyz, 200)
	srv.Shutdown()
	srv.WaitForShutdown()
	if body := await(t, readyz, 503); !strings.Contains(body, "NATS") {
		t.Fatalf("not ready saying %q, want it to name NATS\n%s", body, logs)
	}
	if code, _ := probe(t, "GET", s.URL()+"healthz"); code != 200 {
		t.Fatalf("healthz %d while NATS is down: the process is alive", code)
	}
	startNATS(t, dir, port, "")
	await(t, readyz, 200)
}

// drainAgent serves the echo agent with slow tasks of chunks × interval,
// returning the server, its Serve's result and a cancel that starts the
// drain (what SIGTERM does in a command).
func drainAgent(t *testing.T, cfg serve.Config, chunks int, interval time.Duration) (*serve.Server, <-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := serve.NewExecutor(ctx, &echo.Executor{SlowChunks: chunks, SlowInterval: interval}, echo.Card(""), cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	return s, done, cancel
}

// wantRefused checks a message refused by a draining server: a retryable
// internal error that says so.
func wantRefused(t *testing.T, err error) {
	t.Helper()
	e := a2a.AsError(err)
	if e == nil || e.Code != a2a.CodeInternal || e.RetryAfter <= 0 || !strings.Contains(e.Message, "shutting down") {
		t.Fatalf("send while draining: %v, want a retryable -32603 saying the server is shutting down", err)
	}
}

// Canceling Serve's context drains: /readyz turns 503 at once, a new
// message is refused with a retryable error on every JSON binding, the
// task running finishes and its stream sees every event, and Serve
// returns nil.
func TestDrain(t *testing.T) {
	const chunks = 10
	s, done, stop := drainAgent(t, serve.Config{DrainTimeout: bound}, chunks, 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	events := c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "slow: 0123456789")})
	var ids []string
	var last a2a.Event
	for ev, err := range events {
		if err != nil {
			t.Fatalf("the running task's stream: %v (after %v)", err, ids)
		}
		ids, last = append(ids, ev.ID), ev.Event
		if len(ids) == 2 { // the task is working: drain
			stop()
			await(t, s.URL()+"readyz", 503)
			for _, b := range []client.Binding{client.JSONRPC, client.HTTPJSON} {
				bc, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{b}})
				if err != nil {
					t.Fatal(err)
				}
				_, err = bc.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
				bc.Close()
				wantRefused(t, err)
			}
		}
	}
	if st, _ := a2a.StateOf(last); st != a2a.TaskStateCompleted {
		t.Fatalf("the stream ended with %v, want the task completed", last)
	}
	for i, id := range ids {
		if id != strconv.Itoa(i+1) {
			t.Fatalf("event ids %v, want 1..%d in order", ids, len(ids))
		}
	}
	if len(ids) != chunks+3 { // the task, working, the chunks, completed
		t.Fatalf("%d events, want %d", len(ids), chunks+3)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	case <-time.After(bound):
		t.Fatal("Serve did not return after the drain")
	}
}

// During the drain delay the server is not ready but still takes work.
func TestDrainDelay(t *testing.T) {
	s, done, stop := drainAgent(t, serve.Config{DrainDelay: time.Hour}, 1, time.Millisecond)
	stop()
	await(t, s.URL()+"readyz", 503)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")}); err != nil {
		t.Fatalf("a message within the drain delay: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v within an hour's drain delay", err)
	default:
	}
}

// A task that outlasts the drain timeout is canceled, saying why, and its
// stream gets the end.
func TestDrainTimeout(t *testing.T) {
	s, done, stop := drainAgent(t, serve.Config{DrainTimeout: time.Millisecond}, 1000, time.Hour)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	var last a2a.Event
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "slow: forever")}) {
		if err != nil {
			t.Fatal(err)
		}
		if last = ev.Event; ev.ID == "2" {
			stop()
		}
	}
	st, _ := a2a.StateOf(last)
	if u, ok := last.(*a2a.TaskStatusUpdateEvent); st != a2a.TaskStateCanceled || !ok || !strings.Contains(u.Status.Message.Text(), "shut down") {
		t.Fatalf("the stream ended with %#v, want the task canceled saying its server shut down", last)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Hold answers probes while a server is being made, and lets New have the
// listener when released.
func TestHold(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	release := serve.Hold(ln, func() string { return "waiting for weather" })
	tests := []struct {
		path string
		code int
		body string
	}{
		{"/healthz", 200, "ok"},
		{"/readyz", 503, "not ready: waiting for weather"},
		{"/.well-known/agent-card.json", 503, "waiting for weather"},
	}
	for _, tt := range tests {
		if code, body := probe(t, "GET", base+tt.path); code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("held: GET %s = %d %q, want %d with %q", tt.path, code, body, tt.code, tt.body)
		}
	}
	release()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{Listener: ln, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	if body := await(t, base+"/readyz", 200); body != "ready\n" {
		t.Fatalf("served after the hold: readyz %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// proxy stands for a Kubernetes Service: each connection goes to the first
// of the backends whose readiness URL answers 200.
type proxy struct {
	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	backends []backend
	routed   []string // the backend of each connection, in order
	// lagging sends every connection to the first backend, ready or not,
	// as an address whose endpoints lag behind readiness.
	lagging bool
}

// backend is a replica's port, and the URL of its readiness.
type backend struct{ addr, ready string }

// httpBackend is a replica's HTTP port, where its readiness is too.
func httpBackend(addr string) backend { return backend{addr, "http://" + addr + "/readyz"} }

func startProxy(t *testing.T, backends ...backend) *proxy {
	t.Helper()
	p := &proxy{ln: listen(t), backends: backends}
	p.wg.Add(1)
	go p.serve(t)
	t.Cleanup(func() { p.ln.Close(); p.wg.Wait() })
	return p
}

func (p *proxy) set(lagging bool, backends ...backend) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.backends, p.lagging = backends, lagging
}

func (p *proxy) connections() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.routed)
}

func (p *proxy) serve(t *testing.T) {
	defer p.wg.Done()
	var conns sync.WaitGroup
	defer conns.Wait()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer in.Close()
			p.mu.Lock()
			backends, lagging := p.backends, p.lagging
			p.mu.Unlock()
			var why []string
			defer func() {
				if why != nil {
					t.Logf("proxy: %v", why)
				}
			}()
			for _, b := range backends {
				if code, body := probe(t, "GET", b.ready); code != 200 && !lagging {
					why = append(why, fmt.Sprintf("%s not ready: %d %s", b.addr, code, body))
					continue
				}
				out, err := net.Dial("tcp", b.addr)
				if err != nil {
					why = append(why, err.Error())
					continue
				}
				defer out.Close()
				p.mu.Lock()
				p.routed = append(p.routed, b.addr)
				p.mu.Unlock()
				copied := make(chan struct{})
				var upErr error
				go func() {
					defer close(copied)
					_, upErr = io.Copy(out, in)
					out.Close()
				}()
				n, downErr := io.Copy(in, out)
				in.Close()
				<-copied
				why = append(why, fmt.Sprintf("%s: up %v down %d %v", b.addr, upErr, n, downErr))
				return
			}
		}()
	}
}

// Two replicas share their state on NATS behind one address. A client
// following a task from replica A (the task runs on B) while A drains has
// its stream ended by A and resumes it through the address, at B, and
// sees every event of the task exactly once; on every binding.
func TestDrainHandsStreamsOver(t *testing.T) {
	srv := startNATS(t, t.TempDir(), -1, "")
	for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
		t.Run(binding, func(t *testing.T) { handOver(t, srv.ClientURL(), binding) })
	}
}

func handOver(t *testing.T, natsURL, binding string) {
	lnA, lnB := listen(t), listen(t)
	a, b := httpBackend(lnA.Addr().String()), httpBackend(lnB.Addr().String())
	p := startProxy(t, b)
	public := "http://" + p.ln.Addr().String() + "/"
	cfg := func(ln net.Listener) serve.Config {
		return serve.Config{Listener: ln, PublicURL: public, State: serve.StateNATS, NATS: serve.NATS{URL: natsURL}}
	}
	cfgA, cfgB := cfg(lnA), cfg(lnB)
	// The stream's connections go through the proxy of its binding.
	streams, streamA, streamB := p, a.addr, b.addr
	var bindings []client.Binding
	switch binding {
	case a2a.BindingHTTPJSON:
		bindings = []client.Binding{client.HTTPJSON}
	case a2a.BindingGRPC:
		gA, gB := listen(t), listen(t)
		streamA, streamB = gA.Addr().String(), gB.Addr().String()
		streams = startProxy(t, backend{streamA, a.ready}, backend{streamB, b.ready})
		cfgA.GRPCListener, cfgB.GRPCListener = gA, gB
		cfgA.GRPCPublicAddr, cfgB.GRPCPublicAddr = streams.ln.Addr().String(), streams.ln.Addr().String()
		bindings = []client.Binding{grpcclient.Binding(grpcclient.Config{})}
	}
	const chunks = 20
	_, doneA, stopA := drainAgent(t, cfgA, chunks, 50*time.Millisecond)
	_, doneB, _ := drainAgent(t, cfgB, chunks, 50*time.Millisecond)
	// The proxies turn away what no ready replica takes.
	await(t, a.ready, 200)
	await(t, b.ready, 200)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	// The task runs on B.
	cb, err := client.New(ctx, public, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	req := &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "slow: "+strings.Repeat("x", chunks)),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}}
	res, err := cb.SendMessage(ctx, req)
	cb.CloseIdleConnections()
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	// A client follows it through the address, which sends it to A.
	p.set(false, a, b)
	c, err := client.New(ctx, public, client.Config{Bindings: bindings})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Binding() != binding {
		t.Fatalf("the client speaks %s, want %s", c.Binding(), binding)
	}
	seen := map[string]bool{}
	var ids []int
	var last a2a.Event
	drainedAt := -1 // how many connections the stream's proxy had made when A began to drain
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if err != nil {
			t.Fatalf("the stream: %v (after events %v)", err, ids)
		}
		if seen[ev.ID] {
			t.Fatalf("event %s twice (events %v)", ev.ID, ids)
		}
		seen[ev.ID] = true
		n, _ := strconv.Atoi(ev.ID)
		ids, last = append(ids, n), ev.Event
		if drainedAt < 0 {
			got := streams.connections()
			if drainedAt = len(got); got[len(got)-1] != streamA {
				t.Fatalf("the subscription went to %s, want replica A at %s", got[len(got)-1], streamA)
			}
			stopA()
		}
	}
	if st, _ := a2a.StateOf(last); st != a2a.TaskStateCompleted {
		t.Fatalf("the stream ended with %v, want the task completed", last)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Fatalf("event ids %v: not one after the other", ids)
		}
	}
	if after := streams.connections()[drainedAt:]; !slices.Contains(after, streamB) || slices.Contains(after, streamA) {
		t.Fatalf("after A began to drain the client connected to %v, want B (%s) only", after, streamB)
	}
	select {
	case err := <-doneA:
		if err != nil {
			t.Fatalf("replica A's Serve = %v", err)
		}
	case <-time.After(bound):
		t.Fatal("replica A did not stop")
	}
	select {
	case err := <-doneB:
		t.Fatalf("replica B stopped: %v", err)
	default:
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// A client whose stream a draining replica ended and whose resumption that
// replica refuses (the address still sends it there) waits as the refusal
// asks and resumes at another replica, missing nothing.
func TestResumptionRefusedWhileDraining(t *testing.T) {
	srv := startNATS(t, t.TempDir(), -1, "")
	lnA, lnB := listen(t), listen(t)
	a, b := httpBackend(lnA.Addr().String()), httpBackend(lnB.Addr().String())
	p := startProxy(t, b)
	public := "http://" + p.ln.Addr().String() + "/"
	cfg := func(ln net.Listener) serve.Config {
		return serve.Config{Listener: ln, PublicURL: public, State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL()}, DrainTimeout: bound}
	}
	const chunks = 20
	sA, doneA, stopA := drainAgent(t, cfg(lnA), chunks, 50*time.Millisecond)
	drainAgent(t, cfg(lnB), chunks, 50*time.Millisecond)
	// The proxy turns away what no ready replica takes: both must be
	// ready first (on a loaded machine they may not be at once).
	await(t, a.ready, 200)
	await(t, b.ready, 200)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	send := func(c *client.Client, text string) *a2a.Task {
		t.Helper()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text),
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
		if err != nil {
			t.Fatal(err)
		}
		return res.(*a2a.Task)
	}
	cb, err := client.New(ctx, public, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	task := send(cb, "slow: "+strings.Repeat("x", chunks)) // on B
	cb.CloseIdleConnections()
	p.set(true, a)
	ca, err := client.New(ctx, public, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	send(ca, "slow: keeps A draining") // on A
	ca.CloseIdleConnections()

	c, err := client.New(ctx, public, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	var ids []int
	var last a2a.Event
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if err != nil {
			t.Fatalf("the stream: %v (after events %v)", err, ids)
		}
		n, _ := strconv.Atoi(ev.ID)
		ids, last = append(ids, n), ev.Event
		if len(ids) != 2 {
			continue
		}
		// A drains (its own task keeps it at it) and ends the streams:
		// the resumption goes to A, which refuses it; then the address
		// catches up.
		stopA()
		await(t, a.ready, 503)
		before := len(p.connections())
		sA.Handler().EndStreams()
		go func() { // the consumer must return for the client to resume
			deadline := time.Now().Add(bound)
			for len(p.connections()) == before && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
			p.set(false, b)
		}()
	}
	if st, _ := a2a.StateOf(last); st != a2a.TaskStateCompleted {
		t.Fatalf("the stream ended with %v, want the task completed", last)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Fatalf("event ids %v: not one after the other", ids)
		}
	}
	if got := p.connections(); len(got) < 2 || got[len(got)-2] != a.addr || got[len(got)-1] != b.addr {
		t.Fatalf("connections %v: want a refused resumption at A, then B", got)
	}
	if err := <-doneA; err != nil {
		t.Fatal(err)
	}
}
