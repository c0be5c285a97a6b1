package httpbind

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	hzserver "github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/network/standard"
	"github.com/cloudwego/hertz/pkg/route"
)

// Timeouts bound slow clients.
type Timeouts struct {
	// Request bounds how long a connection's first request may take to
	// arrive whole.
	Request time.Duration
	// Read bounds each wait for more of a request after that.
	Read time.Duration
	// Idle closes a kept-alive connection that starts no new request.
	Idle time.Duration
}

// HertzOptions are the Hertz server options the bindings need: request
// bodies are streamed so that oversized ones get the binding's error, a
// client that disconnects cancels its request's context, ending its
// stream, and slow clients are bounded by t.
//
// Hertz runs on its standard transport (Go's net package), not netpoll.
// netpoll v0.7.5 hands file descriptors back to the kernel behind the Go
// runtime's back (its listener's Close closes the same descriptor twice,
// net_listener.go:89-98), so a server shutting down beside other sockets,
// as a draining replica's does beside its NATS and client connections,
// can reset a connection that is not its own: serve's drain tests failed
// 29 times in 60 runs under load on netpoll, once (a keep-alive race the
// test's proxy has) on the standard transport. The standard transport is
// also the faster one here: 1.07x netpoll's blocking sends and 1.4x its
// streams (docs/benchmarks.md, "Hertz's transport").
func HertzOptions(t Timeouts) []config.Option {
	return []config.Option{
		hzserver.WithTransport(standard.NewTransporter),
		hzserver.WithStreamBody(true),
		hzserver.WithSenseClientDisconnection(true),
		hzserver.WithDisablePrintRoute(true),
		// A multipart body is refused as not JSON, not parsed.
		hzserver.WithDisablePreParseMultipartForm(true),
		hzserver.WithReadTimeout(t.Read),
		hzserver.WithIdleTimeout(t.Idle),
		// Hertz bounds each wait for request bytes, not the whole
		// request: a deadline on the first request's reads stops a
		// client dribbling a byte per wait. Later requests on the
		// connection reset it (Hertz sets its timeouts per request).
		hzserver.WithOnConnect(func(ctx context.Context, conn network.Conn) context.Context {
			_ = conn.SetReadDeadline(time.Now().Add(t.Request))
			return ctx
		}),
	}
}

// Serve runs a Hertz server on ln, its routes added by register, until
// ctx is done, then shuts it down, giving in-flight requests up to grace to
// finish. The server has opts, then ln and grace, then extra. Errors name
// the binding by name.
func Serve(ctx context.Context, name string, ln net.Listener, grace time.Duration, opts, extra []config.Option, register func(route.IRoutes)) error {
	all := make([]config.Option, 0, len(opts)+2+len(extra))
	all = append(append(append(all, opts...), hzserver.WithListener(ln), hzserver.WithExitWaitTime(grace)), extra...)
	h := hzserver.New(all...)
	register(h)
	errc := make(chan error, 1)
	go func() { errc <- h.Run() }()
	select {
	case err := <-errc:
		return fmt.Errorf("%s: serve: %w", name, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace+time.Second)
	defer cancel()
	err := h.Shutdown(sctx)
	if rerr := <-errc; err == nil && rerr != nil && !errors.Is(rerr, net.ErrClosed) {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("%s: shutdown: %w", name, err)
	}
	return nil
}
