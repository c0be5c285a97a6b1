package grpcserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/cloudwego/kitex/pkg/remote"
	kgrpc "github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/grpc"
	"github.com/cloudwego/kitex/pkg/utils"
)

// handshakeTimeout bounds a client's TLS handshake.
const handshakeTimeout = 10 * time.Second

// transport is the Kitex transport server the Server runs on: Go's net
// package, with TLS when Config.TLS is set, rather than Kitex's netpoll.
// netpoll v0.7.5 hands file descriptors back to the kernel behind the Go
// runtime's back (its listener's Close closes one twice), which resets
// other sockets of the process when a server stops beside them
// (docs/benchmarks.md, "Hertz's transport"); and it serves no TLS, as it
// reads the socket directly. Kitex's own Go-net transport
// (pkg/remote/trans/gonet, v0.16.1) does not run gRPC: with the default
// handler the protocol detection needs a netpoll connection and the
// fallback handler panics on the Go-net one, and with the gRPC handler
// alone its connection loop reads the call's RPCInfo, which the gRPC
// handler never sets (a nil dereference at trans_server.go:187 after the
// client preface). This one hands each connection (over TLS once its
// handshake is done) to the gRPC handler, with the verified client
// certificates in the connection's context, which every call's context
// derives from (peerCertificates).
type transport struct {
	cfg  *tls.Config // nil: plain HTTP/2
	h    remote.ServerTransHandler
	wait time.Duration // Kitex's exit wait time: Shutdown's bound
	max  uint32        // of a request message (limitConn)
	log  *slog.Logger

	stop  context.Context // done when Shutdown begins; ends handshakes
	abort context.CancelFunc
	conns sync.WaitGroup

	mu    sync.Mutex
	ln    net.Listener
	open  map[net.Conn]struct{}
	count utils.AtomicInt
}

// transportFactory makes the transport of a Kitex server.
type transportFactory struct {
	cfg *tls.Config
	max uint32 // of a request message
	log *slog.Logger
}

// NewTransServer implements remote.TransServerFactory.
func (f transportFactory) NewTransServer(opt *remote.ServerOption, h remote.ServerTransHandler) remote.TransServer {
	stop, abort := context.WithCancel(context.Background())
	t := &transport{h: h, max: f.max, log: f.log, wait: opt.ExitWaitTime, stop: stop, abort: abort, open: make(map[net.Conn]struct{})}
	if f.cfg != nil {
		// HTTP/2 over TLS is negotiated by ALPN: a gRPC client offers
		// only "h2", and a server that lists other protocols but not it
		// fails the handshake.
		t.cfg = kgrpc.TLSConfig(f.cfg)
	}
	return t
}

// CreateListener implements remote.TransServer; the Server always passes
// its listener.
func (t *transport) CreateListener(addr net.Addr) (net.Listener, error) {
	return net.Listen(addr.Network(), addr.String())
}

// BootstrapServer implements remote.TransServer: it accepts connections
// on ln until Shutdown closes it.
func (t *transport) BootstrapServer(ln net.Listener) error {
	t.mu.Lock()
	if t.stop.Err() != nil { // Shutdown came first
		t.mu.Unlock()
		ln.Close()
		return nil
	}
	t.ln = ln
	t.mu.Unlock()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if t.stop.Err() != nil {
				return nil
			}
			return err
		}
		// Shutdown, having begun under mu, waits only for the
		// connections added before.
		t.mu.Lock()
		if t.stop.Err() != nil {
			t.mu.Unlock()
			conn.Close()
			return nil
		}
		if t.cfg != nil {
			conn = tls.Server(conn, t.cfg)
		}
		t.open[conn] = struct{}{}
		t.count.Inc()
		t.conns.Add(1)
		t.mu.Unlock()
		go t.serveConn(conn)
	}
}

// serveConn completes conn's TLS handshake, if any, and serves its gRPC
// calls until the client or Shutdown closes it.
func (t *transport) serveConn(conn net.Conn) {
	defer t.conns.Done()
	defer func() {
		t.mu.Lock()
		delete(t.open, conn)
		t.count.Dec()
		t.mu.Unlock()
		conn.Close()
	}()
	ctx := context.Background()
	if tc, ok := conn.(*tls.Conn); ok {
		hctx, cancel := context.WithTimeout(t.stop, handshakeTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			return // a failed handshake is the client's to report
		}
		if st := tc.ConnectionState(); len(st.VerifiedChains) > 0 {
			ctx = context.WithValue(ctx, peerKey{}, st.PeerCertificates)
		}
	}
	lc := newLimitConn(conn, t.max, t.log)
	ctx, err := t.h.OnActive(ctx, lc)
	if err != nil {
		return // the client sent no HTTP/2 preface
	}
	if err := t.h.OnRead(ctx, lc); err != nil {
		t.h.OnError(ctx, err, lc)
	}
	t.h.OnInactive(ctx, lc)
}

// Shutdown implements remote.TransServer: it stops accepting, tells the
// clients to go away (GOAWAY), lets calls in progress finish for up to
// the exit wait time, then closes the connections left and waits for
// their goroutines.
func (t *transport) Shutdown() error {
	t.mu.Lock()
	t.abort()
	ln := t.ln
	t.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), t.wait)
	defer cancel()
	if g, ok := t.h.(remote.GracefulShutdown); ok {
		_ = g.GracefulShutdown(ctx) // it returns nil
	}
	done := make(chan struct{})
	go func() { t.conns.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	for c := range t.open {
		c.Close()
	}
	t.mu.Unlock()
	<-done
	return nil
}

// ConnCount implements remote.TransServer.
func (t *transport) ConnCount() utils.AtomicInt {
	return utils.AtomicInt(t.count.Value())
}

type peerKey struct{}

// peerCertificates returns the client certificates the TLS handshake of
// ctx's connection verified, leaf first; nil without TLS or a verified
// client certificate.
func peerCertificates(ctx context.Context) []*x509.Certificate {
	certs, _ := ctx.Value(peerKey{}).([]*x509.Certificate)
	return certs
}
