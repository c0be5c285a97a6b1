// Package jsonrpcserver is A2A's JSON-RPC binding on Hertz: one endpoint
// that serves A2A 1.0 and 0.3 (told apart by the method name and the
// A2A-Version header), Server-Sent Events for the streaming methods, and the
// agent card at /.well-known/agent-card.json. It decodes requests, calls a
// server.Handler and encodes the replies in the caller's wire version.
package jsonrpcserver

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hzserver "github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// CardPath is where the agent card is served.
const CardPath = "/.well-known/agent-card.json"

// Options configures a Server. The zero value of each field is a default.
type Options struct {
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
	bodies    sync.Pool // *[]byte request body buffers
	h         *server.Handler
	opts      Options
	log       *slog.Logger
	card      []byte // the card both 1.0 and 0.3 clients read
	cardETag  string
	card10    []byte // the 1.0 card alone, for clients that say A2A-Version: 1.0
	card10Tag string
	cardMod   time.Time // when the card was encoded, to the second
	cardModHd string    // cardMod as an HTTP date
	cardCache string
	hosts     hostSet
}

// New returns a Server for h. The agent card is encoded once, in a form
// both 1.0 and 0.3 clients read.
func New(h *server.Handler, opts Options) (*Server, error) {
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
	s.bodies.New = func() any { b := make([]byte, 0, 4096); return &b }
	if s.log == nil {
		s.log = slog.Default()
	}
	card, err := a2av03.CardJSON(h.Card())
	if err != nil {
		return nil, fmt.Errorf("jsonrpcserver: encode agent card: %w", err)
	}
	s.card, s.cardETag = card, etagOf(card)
	if s.card10, err = json.Marshal(h.Card()); err != nil {
		return nil, fmt.Errorf("jsonrpcserver: encode agent card: %w", err)
	}
	s.card10Tag = etagOf(s.card10)
	// The card is fixed for the server's life, so it last changed now.
	s.cardMod = time.Now().UTC().Truncate(time.Second)
	s.cardModHd = s.cardMod.Format(http.TimeFormat)
	s.cardCache = "public, max-age=" + strconv.Itoa(int(opts.CardMaxAge.Seconds()))
	if s.hosts, err = allowedHosts(opts.AllowedHosts, h.Card()); err != nil {
		return nil, fmt.Errorf("jsonrpcserver: %w", err)
	}
	return s, nil
}

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
	return []config.Option{
		hzserver.WithStreamBody(true),
		hzserver.WithSenseClientDisconnection(true),
		hzserver.WithDisablePrintRoute(true),
		// A multipart body is refused as not JSON, not parsed.
		hzserver.WithDisablePreParseMultipartForm(true),
		hzserver.WithReadTimeout(s.opts.ReadTimeout),
		hzserver.WithIdleTimeout(s.opts.IdleTimeout),
		// Hertz bounds each wait for request bytes, not the whole
		// request: a deadline on the first request's reads stops a
		// client dribbling a byte per wait. Later requests on the
		// connection reset it (Hertz sets its timeouts per request).
		hzserver.WithOnConnect(func(ctx context.Context, conn network.Conn) context.Context {
			_ = conn.SetReadDeadline(time.Now().Add(s.opts.RequestTimeout))
			return ctx
		}),
	}
}

func etagOf(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:12]) + `"`
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
func (s *Server) ServeCard(_ context.Context, c *app.RequestContext) {
	card, etag := s.card, s.cardETag
	v := c.Request.Header.Peek("A2A-Version")
	if len(v) == 0 {
		v = c.QueryArgs().Peek("A2A-Version")
	}
	if majorMinor(string(v)) == a2a.Version {
		card, etag = s.card10, s.card10Tag
	}
	h := &c.Response.Header
	h.Set("Vary", "A2A-Version")
	h.Set("ETag", etag)
	h.Set("Last-Modified", s.cardModHd)
	h.Set("Cache-Control", s.cardCache)
	h.Set("Access-Control-Allow-Origin", "*")
	if match := c.Request.Header.Peek("If-None-Match"); len(match) > 0 {
		if bytes.Contains(match, []byte(etag)) {
			c.Status(304)
			return
		}
	} else if since, err := http.ParseTime(string(c.Request.Header.Peek("If-Modified-Since"))); err == nil && !s.cardMod.After(since) {
		c.Status(304)
		return
	}
	c.Data(200, "application/json", card)
}

// ServeRPC serves one JSON-RPC request.
func (s *Server) ServeRPC(ctx context.Context, c *app.RequestContext) {
	header := string(c.Request.Header.Peek("A2A-Version"))
	if header == "" { // the specification lets clients pass it as a parameter
		header = string(c.QueryArgs().Peek("A2A-Version"))
	}
	// Errors found before the method is known answer in the version the
	// header names, else in 0.3, whose clients send no header.
	version := a2a.Version03
	if majorMinor(header) == a2a.Version {
		version = a2a.Version
	}
	var id json.RawMessage
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("a2a: panic serving a request", "panic", p, "stack", string(debug.Stack()))
			s.writeError(c, id, a2a.Errorf(a2a.CodeInternal, "internal error"), version)
		}
	}()
	if !bytes.Equal(c.Method(), []byte("POST")) {
		c.Response.Header.Set("Allow", "POST")
		s.writeErrorStatus(c, 405, nil, a2a.Errorf(a2a.CodeInvalidRequest, "A2A JSON-RPC requests are HTTP POSTs; this was %s", c.Method()), version)
		return
	}
	if status, err := s.checkRequest(c); err != nil {
		c.Response.Header.Set("Connection", "close")
		s.writeErrorStatus(c, status, nil, err, version)
		return
	}
	bufp := s.bodies.Get().(*[]byte)
	defer s.bodies.Put(bufp)
	body, tooBig := s.readBody(c, bufp)
	if tooBig {
		c.Response.Header.Set("Connection", "close")
		s.writeErrorStatus(c, 413, nil, a2a.Errorf(a2a.CodeInvalidRequest, "request body exceeds the limit of %d bytes", s.opts.MaxBodyBytes), version)
		return
	}
	req, derr := jsonrpc.DecodeRequest(body) // req aliases body, which is reused after this call
	id = req.ID
	if derr != nil {
		if _, mver, ok := jsonrpc.ParseMethod(req.Method); ok {
			version = mver
		}
		s.writeError(c, id, derr, version)
		return
	}
	op, mver, ok := jsonrpc.ParseMethod(req.Method)
	if !ok {
		s.writeError(c, id, a2a.Errorf(a2a.CodeMethodNotFound, "method %q does not exist; A2A 1.0 methods are named like SendMessage, 0.3 ones like message/send", req.Method), version)
		return
	}
	version = mver
	if err := checkVersionHeader(header, req.Method, mver); err != nil {
		s.writeError(c, id, err, version)
		return
	}
	exts := splitList(c.Request.Header.Peek("A2A-Extensions"))
	if mver == a2a.Version03 { // 0.3 named the header X-A2A-Extensions
		exts = append(exts, splitList(c.Request.Header.Peek("X-A2A-Extensions"))...)
	}
	ctx = server.WithCallInfo(ctx, server.CallInfo{ProtocolVersion: mver, Extensions: exts})
	if mver == a2a.Version {
		var perr *a2a.Error
		if req.Params, perr = jsonrpc.ProtoFieldNames(req.Params); perr != nil {
			s.writeError(c, id, perr, version)
			return
		}
	}
	if op.Streaming() {
		s.serveStream(ctx, c, op, mver, id, req.Params)
		return
	}
	result, err := s.call(ctx, op, wireOf(mver), req.Params)
	if err != nil {
		s.writeError(c, id, server.ProtocolError(s.log, op.String(), err), version)
		return
	}
	// Encode straight into Hertz's response buffer: no copy.
	bb := c.Response.BodyBuffer()
	out, err := jsonrpc.AppendResult(bb.B[:0], id, result)
	bb.B = out
	if err != nil {
		s.log.Error("a2a: encoding a result failed", "method", req.Method, "err", err)
		s.writeError(c, id, a2a.Errorf(a2a.CodeInternal, "internal error: the result could not be encoded"), version)
		return
	}
	c.Response.Header.SetContentType("application/json")
	c.Response.SetStatusCode(200)
}

// readBody reads the request body into *bufp, up to the limit. A body
// over the limit is drained a little further (a bounded amount), so that
// the connection stops at a message boundary where it can and the 413
// reaches the client.
func (s *Server) readBody(c *app.RequestContext, bufp *[]byte) (body []byte, tooBig bool) {
	limit := s.opts.MaxBodyBytes
	if n := c.Request.Header.ContentLength(); n > limit {
		return nil, true
	}
	stream := c.RequestBodyStream()
	if stream == nil {
		b := c.Request.Body()
		return b, len(b) > limit
	}
	buf := bytes.NewBuffer((*bufp)[:0])
	_, err := buf.ReadFrom(io.LimitReader(stream, int64(limit)+1))
	*bufp = buf.Bytes()
	if err != nil {
		s.log.Debug("a2a: reading a request body failed", "err", err)
	}
	if buf.Len() > limit {
		// Best effort: a client still sending when the connection closes
		// loses the reply. The connection closes afterwards anyway.
		_, _ = io.CopyN(io.Discard, stream, max(4*int64(limit), 8<<20))
		return nil, true
	}
	return buf.Bytes(), false
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
	v := majorMinor(header)
	if v != a2a.Version && v != a2a.Version03 {
		return a2a.Errorf(a2a.CodeVersionNotSupported, "A2A-Version %q is not supported; this server speaks 1.0 and 0.3", header)
	}
	if v != methodVersion {
		return a2a.Errorf(a2a.CodeMethodNotFound, "method %q is an A2A %s method, but the A2A-Version header says %s", method, methodVersion, v)
	}
	return nil
}

// majorMinor reduces a version to Major.Minor; patch numbers do not count.
func majorMinor(v string) string {
	v = strings.TrimSpace(v)
	major, rest, ok := strings.Cut(v, ".")
	if !ok {
		return v
	}
	minor, _, _ := strings.Cut(rest, ".")
	return major + "." + minor
}

func splitList(h []byte) []string {
	if len(h) == 0 {
		return nil
	}
	var out []string
	for _, f := range strings.Split(string(h), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func (s *Server) writeError(c *app.RequestContext, id json.RawMessage, e *a2a.Error, version string) {
	s.writeErrorStatus(c, 200, id, e, version)
}

func (s *Server) writeErrorStatus(c *app.RequestContext, status int, id json.RawMessage, e *a2a.Error, version string) {
	setRetryAfter(c, e)
	c.Data(status, "application/json", jsonrpc.AppendError(make([]byte, 0, 256), id, e, version))
}

// setRetryAfter gives a retryable error's guidance as Retry-After, in whole
// seconds (at least 1), for HTTP clients and proxies that read it.
func setRetryAfter(c *app.RequestContext, e *a2a.Error) {
	if e.RetryAfter > 0 {
		c.Response.Header.Set("Retry-After", strconv.Itoa(int(max(time.Second, e.RetryAfter+time.Second-1)/time.Second)))
	}
}

// Serve serves the endpoint and the card on ln with Hertz until ctx is
// done, then shuts down, giving in-flight requests up to grace to finish.
// Extra Hertz options are applied after the binding's own. Unless
// Options.AllowedHosts says otherwise, requests may name ln's address as
// their host, besides the card's.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration, extra ...config.Option) error {
	if !s.hosts.configured {
		s.hosts.addListener(ln.Addr())
	}
	opts := append(s.HertzOptions(), hzserver.WithListener(ln), hzserver.WithExitWaitTime(grace))
	h := hzserver.New(append(opts, extra...)...)
	s.Register(h)
	errc := make(chan error, 1)
	go func() { errc <- h.Run() }()
	select {
	case err := <-errc:
		return fmt.Errorf("jsonrpcserver: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace+time.Second)
	defer cancel()
	err := h.Shutdown(sctx)
	if rerr := <-errc; err == nil && rerr != nil && !errors.Is(rerr, net.ErrClosed) {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("jsonrpcserver: shutdown: %w", err)
	}
	return nil
}
