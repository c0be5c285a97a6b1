// Package grpcclient is the gRPC binding of the A2A client (package
// client): the lf.a2a.v1.A2AService of proto/a2a.proto, called with Kitex.
// It lives apart from package client so that a client that does not speak
// gRPC does not link Kitex.
//
//	c, err := client.New(ctx, "http://agents.example.com:9001", client.Config{
//		Bindings: []client.Binding{grpcclient.Binding(grpcclient.Config{}), client.JSONRPC},
//	})
//
// The binding speaks A2A 1.0 to an interface whose URL is host:port, as
// agent cards name gRPC interfaces, or grpc://host:port, in plain text
// (HTTP/2 without TLS, unless Config.TLS is set). Each call
// carries the metadata a2a-version: 1.0 and its headers (A2A-Extensions,
// Authorization, API keys, those of client.Config.Credentials) as
// lower-case metadata keys. An error status
// becomes an *a2a.Error: the code its google.rpc.ErrorInfo names, else the
// nearest to its status code, and RetryAfter from a google.rpc.RetryInfo.
//
// Streams are numbered and resumed as over SSE with a2amesh servers: the
// response header a2amesh-first-event-id numbers a stream's events, and a
// resumption asks for the events after the last one received with the
// request metadata last-event-id (docs/protocol.md). A server that sends
// no such header leaves the events without ids, and the Client does not
// resume its streams.
//
// A stream that stays silent (an agent waiting on a slow model) is kept
// as long as the connection answers HTTP/2 keepalive pings, which the
// client sends every StreamIdleTimeout/2 (but at least 10 seconds apart,
// Kitex's floor) while calls are in progress, and a connection that does
// not answer one within StreamIdleTimeout/2 fails its calls: a hung server
// cuts a silent stream within about StreamIdleTimeout (or 10 s plus half of
// it, when it is under 20 s). The server must accept such pings: an
// a2amesh server does (grpcserver.KeepaliveMinTime), but a grpc-go or Kitex
// server's default policy, one ping per 5 minutes, answers more frequent
// pings on silent streams with GOAWAY (too_many_pings) and closes the
// connection, which the Client sees as a cut stream.
package grpcclient

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	kclient "github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/discovery"
	kgrpc "github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/grpc"
	"github.com/cloudwego/kitex/pkg/rpcinfo"
	"github.com/cloudwego/kitex/transport"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
)

// Config configures the binding. Its zero value is a working default.
type Config struct {
	// TLS, when set, dials the interface over TLS with it, offering
	// "h2" (ALPN); a ServerName left empty is the interface's host. Its
	// Certificates are the client certificates a server asking for
	// mutual TLS gets. nil dials plain HTTP/2.
	TLS *tls.Config
	// Options are extra Kitex client options, applied after the
	// binding's own (address, dialer, keepalive, TLS): tracing, window
	// sizes.
	Options []kclient.Option
}

// Binding returns the gRPC binding, A2A 1.0 only, for client.Config's
// Bindings.
func Binding(cfg Config) client.Binding { return binding{cfg} }

type binding struct{ cfg Config }

func (binding) Name() string { return a2a.BindingGRPC }

func (binding) Speaks(v string) bool { return v == a2a.Version }

func (b binding) Transport(iface *a2a.AgentInterface, tc *client.TransportConfig) (client.Transport, error) {
	addr, err := address(iface.URL)
	if err != nil {
		return nil, err
	}
	dial := tc.Dial
	if dial == nil {
		dial = (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext
	}
	// Kitex dials outside of any call's context, and tries a failed dial
	// again up to 6 times (heeding the call's context only between
	// attempts): bound each as the Client bounds a silent server.
	connect := tc.StreamIdleTimeout
	if connect <= 0 {
		connect = 30 * time.Second
	}
	t := &grpcTransport{addr: addr, idle: tc.StreamIdleTimeout}
	opts := []kclient.Option{
		kclient.WithTransportProtocol(transport.GRPC),
		kclient.WithDestService(addr), // the :authority of each call
		kclient.WithResolver(fixedResolver(addr)),
		kclient.WithDialer(dialer{dial: dial, maxMsg: tc.MaxEventBytes, refused: &t.refused}),
		kclient.WithConnectTimeout(connect),
	}
	if tc.StreamIdleTimeout > 0 {
		// Kitex pings no more often than every 10 s, whatever Time says.
		half := tc.StreamIdleTimeout / 2
		opts = append(opts, kclient.WithGRPCKeepaliveParams(kgrpc.ClientKeepalive{Time: half, Timeout: half}))
	}
	if b.cfg.TLS != nil {
		// Kitex hands the config to tls.Client as it is, which refuses
		// to verify a server without a name to verify it by.
		c := b.cfg.TLS.Clone()
		if c.ServerName == "" {
			c.ServerName, _, _ = net.SplitHostPort(addr)
		}
		opts = append(opts, kclient.WithGRPCTLSConfig(c))
	}
	t.opts = append(opts, b.cfg.Options...)
	// A first Kitex client now, so that bad options fail here.
	if t.cur, err = t.newKitex(); err != nil {
		return nil, err
	}
	return t, nil
}

// address returns the host:port of a gRPC interface URL: host:port or
// grpc://host:port.
func address(u string) (string, error) {
	hp := strings.TrimSuffix(strings.TrimPrefix(u, "grpc://"), "/")
	host, port, err := net.SplitHostPort(hp)
	if err != nil || host == "" || port == "" || strings.ContainsAny(hp, "/?#@") {
		return "", fmt.Errorf("a gRPC interface URL is host:port or grpc://host:port, not %q", u)
	}
	return hp, nil
}

// fixedResolver resolves to addr as it is: Kitex's WithHostPorts looks
// the host up once, when the client is made (and panics when it cannot),
// where the dialer should each time it dials.
func fixedResolver(addr string) discovery.Resolver {
	ins := []discovery.Instance{discovery.NewInstance("tcp", addr, discovery.DefaultWeight, nil)}
	return &discovery.SynthesizedResolver{
		TargetFunc: func(context.Context, rpcinfo.EndpointInfo) string { return addr },
		ResolveFunc: func(context.Context, string) (discovery.Result, error) {
			return discovery.Result{Cacheable: true, CacheKey: addr, Instances: ins}, nil
		},
		NameFunc: func() string { return addr },
	}
}

// grpcTransport is the client.Transport of one gRPC interface.
type grpcTransport struct {
	addr string
	opts []kclient.Option
	enc  pbwire.Encoder
	bufs pbwire.Buffers // for the requests written directly
	idle time.Duration  // the Client's StreamIdleTimeout; <= 0: none
	// refused is the dialer's: why the last connection closed, when it
	// was for a message over the limit.
	refused atomic.Pointer[error]

	mu  sync.Mutex
	cur *kitex // the Kitex client new calls use; nil after Close
}

// kitex is one Kitex client and the calls in progress on it. Close retires
// it: it closes (with its connections) when its last call ends, and the
// next call makes a new one.
type kitex struct {
	c       kclient.Client
	calls   int  // guarded by grpcTransport.mu
	retired bool // guarded by grpcTransport.mu
}

func (t *grpcTransport) newKitex() (*kitex, error) {
	c, err := kclient.NewClient(a2aservice.NewServiceInfo(), t.opts...)
	if err != nil {
		return nil, fmt.Errorf("make the Kitex client: %w", err)
	}
	return &kitex{c: c}, nil
}

// acquire returns the Kitex client for a call, which must release it.
func (t *grpcTransport) acquire() (*kitex, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		k, err := t.newKitex()
		if err != nil {
			return nil, err
		}
		t.cur = k
	}
	t.cur.calls++
	return t.cur, nil
}

func (t *grpcTransport) release(k *kitex) {
	t.mu.Lock()
	defer t.mu.Unlock()
	k.calls--
	if k.retired && k.calls == 0 {
		closeKitex(k)
	}
}

// Close closes the Transport's connections, once the calls in progress on
// them end; a later call opens new ones.
func (t *grpcTransport) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k := t.cur; k != nil {
		t.cur = nil
		k.retired = true
		if k.calls == 0 {
			return closeKitex(k)
		}
	}
	return nil
}

func closeKitex(k *kitex) error {
	c, ok := k.c.(io.Closer)
	if !ok {
		return errors.New("a2a grpcclient: the Kitex client cannot be closed")
	}
	return c.Close()
}

// out is a request on its way out, written by pbwire rather than by
// prutal, the codec of Kitex's generated code, which leaves out a oneof
// member that holds its zero value: an empty text part would reach the
// server with no content, and false, 0 or "" in metadata as null.
func (t *grpcTransport) out(msg any) pbwire.Outgoing { return pbwire.Outgoing{Enc: &t.enc, Msg: msg} }
