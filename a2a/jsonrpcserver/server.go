// Package jsonrpcserver is A2A's JSON-RPC binding on Hertz (or mounted in
// a net/http server, as an http.Handler): one endpoint that serves A2A 1.0
// and 0.3 (told apart by the method name and the A2A-Version header),
// Server-Sent Events for the streaming methods, and the agent card at
// /.well-known/agent-card.json. It decodes requests, calls a
// server.Handler and encodes the replies in the caller's wire version.
package jsonrpcserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/httpbind"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// CardPath is where the agent card is served.
const CardPath = httpbind.CardPath

// FlushDelay is how long an event that does not end its stream may wait
// for the next one before it is sent. An agent's events often come in
// bursts (the answer, then the final status); one write for the burst
// saves a system call on this side and a wake-up on the reader's, for at
// most this much delay of an event that is not the last.
const FlushDelay = httpbind.FlushDelay

// Config configures a Server. The zero value of each field is a default.
type Config struct {
	// Path is the JSON-RPC endpoint; "" means "/".
	Path string
	// MaxBodyBytes refuses larger request bodies; 0 means 8 MiB.
	MaxBodyBytes int
	// KeepAlive is the interval of SSE keep-alive comments; 0 means 15 s.
	KeepAlive time.Duration
	// CardMaxAge is the agent card's Cache-Control max-age; 0 means 5 min.
	CardMaxAge time.Duration
	// AllowedHosts are the host names (with the port when it is not the
	// scheme's default: "agents.example.com", "127.0.0.1:9001") that
	// requests may name in Host, and their Origin if they have one.
	// Without it, the hosts of the card's interface URLs are allowed, and
	// the address Serve listens on, with localhost, 127.0.0.1 and [::1]
	// on the same port for a loopback address (any host for an
	// unspecified one, 0.0.0.0). A request naming another host is refused
	// with 403: a page on another site, even one whose name it makes
	// resolve to this server (DNS rebinding), cannot drive the agent
	// through a browser. "*" allows any host.
	AllowedHosts []string
	// RequestTimeout bounds how long a connection's first request may
	// take to arrive whole (headers and body), so that a client that
	// dribbles bytes cannot hold a connection; 0 means 10 s.
	RequestTimeout time.Duration
	// ReadTimeout bounds each wait for more of a request after that; 0
	// means 30 s.
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that starts no new
	// request for this long; 0 means 60 s.
	IdleTimeout time.Duration
	Logger      *slog.Logger
}

// Server routes JSON-RPC requests and card fetches to a server.Handler.
type Server struct {
	bodies httpbind.BodyPool
	h      *server.Handler
	opts   Config
	log    *slog.Logger
	card   *httpbind.Card
	hosts  *httpbind.Hosts
}

// New returns a Server for h. The agent card is encoded once, in a form
// both 1.0 and 0.3 clients read.
func New(h *server.Handler, opts Config) (*Server, error) {
	if opts.Path == "" {
		opts.Path = "/"
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 8 << 20
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 15 * time.Second
	}
	if opts.CardMaxAge <= 0 {
		opts.CardMaxAge = 5 * time.Minute
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 10 * time.Second
	}
	if opts.ReadTimeout <= 0 {
		opts.ReadTimeout = 30 * time.Second
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = time.Minute
	}
	s := &Server{h: h, opts: opts, log: opts.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	var err error
	if s.card, err = httpbind.NewCard(h.Card(), opts.CardMaxAge); err != nil {
		return nil, fmt.Errorf("jsonrpcserver: %w", err)
	}
	if s.hosts, err = httpbind.NewHosts(opts.AllowedHosts, h.Card()); err != nil {
		return nil, fmt.Errorf("jsonrpcserver: %w", err)
	}
	return s, nil
}

// Listening tells the server the address it is served at: unless
// Config.AllowedHosts lists the hosts, requests may name it as their
// host, besides the card's. Serve calls it; call it before serving when
// Register mounts the server on a Hertz server of your own.
func (s *Server) Listening(addr net.Addr) { s.hosts.AddListener(addr) }

// Register adds the JSON-RPC endpoint and the agent card to r.
func (s *Server) Register(r route.IRoutes) {
	r.Any(s.opts.Path, s.ServeRPC)
	r.GET(CardPath, s.ServeCard)
	r.HEAD(CardPath, s.ServeCard)
}

// HertzOptions are the Hertz server options the binding needs: request
// bodies are streamed so that oversized ones get a JSON-RPC error, a client
// that disconnects cancels its request's context, ending its stream, and
// slow clients are bounded (RequestTimeout, ReadTimeout, IdleTimeout).
func (s *Server) HertzOptions() []config.Option {
	return httpbind.HertzOptions(httpbind.Timeouts{Request: s.opts.RequestTimeout, Read: s.opts.ReadTimeout, Idle: s.opts.IdleTimeout})
}

// ServeCard serves the agent card with an ETag, Last-Modified and
// Cache-Control, answering a conditional request that the card matches with
// 304. If-Modified-Since counts only without If-None-Match (RFC 9110
// 13.2.2).
//
// A request without A2A-Version is a 0.3 client's (specification 3.2.6,
// 3.6.1: 0.3 is assumed for an empty header) and gets the card both versions
// read. One that says A2A-Version: 1.0 (as 1.0 clients must on every
// request), in the header or the query, gets the 1.0 card alone, which
// the 1.0 JSON schema admits: the union card's 0.3 members are not in it.
func (s *Server) ServeCard(_ context.Context, c *app.RequestContext) { s.card.Serve(httpbind.Hertz(c)) }

// ServeRPC serves one JSON-RPC request.
func (s *Server) ServeRPC(ctx context.Context, c *app.RequestContext) {
	s.serveRPC(ctx, httpbind.Hertz(c))
}

// Path returns the JSON-RPC endpoint's path (Config.Path).
func (s *Server) Path() string { return s.opts.Path }

// ServeHTTP serves the binding in a net/http server of the caller's, as
// Register does on Hertz: the endpoint at Config.Path and the agent card
// at CardPath; other paths are not found. A client that goes away cancels
// its request's context, ending its stream. The http.Server's own
// timeouts (ReadHeaderTimeout, ReadTimeout, IdleTimeout; no WriteTimeout,
// which would cut streams) bound slow clients there, not Config'
// RequestTimeout, ReadTimeout and IdleTimeout; and requests may name the
// server's address as their host only once Listening has been told it (or
// Config.AllowedHosts lists it).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := httpbind.NetHTTP(w, r, &s.bodies)
	switch x.Path() {
	case s.opts.Path:
		s.serveRPC(r.Context(), x)
	case CardPath:
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			x.SetHeader("Allow", "GET, HEAD")
			x.Respond(http.StatusMethodNotAllowed, "text/plain; charset=utf-8", append(x.Buffer(), "405 method not allowed"...))
			return
		}
		s.card.Serve(x)
	default:
		x.Respond(http.StatusNotFound, "text/plain; charset=utf-8", append(x.Buffer(), "404 page not found"...))
	}
}

// serveRPC serves one JSON-RPC request.
func (s *Server) serveRPC(ctx context.Context, c httpbind.Exchange) {
	ctx, call := s.h.Begin(ctx, a2a.BindingJSONRPC, "", httpbind.Carrier(c))
	var failed error // what the request was answered with
	defer func() { call.End(failed) }()
	header := httpbind.Version(c)
	// Errors found before the method is known answer in the version the
	// header names, else in 0.3, whose clients send no header.
	version := a2a.Version03
	if httpbind.MajorMinor(header) == a2a.Version {
		version = a2a.Version
	}
	var id json.RawMessage
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("a2a: panic serving a request", "panic", p, "stack", string(debug.Stack()))
			failed = s.writeError(c, id, a2a.Errorf(a2a.CodeInternal, "internal error"), version)
		}
	}()
	if c.Method() != "POST" {
		c.SetHeader("Allow", "POST")
		failed = s.writeErrorStatus(c, 405, nil, a2a.Errorf(a2a.CodeInvalidRequest, "A2A JSON-RPC requests are HTTP POSTs; this was %s", c.Method()), version)
		return
	}
	if status, err := s.checkRequest(c); err != nil {
		c.SetHeader("Connection", "close")
		failed = s.writeErrorStatus(c, status, nil, err, version)
		return
	}
	bufp := s.bodies.Get()
	defer func() {
		if bufp != nil {
			s.bodies.Put(bufp)
		}
	}()
	body, tooBig := httpbind.ReadBody(c, bufp, s.opts.MaxBodyBytes, s.log)
	if tooBig {
		c.SetHeader("Connection", "close")
		failed = s.writeErrorStatus(c, 413, nil, a2a.Errorf(a2a.CodeInvalidRequest, "request body exceeds the limit of %d bytes", s.opts.MaxBodyBytes), version)
		return
	}
	req, derr := jsonrpc.DecodeRequest(body) // req aliases body, whose buffer is reused after this call
	id = req.ID
	if derr != nil {
		if op, mver, ok := jsonrpc.ParseMethod(req.Method); ok {
			call.SetMethod(op.String())
			version = mver
		}
		failed = s.writeError(c, id, derr, version)
		return
	}
	op, mver, ok := jsonrpc.ParseMethod(req.Method)
	if !ok {
		failed = s.writeError(c, id, a2a.Errorf(a2a.CodeMethodNotFound, "method %q does not exist; A2A 1.0 methods are named like SendMessage, 0.3 ones like message/send", req.Method), version)
		return
	}
	call.SetMethod(op.String())
	version = mver
	if err := checkVersionHeader(header, req.Method, mver); err != nil {
		failed = s.writeError(c, id, err, version)
		return
	}
	exts := httpbind.SplitList(c.Header(httpbind.ExtensionsHeader))
	if mver == a2a.Version03 { // 0.3 named the header X-A2A-Extensions
		exts = append(exts, httpbind.SplitList(c.Header("X-A2A-Extensions"))...)
	}
	ctx = server.WithCallInfo(ctx, server.CallInfo{ProtocolVersion: mver, Extensions: exts})
	ctx, aerr := httpbind.Admit(ctx, s.h, op.String(), c)
	if aerr != nil {
		failed = s.writeError(c, id, aerr, version)
		return
	}
	httpbind.SetExtensions(ctx, c, s.h)
	if mver == a2a.Version {
		var perr *a2a.Error
		if req.Params, perr = jsonrpc.ProtoFieldNames(req.Params); perr != nil {
			failed = s.writeError(c, id, perr, version)
			return
		}
	}
	if op.Streaming() {
		// A stream may stay open for hours, and thousands at once: once
		// its request is decoded (which copies what it keeps), the body's
		// buffer goes back to the pool, and the id that every event
		// echoes is copied out of it.
		id = bytes.Clone(id)
		events := s.streamEvents(ctx, c, op, wireOf(mver), req.Params)
		s.bodies.Put(bufp)
		bufp = nil
		failed = s.serveStream(ctx, c, op, mver, id, events)
		return
	}
	result, err := s.call(ctx, op, wireOf(mver), req.Params)
	if err != nil {
		failed = s.writeError(c, id, server.ProtocolError(s.log, op.String(), err), version)
		return
	}
	// Encode straight into the response's buffer: no copy.
	out, err := jsonrpc.AppendResult(c.Buffer(), id, result)
	if err != nil {
		s.log.Error("a2a: encoding a result failed", "method", req.Method, "err", err)
		failed = s.writeError(c, id, a2a.Errorf(a2a.CodeInternal, "internal error: the result could not be encoded"), version)
		return
	}
	c.Respond(200, "application/json", out)
}

// checkRequest refuses, with the HTTP status to answer, a request whose
// body is not declared JSON, or that names a host this server is not
// reached by (in Host, or in Origin when a browser sends one).
func (s *Server) checkRequest(c httpbind.Exchange) (int, *a2a.Error) {
	if ct := c.Header("Content-Type"); !httpbind.IsJSON(ct) {
		if len(ct) == 0 {
			ct = []byte("none")
		}
		return 415, a2a.Errorf(a2a.CodeInvalidRequest, "Content-Type %s is not JSON: send A2A JSON-RPC requests as application/json", ct)
	}
	if err := s.hosts.Check(c); err != nil {
		return 403, err
	}
	return 0, nil
}

// checkVersionHeader checks the A2A-Version header against the method's
// version. As the specification requires, an absent header means 0.3, so
// a 1.0 method without it is not found: the error says what to send.
func checkVersionHeader(header, method, methodVersion string) *a2a.Error {
	if header == "" {
		if methodVersion != a2a.Version03 {
			return a2a.Errorf(a2a.CodeMethodNotFound, "method %q is an A2A %s method, but a request without an A2A-Version header is A2A 0.3; send A2A-Version: %s", method, methodVersion, methodVersion)
		}
		return nil
	}
	v := httpbind.MajorMinor(header)
	if v != a2a.Version && v != a2a.Version03 {
		return a2a.Errorf(a2a.CodeVersionNotSupported, "A2A-Version %q is not supported; this server speaks 1.0 and 0.3", header)
	}
	if v != methodVersion {
		return a2a.Errorf(a2a.CodeMethodNotFound, "method %q is an A2A %s method, but the A2A-Version header says %s", method, methodVersion, v)
	}
	return nil
}

// writeError answers e with HTTP status 200, as JSON-RPC does, except for
// authentication and authorization errors, which are 401 and 403 as on
// every HTTP binding, so that HTTP clients and proxies know them.
func (s *Server) writeError(c httpbind.Exchange, id json.RawMessage, e *a2a.Error, version string) error {
	status := 200
	switch e.Code {
	case a2a.CodeUnauthenticated:
		status = 401
	case a2a.CodePermissionDenied:
		status = 403
	}
	return s.writeErrorStatus(c, status, id, e, version)
}

// writeErrorStatus answers e with the HTTP status, and returns e: what
// the request was answered with.
func (s *Server) writeErrorStatus(c httpbind.Exchange, status int, id json.RawMessage, e *a2a.Error, version string) error {
	httpbind.SetErrorHeaders(c, e)
	c.Respond(status, "application/json", jsonrpc.AppendError(c.Buffer(), id, e, version))
	return e
}

// Serve serves the endpoint and the card on ln with Hertz until ctx is
// done, then shuts down, giving in-flight requests up to grace to finish.
// Extra Hertz options are applied after the binding's own. Unless
// Config.AllowedHosts says otherwise, requests may name ln's address as
// their host, besides the card's.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration, extra ...config.Option) error {
	s.Listening(ln.Addr())
	return httpbind.Serve(ctx, "jsonrpcserver", ln, grace, s.HertzOptions(), extra, s.Register)
}
