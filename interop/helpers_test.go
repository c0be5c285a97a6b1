package interop

import (
	"context"
	"errors"
	"io"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/bench/peers/goecho"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// The agents' timings in these tests: "slow:" tasks send 5 chunks 20 ms
// apart, so that they end quickly when nothing holds them.
const (
	slowChunks   = 5
	slowInterval = 20 * time.Millisecond
)

// wait bounds every wait for something that is expected to happen at once
// (a webhook delivery, a task reaching a state). It is a bound against
// hanging, not a timing assertion: nothing here is expected to come close.
const wait = 20 * time.Second

// streamText is what streaming tests send: 20 runes, so each of the echo
// agent's 10 chunks carries 2 of them and none is empty.
const streamText = "abcdefghijklmnopqrst"

// testContext returns a context bounded by the test's deadline or a
// minute, whichever comes first (every test here takes a few seconds),
// canceled when the test ends.
func testContext(t *testing.T) context.Context {
	t.Helper()
	d := time.Minute
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - 5*time.Second; left > 0 && left < d {
			d = left
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// newHTTPClient returns an HTTP client with a transport of its own, whose
// idle connections are closed when the test ends (before the servers it
// talks to, which were started earlier and so are cleaned up later).
func newHTTPClient(t *testing.T) *http.Client {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	return hc
}

// --- our echo server ---

// holdPrefix starts a "slow:" message that the holding echo agent stops
// after its first event (WORKING) until the test releases its key or the
// task is canceled: heldText(key) is such a message.
const holdPrefix = echo.SlowPrefix + "hold:"

// heldText returns the text of a "slow:" task held until release(key).
func heldText(key string) string { return holdPrefix + key + " lorem ipsum dolor" }

// holdingEcho is the echo agent, except that held "slow:" tasks (see
// heldText) pause after their first event, so that tests needing a running
// task (cancel, subscribe) do not depend on timing.
type holdingEcho struct {
	*echo.Executor
	mu    sync.Mutex
	gates map[string]*gate
}

type gate struct {
	ch   chan struct{}
	once sync.Once
}

func (h *holdingEcho) gate(key string) *gate {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gates == nil {
		h.gates = make(map[string]*gate)
	}
	g, ok := h.gates[key]
	if !ok {
		g = &gate{ch: make(chan struct{})}
		h.gates[key] = g
	}
	return g
}

// release lets the task held under key go on.
func (h *holdingEcho) release(key string) {
	g := h.gate(key)
	g.once.Do(func() { close(g.ch) })
}

func (h *holdingEcho) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	inner := h.Executor.Execute(ctx, req)
	text := req.Message.Text()
	if req.Task != nil || !strings.HasPrefix(text, holdPrefix) {
		return inner
	}
	key, _, _ := strings.Cut(strings.TrimPrefix(text, holdPrefix), " ")
	g := h.gate(key)
	return a2atest.PauseAfterFirst(ctx, inner, g.ch)
}

// ourServer is the a2amesh echo agent served on 127.0.0.1: over JSON-RPC
// (1.0 and 0.3 on one endpoint) by Hertz, or over gRPC by Kitex.
type ourServer struct {
	// URL is the endpoint: for JSON-RPC the base URL, ending in "/"; for
	// gRPC the host:port a gRPC client dials.
	URL     string
	Handler *server.Handler
	agent   *holdingEcho
}

// release lets the held task of key go on.
func (s *ourServer) release(key string) { s.agent.release(key) }

type ourOptions struct {
	// card adjusts the echo agent's card, which already names the URL.
	card func(c *a2a.AgentCard)
	// extended, when set, returns the extended card for the server's URL;
	// the public card then declares one.
	extended func(url string) *a2a.AgentCard
	// loopbackPush lets push notifications reach webhooks on 127.0.0.1.
	loopbackPush bool
	// executor, when set, is the agent instead of the holding echo.
	executor server.AgentExecutor
}

// newOurHandler builds the Handler of the holding echo agent (or
// o.executor) under card, the echo agent's card for url.
func newOurHandler(t *testing.T, card *a2a.AgentCard, url string, o ourOptions) (*server.Handler, *holdingEcho) {
	t.Helper()
	agent := &holdingEcho{Executor: &echo.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval}}
	cfg := server.Config{Card: card, Executor: agent}
	if o.executor != nil {
		cfg.Executor = o.executor
	}
	if o.extended != nil {
		card.Capabilities.ExtendedAgentCard = true
		cfg.ExtendedCard = o.extended(url)
	}
	if o.card != nil {
		o.card(card)
	}
	if o.loopbackPush {
		cfg.PushSender = &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, BaseBackoff: 10 * time.Millisecond}
	}
	return a2atest.NewHandler(t, cfg), agent
}

// startOurServer serves the echo agent over JSON-RPC until the test ends.
// It listens before building the handler so that the card names the real
// URL.
func startOurServer(t *testing.T, o ourOptions) *ourServer {
	t.Helper()
	ln, url := a2atest.Listen(t)
	h, agent := newOurHandler(t, echo.Card(url), url, o)
	a2atest.ServeOn(t, ln, h, jsonrpcserver.Config{})
	return &ourServer{URL: url, Handler: h, agent: agent}
}

// startOurGRPCServer serves the echo agent over gRPC (a2a/grpcserver on
// Kitex) until the test ends, under a card whose one interface is the
// gRPC endpoint.
func startOurGRPCServer(t *testing.T, o ourOptions) *ourServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	card := echo.Card(addr)
	card.SupportedInterfaces = []a2a.AgentInterface{{URL: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version}}
	h, agent := newOurHandler(t, card, addr, o)
	srv, err := grpcserver.New(h, grpcserver.Config{Grace: 100 * time.Millisecond})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gRPC serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("the gRPC server at %s did not stop within 15 s", addr)
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	return &ourServer{URL: addr, Handler: h, agent: agent}
}

// extendedCardFor returns the extended card our servers serve: the public
// card under another name, with one more skill.
func extendedCardFor(url string) *a2a.AgentCard {
	c := echo.Card(url)
	c.Name = "echo-extended"
	c.Capabilities.ExtendedAgentCard = true
	c.Skills = append(c.Skills, a2a.AgentSkill{
		ID: "echo-secret", Name: "Secret echo", Description: "Only for authenticated clients.", Tags: []string{"echo"},
	})
	return c
}

// --- the a2a-go v2.4.0 peer ---

// startGoEcho serves bench/peers/goecho (the echo agent on a2a-go
// v2.4.0's server) on 127.0.0.1 until the test ends and returns its base
// URL: 1.0 JSON-RPC there, 0.3 at "v03/" under it.
func startGoEcho(t *testing.T, extended bool) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/"
	opts := goecho.Options{
		Executor:             goecho.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval},
		AllowPrivateWebhooks: true,
	}
	if extended {
		opts.ExtendedCard = goecho.Card(base, true)
		opts.ExtendedCard.Name = "goecho-extended"
	}
	srv.Config.Handler = goecho.NewHandler(base, opts)
	srv.Start()
	t.Cleanup(srv.Close)
	return base
}

// goPeer is the same echo agent on a2a-go v2.4.0 served by a2a-go's own
// gRPC server (a2agrpc/v1 on grpc-go) and REST server (a2asrv's HTTP+JSON
// handler), both on 127.0.0.1, over one a2a-go handler: a task made over
// one binding is there over the other.
type goPeer struct {
	// GRPCAddr is the gRPC endpoint, host:port.
	GRPCAddr string
	// RESTURL is the HTTP+JSON base URL, ending in "/"; the card is also
	// served there, at .well-known/agent-card.json.
	RESTURL string
	// Card names both interfaces, HTTP+JSON first.
	Card *a2ago.AgentCard
}

// startGoPeer serves the a2a-go echo peer over gRPC and REST until the
// test ends; with extended, it declares and serves an extended card.
func startGoPeer(t *testing.T, extended bool) *goPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rest := httptest.NewUnstartedServer(nil)
	p := &goPeer{GRPCAddr: ln.Addr().String(), RESTURL: "http://" + rest.Listener.Addr().String() + "/"}
	p.Card = goecho.Card(p.RESTURL, extended)
	p.Card.SupportedInterfaces = []*a2ago.AgentInterface{
		{URL: p.RESTURL, ProtocolBinding: a2ago.TransportProtocolHTTPJSON, ProtocolVersion: a2ago.Version},
		{URL: p.GRPCAddr, ProtocolBinding: a2ago.TransportProtocolGRPC, ProtocolVersion: a2ago.Version},
	}
	opts := goecho.Options{
		Executor:             goecho.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval},
		AllowPrivateWebhooks: true,
	}
	if extended {
		ext := *p.Card
		ext.Name = "goecho-extended"
		opts.ExtendedCard = &ext
	}
	handler := goecho.NewRequestHandler(p.Card, opts)

	gs := grpc.NewServer()
	a2agrpc.NewHandler(handler).RegisterWith(gs)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	t.Cleanup(func() {
		gs.Stop() // ends open streams too, where GracefulStop would wait for them
		if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("a2a-go gRPC server: %v", err)
		}
	})

	mux := http.NewServeMux()
	mux.Handle("/", a2asrv.NewRESTHandler(handler))
	mux.Handle("/.well-known/agent-card.json", a2asrv.NewStaticAgentCardHandler(p.Card))
	rest.Config.Handler = mux
	rest.Start()
	t.Cleanup(rest.Close)
	return p
}

// --- webhooks ---

// delivery is one push notification a webhook received.
type delivery struct {
	Header http.Header
	Body   []byte
}

// webhook records the push notifications POSTed to it.
type webhook struct {
	URL string
	got chan delivery
}

// startWebhook serves a webhook on 127.0.0.1 until the test ends.
func startWebhook(t *testing.T) *webhook {
	t.Helper()
	w := &webhook{got: make(chan delivery, 256)}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		select {
		case w.got <- delivery{Header: r.Header.Clone(), Body: body}:
		default: // the test has seen enough
		}
		rw.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	w.URL = srv.URL + "/hook"
	return w
}

// await returns the first delivery that match accepts, failing the test if
// none arrives within the bound.
func (w *webhook) await(t *testing.T, what string, match func(d delivery) bool) delivery {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var seen []string
	for {
		select {
		case d := <-w.got:
			if match(d) {
				return d
			}
			seen = append(seen, string(d.Body))
		case <-timer.C:
			t.Fatalf("no push notification %s arrived within %s; got %d others: %s", what, wait, len(seen), strings.Join(seen, "\n"))
			return delivery{}
		}
	}
}

// pause waits a little before a poll is repeated, or until ctx is done.
func pause(ctx context.Context) {
	t := time.NewTimer(5 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// retry runs attempt up to n times while it reports that the race it
// depends on was lost (the task finished before the test could act on it),
// and fails the test if every attempt lost. It is for peers whose tasks
// cannot be held: a2a-go's "slow:" tasks run 5 × 20 ms whatever the test
// does.
func retry(t *testing.T, n int, what string, attempt func() (lost bool)) {
	t.Helper()
	for range n {
		if !attempt() {
			return
		}
	}
	t.Fatalf("%s: the task finished before the test could act on it in all %d attempts", what, n)
}
