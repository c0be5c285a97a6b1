package grpcclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/kitex/pkg/endpoint"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/rpcinfo"
	"github.com/cloudwego/kitex/pkg/streaming"
	kserver "github.com/cloudwego/kitex/server"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }

// call is a request as the server received it.
type call struct {
	Method string
	Tenant string
	MD     metadata.MD
}

// recorder records the calls a server receives.
type recorder struct {
	mu    sync.Mutex
	calls []call
}

func (r *recorder) add(ctx context.Context, req any) {
	c := call{Method: rpcinfo.GetRPCInfo(ctx).Invocation().MethodName()}
	c.MD, _ = metadata.FromIncomingContext(ctx)
	if a, ok := req.(interface{ GetFirstArgument() any }); ok {
		req = a.GetFirstArgument()
	}
	switch tr := req.(type) {
	case interface{ GetTenant() string }:
		c.Tenant = tr.GetTenant()
	case interface { // the server's direct reading of a send request
		Request() (*a2a.SendMessageRequest, error)
	}:
		if r, err := tr.Request(); err == nil {
			c.Tenant = r.Tenant
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

// of returns the recorded calls of a method.
func (r *recorder) of(method string) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (r *recorder) all() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]call(nil), r.calls...)
}

// options are the Kitex server options that record calls: unary ones as
// they come in, streaming ones when their request is read.
func (r *recorder) options() []kserver.Option {
	return []kserver.Option{
		kserver.WithCompatibleMiddlewareForUnary(),
		kserver.WithMiddleware(func(next endpoint.Endpoint) endpoint.Endpoint {
			return func(ctx context.Context, req, resp any) error {
				if _, isStream := req.(*streaming.Args); !isStream {
					r.add(ctx, req)
				}
				return next(ctx, req, resp)
			}
		}),
		// Kitex's streaming middlewares of today need its streamx
		// feature; the gRPC streams of the generated code are of the
		// earlier kind.
		kserver.WithRecvMiddleware(func(next endpoint.RecvEndpoint) endpoint.RecvEndpoint {
			return func(st streaming.Stream, msg any) error {
				err := next(st, msg)
				if err == nil {
					r.add(st.Context(), msg)
				}
				return err
			}
		}),
	}
}

// fixture is an echo agent served over gRPC on 127.0.0.1.
type fixture struct {
	addr string // the gRPC server's host:port
	h    *server.Handler
	rec  *recorder
}

// slowEcho is the echo executor of the tests: a "slow:" message takes
// slowChunks chunks, 20 ms apart.
const slowChunks = 8

func slowEcho() *echo.Executor {
	return &echo.Executor{SlowChunks: slowChunks, SlowInterval: 20 * time.Millisecond}
}

// grpcCard is an echo card whose one interface is gRPC at addr.
func grpcCard(addr, tenant string) *a2a.AgentCard {
	card := echo.Card("http://" + addr + "/")
	card.SupportedInterfaces = []a2a.AgentInterface{{URL: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version, Tenant: tenant}}
	return card
}

// serve runs a Handler for cfg (an echo agent unless cfg says otherwise)
// over gRPC on ln (a fresh port when nil) until the test ends, recording
// the calls it gets.
func serve(t testing.TB, ln net.Listener, cfg server.Config) *fixture {
	t.Helper()
	return serveGRPC(t, ln, cfg, true)
}

// serveGRPC is serve, recording calls or not.
func serveGRPC(t testing.TB, ln net.Listener, cfg server.Config, record bool) *fixture {
	t.Helper()
	if ln == nil {
		ln = listen(t)
	}
	if cfg.Card == nil {
		cfg.Card = grpcCard(ln.Addr().String(), "")
	}
	if cfg.Executor == nil {
		cfg.Executor = slowEcho()
	}
	f := &fixture{addr: ln.Addr().String(), h: a2atest.NewHandler(t, cfg), rec: &recorder{}}
	t.Cleanup(func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := f.h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	gcfg := grpcserver.Config{Grace: 100 * time.Millisecond}
	if record {
		gcfg.Options = f.rec.options()
	}
	serveHandler(t, ln, f.h, gcfg)
	return f
}

// serveHandler serves h over gRPC with cfg on ln until the test ends.
func serveHandler(t testing.TB, ln net.Listener, h *server.Handler, cfg grpcserver.Config) {
	t.Helper()
	srv, err := grpcserver.New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// dial returns a client of the gRPC interface at addr (tenant: the
// interface's), closed when the test ends.
func dial(t testing.TB, addr, tenant string, cfg client.Config) *client.Client {
	t.Helper()
	cfg.Bindings = []client.Binding{grpcclient.Binding(grpcclient.Config{})}
	c, err := client.NewFromCard(grpcCard(addr, tenant), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Binding() != a2a.BindingGRPC {
		t.Fatalf("the client speaks %s", c.Binding())
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func sendReq(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)}
}

// collect reads a stream to its end: its events and its error.
func collect(seq func(func(client.Event, error) bool)) ([]client.Event, error) {
	var evs []client.Event
	for ev, err := range seq {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// checkEcho checks the events of an echo task's whole stream: numbered
// from first one by one, the artifact chunks making up text, ending
// COMPLETED.
func checkEcho(t *testing.T, evs []client.Event, first int, text string) {
	t.Helper()
	if len(evs) < 3 {
		t.Fatalf("%d events, want the task, its updates and its completion", len(evs))
	}
	var got strings.Builder
	for i, ev := range evs {
		if want := strconv.Itoa(first + i); ev.ID != want {
			t.Errorf("event %d has id %q, want %s", i, ev.ID, want)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			for _, a := range e.Artifacts {
				got.WriteString(a.Text())
			}
		case *a2a.TaskArtifactUpdateEvent:
			got.WriteString(e.Artifact.Text())
		}
	}
	if got.String() != text {
		t.Errorf("the artifact is %q, want %q", got.String(), text)
	}
	if s, _ := a2a.StateOf(evs[len(evs)-1].Event); s != a2a.TaskStateCompleted {
		t.Errorf("the last event is %#v, want COMPLETED", evs[len(evs)-1].Event)
	}
}

// proxy forwards TCP connections to a server, and can cut or freeze them
// all.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	frozen bool // new connections are accepted and never forwarded
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{ln: listen(t), target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		p.ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		frozen := p.frozen
		p.mu.Unlock()
		if frozen {
			continue // held open, never answered, until cut
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go p.pipe(c, s)
		go p.pipe(s, c)
	}
}

// pipe copies until either side fails; a frozen proxy stops copying but
// keeps the connections open, like a stopped process's kernel.
func (p *proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		frozen := p.frozen
		p.mu.Unlock()
		if frozen {
			_, _ = io.Copy(io.Discard, src) // until cut
			return
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// cut closes every connection so far.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// freeze stops forwarding, on the connections so far and new ones.
func (p *proxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.frozen = true
}

// isCutOrTimeout reports whether err is a stream's failure to hear from
// its server: a cut or the client's timeout.
func isCutOrTimeout(err error) bool {
	return errors.Is(err, client.ErrStreamCut) || errors.Is(err, client.ErrTimeout)
}
