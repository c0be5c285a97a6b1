// Package restserver is A2A's HTTP+JSON binding (specification 1.0.1
// section 11) on Hertz (or mounted in a net/http server, as an
// http.Handler): the routes of A2A 1.0 (POST /message:send, GET
// /tasks/{id}, POST /tasks/{id}:cancel, ...), each also under /{tenant}/,
// served over a server.Handler, with Server-Sent Events for the two
// streaming operations and the agent card at /.well-known/agent-card.json.
//
// Bodies are the operations' request and response objects in ProtoJSON,
// the form package a2a encodes; GET and DELETE take their fields from the
// path and from query parameters named as the JSON fields. Errors are
// google.rpc.Status JSON with the HTTP status of the specification's table
// (§5.4) and a google.rpc.ErrorInfo naming the error. The binding is A2A
// 1.0 only: 0.3's HTTP+JSON is another wire, not served here.
//
// One server, Hertz or net/http, can serve this binding and JSON-RPC on
// one port at one base URL: set Config.JSONRPC, and JSON-RPC answers at
// its path ("/") while every route of this binding answers beside it.
package restserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/common/config"
	"github.com/cloudwego/hertz/pkg/protocol/sse"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/internal/httpbind"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// Config configures a Server. The zero value of each field is a default.
type Config struct {
	// MaxBodyBytes refuses larger request bodies with 413; 0 means 8 MiB.
	MaxBodyBytes int
	// KeepAlive is the interval of SSE keep-alive comments; 0 means 15 s.
	KeepAlive time.Duration
	// CardMaxAge is the agent card's Cache-Control max-age; 0 means 5 min.
	CardMaxAge time.Duration
	// AllowedHosts are the host names requests may name in Host and
	// Origin, as jsonrpcserver.Config.AllowedHosts says: without it, the
	// hosts of the card's interface URLs and the address Serve listens on.
	// A request naming another host is refused with 403.
	AllowedHosts []string
	// RequestTimeout bounds how long a connection's first request may
	// take to arrive whole; 0 means 10 s.
	RequestTimeout time.Duration
	// ReadTimeout bounds each wait for more of a request after that; 0
	// means 30 s.
	ReadTimeout time.Duration
	// IdleTimeout closes a kept-alive connection that starts no new
	// request for this long; 0 means 60 s.
	IdleTimeout time.Duration
	// JSONRPC, when set, is served beside the binding on the same router
	// (Register and Serve mount both): its endpoint and the agent card are
	// its, and this binding answers every other path. Make it over the
	// same Handler, with the endpoint at "/", so that the card's two
	// interfaces share one URL.
	JSONRPC *jsonrpcserver.Server
	Logger  *slog.Logger
}

// Server routes HTTP+JSON requests to a server.Handler.
type Server struct {
	bodies httpbind.BodyPool
	h      *server.Handler
	cfg    Config
	log    *slog.Logger
	card   *httpbind.Card // nil when cfg.JSONRPC serves it
	hosts  *httpbind.Hosts
}

// New returns a Server for h.
func New(h *server.Handler, cfg Config) (*Server, error) {
	if h == nil {
		return nil, errors.New("restserver: a Handler is required")
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 8 << 20
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 15 * time.Second
	}
	if cfg.CardMaxAge <= 0 {
		cfg.CardMaxAge = 5 * time.Minute
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 10 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = time.Minute
	}
	s := &Server{h: h, cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	var err error
	if cfg.JSONRPC == nil {
		if s.card, err = httpbind.NewCard(h.Card(), cfg.CardMaxAge); err != nil {
			return nil, fmt.Errorf("restserver: %w", err)
		}
	}
	if s.hosts, err = httpbind.NewHosts(cfg.AllowedHosts, h.Card()); err != nil {
		return nil, fmt.Errorf("restserver: %w", err)
	}
	return s, nil
}

// Listening tells the server the address it is served at: unless
// Config.AllowedHosts lists the hosts, requests may name it as their host,
// besides the card's. Serve calls it; call it before serving when Register
// mounts the server on a Hertz server of your own.
func (s *Server) Listening(addr net.Addr) {
	s.hosts.AddListener(addr)
	if s.cfg.JSONRPC != nil {
		s.cfg.JSONRPC.Listening(addr)
	}
}

// Register adds the binding's routes and the agent card to r (with
// Config.JSONRPC, its endpoint too). Hertz's router takes a colon as the
// start of a path parameter, which the binding's paths have in their last
// segment (/message:send, /tasks/{id}:cancel), so the binding is one
// catch-all route that parses its paths itself; r's other routes take
// precedence over it.
func (s *Server) Register(r route.IRoutes) {
	if s.cfg.JSONRPC != nil {
		s.cfg.JSONRPC.Register(r)
	} else {
		r.GET(httpbind.CardPath, s.serveCard)
		r.HEAD(httpbind.CardPath, s.serveCard)
	}
	r.Any("/*path", func(ctx context.Context, c *app.RequestContext) { s.serve(ctx, httpbind.Hertz(c)) })
}

func (s *Server) serveCard(_ context.Context, c *app.RequestContext) { s.card.Serve(httpbind.Hertz(c)) }

// ServeHTTP serves the binding in a net/http server of the caller's, as
// Register does on Hertz: its routes, the agent card and, with
// Config.JSONRPC, the JSON-RPC endpoint. A client that goes away cancels
// its request's context, ending its stream. The http.Server's own
// timeouts (ReadHeaderTimeout, ReadTimeout, IdleTimeout; no WriteTimeout,
// which would cut streams) bound slow clients there, not Config's
// RequestTimeout, ReadTimeout and IdleTimeout; and requests may name the
// server's address as their host only once Listening has been told it (or
// Config.AllowedHosts lists it).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if rpc := s.cfg.JSONRPC; rpc != nil {
		if p := r.URL.EscapedPath(); p == rpc.Path() || p == httpbind.CardPath {
			rpc.ServeHTTP(w, r)
			return
		}
	}
	x := httpbind.NetHTTP(w, r, &s.bodies)
	if r.URL.EscapedPath() == httpbind.CardPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		s.card.Serve(x)
		return
	}
	s.serve(r.Context(), x)
}

// HertzOptions are the Hertz server options the binding needs: request
// bodies are streamed so that oversized ones get a 413 with a Status body,
// a client that disconnects cancels its request's context, ending its
// stream, and slow clients are bounded (RequestTimeout, ReadTimeout,
// IdleTimeout).
func (s *Server) HertzOptions() []config.Option {
	return httpbind.HertzOptions(httpbind.Timeouts{Request: s.cfg.RequestTimeout, Read: s.cfg.ReadTimeout, Idle: s.cfg.IdleTimeout})
}

// Serve serves the binding and the card (with Config.JSONRPC, the JSON-RPC
// endpoint too) on ln with Hertz until ctx is done, then shuts down,
// giving in-flight requests up to grace to finish. Extra Hertz options are
// applied after the binding's own.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration, extra ...config.Option) error {
	s.Listening(ln.Addr())
	return httpbind.Serve(ctx, "restserver", ln, grace, s.HertzOptions(), extra, s.Register)
}

// exchange is one request being answered.
type exchange struct {
	c     httpbind.Exchange
	media string // the media type of JSON answers
	op    jsonrpc.Op
}

// serve answers one request on the binding's catch-all route.
func (s *Server) serve(ctx context.Context, c httpbind.Exchange) {
	ctx, call := s.h.Begin(ctx, a2a.BindingHTTPJSON, "", httpbind.Carrier(c))
	var failed error // what the request was answered with
	defer func() { call.End(failed) }()
	x := &exchange{c: c, media: responseType(c.Header("Accept"), c.Header("Content-Type"))}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("a2a: panic serving a request", "panic", p, "stack", string(debug.Stack()))
			failed = s.writeError(x, a2a.Errorf(a2a.CodeInternal, "internal error"))
		}
	}()
	path, method := c.Path(), c.Method()
	m, ok := matchPath(path)
	if !ok {
		failed = s.writeStatus(x, 404, statusNotFound, a2a.Errorf(a2a.CodeMethodNotFound, "no A2A HTTP+JSON route is %s %s", method, path))
		return
	}
	if m.card {
		// Its own routes serve GET and HEAD.
		c.SetHeader("Allow", m.allow())
		failed = s.writeStatus(x, 405, statusUnimplemented, a2a.Errorf(a2a.CodeMethodNotFound, "the agent card is read with GET, not %s", method))
		return
	}
	if x.op = m.forMethod(method); x.op == 0 {
		c.SetHeader("Allow", m.allow())
		failed = s.writeStatus(x, 405, statusUnimplemented, a2a.Errorf(a2a.CodeMethodNotFound, "%s is served with %s, not %s", path, m.allow(), method))
		return
	}
	m.op = x.op
	call.SetMethod(x.op.String())
	if err := s.hosts.Check(c); err != nil {
		c.SetHeader("Connection", "close")
		failed = s.writeStatus(x, 403, statusPermissionDenied, err)
		return
	}
	if v := httpbind.Version(c); v != "" && httpbind.MajorMinor(v) != a2a.Version {
		failed = s.writeError(x, a2a.Errorf(a2a.CodeVersionNotSupported, "A2A-Version %q is not supported by the HTTP+JSON binding, which is A2A %s", v, a2a.Version))
		return
	}
	exts := httpbind.SplitList(c.Header(httpbind.ExtensionsHeader))
	ctx = server.WithCallInfo(ctx, server.CallInfo{ProtocolVersion: a2a.Version, Extensions: exts})
	// Before the body is read: an unknown caller's is not.
	ctx, aerr := httpbind.Admit(ctx, s.h, x.op.String(), c)
	if aerr != nil {
		failed = s.writeError(x, aerr)
		return
	}
	httpbind.SetExtensions(ctx, c, s.h)
	var body []byte
	var bufp *[]byte // body's buffer, until the request is decoded
	defer func() {
		if bufp != nil {
			s.bodies.Put(bufp)
		}
	}()
	if method == "POST" {
		// A body must be declared JSON, so that a browser asks before
		// sending one from another site (see httpbind's Hosts); a request
		// without one may say nothing.
		ct := c.Header("Content-Type")
		if len(ct) > 0 && !httpbind.IsJSON(ct) {
			c.SetHeader("Connection", "close")
			failed = s.writeStatus(x, 415, statusInvalidArgument, a2a.Errorf(a2a.CodeContentTypeNotSupported, "Content-Type %s is not JSON: send A2A HTTP+JSON bodies as application/a2a+json or application/json", ct))
			return
		}
		bufp = s.bodies.Get()
		var tooBig bool
		if body, tooBig = httpbind.ReadBody(c, bufp, s.cfg.MaxBodyBytes, s.log); tooBig {
			c.SetHeader("Connection", "close")
			failed = s.writeStatus(x, 413, statusInvalidArgument, a2a.Errorf(a2a.CodeInvalidRequest, "request body exceeds the limit of %d bytes", s.cfg.MaxBodyBytes))
			return
		}
		if len(ct) == 0 && len(bytes.TrimSpace(body)) > 0 {
			failed = s.writeStatus(x, 415, statusInvalidArgument, a2a.Errorf(a2a.CodeContentTypeNotSupported, "the request has a body but no Content-Type: send it as application/a2a+json or application/json"))
			return
		}
	}
	req, derr := decodeRequest(m.target, c.RawQuery(), body)
	// The request keeps nothing of the body (decoding copies): a stream,
	// which may stay open for hours, and thousands at once, does not hold
	// the buffer.
	if bufp != nil {
		s.bodies.Put(bufp)
		bufp = nil
	}
	if derr != nil {
		failed = s.writeError(x, derr)
		return
	}
	if x.op.Streaming() {
		failed = s.serveStream(ctx, x, s.streamEvents(ctx, x, req))
		return
	}
	result, err := s.call(ctx, x.op, req)
	if err != nil {
		failed = s.writeError(x, server.ProtocolError(s.log, x.op.String(), err))
		return
	}
	// Encode straight into the response's buffer: no copy.
	out, err := a2a.AppendJSON(c.Buffer(), result)
	if err != nil {
		s.log.Error("a2a: encoding a result failed", "method", x.op.String(), "err", err)
		failed = s.writeError(x, a2a.Errorf(a2a.CodeInternal, "internal error: the result could not be encoded"))
		return
	}
	c.Respond(200, x.media, out)
}

// call calls the Handler's unary operation op with req, which
// decodeRequest made for it.
func (s *Server) call(ctx context.Context, op jsonrpc.Op, req any) (any, error) {
	h := s.h
	switch op {
	case jsonrpc.OpSendMessage:
		ev, err := h.SendMessage(ctx, req.(*a2a.SendMessageRequest))
		if err != nil {
			return nil, err
		}
		return a2a.Wrap(ev), nil
	case jsonrpc.OpGetTask:
		return h.GetTask(ctx, req.(*a2a.GetTaskRequest))
	case jsonrpc.OpListTasks:
		return h.ListTasks(ctx, req.(*a2a.ListTasksRequest))
	case jsonrpc.OpCancelTask:
		return h.CancelTask(ctx, req.(*a2a.CancelTaskRequest))
	case jsonrpc.OpCreatePushConfig:
		return h.CreateTaskPushNotificationConfig(ctx, req.(*a2a.TaskPushNotificationConfig))
	case jsonrpc.OpGetPushConfig:
		return h.GetTaskPushNotificationConfig(ctx, req.(*a2a.GetTaskPushNotificationConfigRequest))
	case jsonrpc.OpListPushConfigs:
		return h.ListTaskPushNotificationConfigs(ctx, req.(*a2a.ListTaskPushNotificationConfigsRequest))
	case jsonrpc.OpDeletePushConfig:
		// The result is a google.protobuf.Empty: {}.
		return struct{}{}, h.DeleteTaskPushNotificationConfig(ctx, req.(*a2a.DeleteTaskPushNotificationConfigRequest))
	case jsonrpc.OpGetExtendedAgentCard:
		return h.GetExtendedAgentCard(ctx, req.(*a2a.GetExtendedAgentCardRequest))
	}
	return nil, a2a.Errorf(a2a.CodeMethodNotFound, "operation %s is not served here", op)
}

// streamEvents starts a streaming operation.
func (s *Server) streamEvents(ctx context.Context, x *exchange, req any) iter.Seq2[eventlog.Entry, error] {
	if x.op == jsonrpc.OpSendStreamingMessage {
		return s.h.SendStreamingMessage(ctx, req.(*a2a.SendMessageRequest))
	}
	return s.h.SubscribeToTask(ctx, req.(*a2a.SubscribeToTaskRequest), string(x.c.Header(sse.LastEventIDHeader)))
}

// serveStream answers a streaming operation with Server-Sent Events whose
// data are StreamResponse objects and whose SSE ids are the events'
// sequence numbers in the task, which a client can send back as
// Last-Event-ID to resume. An error before the first event is answered
// like a unary call's, with its HTTP status and a Status body, which is
// what HTTP+JSON clients read of a failed request; one after it is an
// event of type "error" whose data is the Status JSON, which @a2a-js/sdk
// and a2a-go read as the stream's error (a2a-go reads any event's data;
// @a2a-js/sdk takes only an "error" event as one). It returns the error
// the stream ended with; nil when it ended with its last event, or when
// its client went away.
func (s *Server) serveStream(ctx context.Context, x *exchange, events iter.Seq2[eventlog.Entry, error]) error {
	// What the loop's body changes, in one variable: the body is a
	// closure, and each variable it changes is an allocation of its own.
	loop := struct {
		w      *httpbind.EventWriter // nil until the first event
		end    httpbind.StreamEnd
		buf    []byte
		failed error // what the stream ends with
	}{end: httpbind.NewStreamEnd(x.op == jsonrpc.OpSubscribeToTask, x.c.Header(sse.LastEventIDHeader)), buf: make([]byte, 0, 1024)}
	defer func() {
		if loop.w != nil {
			loop.w.Close()
		}
	}()
	for e, err := range events {
		if err != nil {
			pe := server.ProtocolError(s.log, x.op.String(), err)
			loop.failed = pe
			if loop.w == nil {
				s.writeError(x, pe)
				break
			}
			code, status := httpStatus(pe)
			loop.buf = appendStatus(loop.buf[:0], code, status, pe)
			if werr := loop.w.Event("", "error", loop.buf, true); werr != nil {
				s.log.Debug("a2a: writing a stream error failed", "err", werr)
			}
			break
		}
		if loop.w == nil {
			loop.w = httpbind.NewEventWriter(x.c, s.cfg.KeepAlive)
		}
		loop.buf, err = a2a.AppendJSON(loop.buf[:0], a2a.Wrap(e.Event))
		if err != nil {
			s.log.Error("a2a: encoding a stream event failed", "err", err)
			loop.failed = a2a.Errorf(a2a.CodeInternal, "internal error: an event could not be encoded")
			break
		}
		if err := loop.w.Event(httpbind.EventID(e.Seq), "", loop.buf, loop.end.Last(e.Event)); err != nil {
			// The client went away. The task goes on; it can resubscribe.
			s.log.Debug("a2a: stream client went away", "err", err)
			break
		}
	}
	return loop.failed
}

// writeError answers e with the HTTP status the specification maps its
// code to.
func (s *Server) writeError(x *exchange, e *a2a.Error) error {
	code, status := httpStatus(e)
	return s.writeStatus(x, code, status, e)
}

// writeStatus answers e as a google.rpc.Status with the HTTP status code
// and the google.rpc.Code name status, and returns e: what the request
// was answered with.
func (s *Server) writeStatus(x *exchange, code int, status string, e *a2a.Error) error {
	httpbind.SetErrorHeaders(x.c, e)
	x.c.Respond(code, x.media, appendStatus(x.c.Buffer(), code, status, e))
	return e
}
