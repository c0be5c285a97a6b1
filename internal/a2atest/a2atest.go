// Package a2atest helps tests run real A2A servers: a Handler served by
// Hertz on 127.0.0.1 for the length of a test, and goroutine leak checks
// that know which goroutines Hertz keeps by design.
package a2atest

import (
	"context"
	"errors"
	"iter"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// Serve serves h over JSON-RPC on a fresh 127.0.0.1 port until the test
// ends, then closes the server and the handler. It returns the endpoint
// URL (which is also the agent's base URL).
func Serve(t testing.TB, h *server.Handler, opts jsonrpcserver.Options) string {
	t.Helper()
	ln, url := Listen(t)
	ServeOn(t, ln, h, opts)
	return url
}

// Listen opens a fresh 127.0.0.1 port and returns it with its URL, for a
// test that must put the URL in the agent card before it builds the
// handler that ServeOn then serves.
func Listen(t testing.TB) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String() + "/"
}

// ServeOn serves h on ln like Serve.
func ServeOn(t testing.TB, ln net.Listener, h *server.Handler, opts jsonrpcserver.Options) {
	t.Helper()
	srv, err := jsonrpcserver.New(h, opts)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 100*time.Millisecond) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("the server at %s did not stop within 15 s", ln.Addr())
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	waitReady(t, ln.Addr().String())
}

// waitReady waits until the listener accepts connections.
func waitReady(t testing.TB, addr string) {
	t.Helper()
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("server at %s did not start", addr)
}

// NewHandler returns a Handler for cfg or fails the test.
func NewHandler(t testing.TB, cfg server.Config) *server.Handler {
	t.Helper()
	h, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// LeakOptions ignore the goroutines that outlive servers and clients by
// design: netpoll's pollers, Hertz's shared timers, and what a Kitex client
// starts and never stops (a watcher per client on time.Tick, the shared
// RPC timeout pool, the gRPC transport's stream preallocation).
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/cloudwego/kitex/pkg/loadbalance/lbcache.(*BalancerFactory).watcher"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/kitex/client.(*timeoutPool).createTicker.func1"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/kitex/client.(*timeoutPool).createWorker.func1"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/kitex/pkg/utils.(*SharedTicker).Tick"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/grpc.preallocateForStream"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*defaultPoll).Wait"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*epoll).Wait"),
		goleak.IgnoreAnyFunction("github.com/bytedance/gopkg/util/gopool.(*worker).run.func1"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/hertz/pkg/common/timer.init.0.func1"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/netpoll.(*pollDesc).wait"),
		goleak.IgnoreAnyFunction("github.com/cloudwego/hertz/pkg/protocol.UpdateServerDate.func1"),
	}
}

// VerifyTestMain runs the package's tests and fails if goroutines they
// started are still running afterwards.
func VerifyTestMain(m *testing.M) {
	goleak.VerifyTestMain(m, LeakOptions()...)
}

// PauseAfterFirst passes on inner's events but, after the first, waits
// until release is closed (or ctx is done), so a test can act on a task
// that is certainly still running.
func PauseAfterFirst(ctx context.Context, inner iter.Seq2[a2a.Event, error], release <-chan struct{}) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		first := true
		for ev, err := range inner {
			if !yield(ev, err) {
				return
			}
			if first {
				first = false
				select {
				case <-release:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}
