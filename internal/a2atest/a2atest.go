// Package a2atest helps tests run real A2A servers: a Handler served on
// 127.0.0.1 for the length of a test, by Hertz or, for the packages that
// test both mountings, by net/http; and goroutine leak checks that know
// which goroutines Hertz keeps by design.
package a2atest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/cloudwego/hertz/pkg/common/config"
	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// Serve serves h over JSON-RPC on a fresh 127.0.0.1 port until the test
// ends, then closes the server and the handler. It returns the endpoint
// URL (which is also the agent's base URL).
func Serve(t testing.TB, h *server.Handler, opts jsonrpcserver.Config) string {
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
func ServeOn(t testing.TB, ln net.Listener, h *server.Handler, opts jsonrpcserver.Config) {
	t.Helper()
	srv, err := jsonrpcserver.New(h, opts)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the server stops: cleanups run last first
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	ServeBinding(t, ln, srv)
}

// Mounting is how a binding is put on the network: on Hertz (its Serve)
// or as an http.Handler of a net/http server.
type Mounting string

// The mountings of the HTTP bindings.
const (
	Hertz   Mounting = "Hertz"
	NetHTTP Mounting = "net/http"
)

// mounting is the Mounting of the tests running. VerifyTestMainMounted sets
// it between the runs of a package's tests, which only read it.
var mounting = Hertz

// Mount returns the Mounting the tests running serve their bindings with.
func Mount() Mounting { return mounting }

// HTTPBinding is an HTTP binding of A2A (jsonrpcserver.Server,
// restserver.Server): served on Hertz or mounted in a net/http server.
type HTTPBinding interface {
	Serve(ctx context.Context, ln net.Listener, grace time.Duration, extra ...config.Option) error
	Listening(addr net.Addr)
	http.Handler
}

// ServeBinding serves b on ln with the running tests' Mounting until the
// test ends.
func ServeBinding(t testing.TB, ln net.Listener, b HTTPBinding) {
	t.Helper()
	const grace = 100 * time.Millisecond
	done := make(chan error, 1)
	var stop func()
	switch mounting {
	case NetHTTP:
		b.Listening(ln.Addr())
		hs := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute}
		go func() {
			if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				done <- err
				return
			}
			done <- nil
		}()
		stop = func() {
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			defer cancel()
			if hs.Shutdown(ctx) != nil {
				hs.Close() // streams still open after the grace period
			}
		}
	default:
		ctx, cancel := context.WithCancel(context.Background())
		go func() { done <- b.Serve(ctx, ln, grace) }()
		stop = cancel
	}
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("the server at %s did not stop within 15 s", ln.Addr())
		}
	})
	waitReady(t, ln.Addr().String())
}

// VerifyTestMainMounted runs the package's tests once with each Mounting,
// then fails if goroutines they started are still running. A fuzzing run
// (-fuzz, and its workers) runs once: its target does not serve.
func VerifyTestMainMounted(m *testing.M) {
	flag.Parse()
	mountings := []Mounting{Hertz, NetHTTP}
	if f := flag.Lookup("test.fuzz"); f != nil && f.Value.String() != "" {
		mountings = mountings[:1]
	}
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		mountings = mountings[:1]
	}
	code := 0
	for _, mt := range mountings {
		mounting = mt
		fmt.Printf("a2atest: the bindings mounted on %s\n", mt)
		if c := m.Run(); c != 0 {
			code = c
		}
	}
	mounting = Hertz
	if code == 0 {
		if err := goleak.Find(LeakOptions()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
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
// design: netpoll's pollers, the poller Hertz's standard transport shares
// to see clients disconnect, Hertz's shared timers, and what a Kitex client
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
		goleak.IgnoreAnyFunction("github.com/cloudwego/gopkg/net/connstate.createPoller.func1"),
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
