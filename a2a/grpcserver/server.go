// Package grpcserver is the gRPC binding of A2A 1.0 on Kitex: the
// lf.a2a.v1.A2AService of proto/a2a.proto served over a server.Handler.
//
// Each RPC converts its request to the a2a model, calls the Handler and
// converts what it returns; the two streaming RPCs send each event as the
// Handler yields it and end when the task settles, on the first error, or
// when the client goes away. Errors are gRPC statuses with the codes of the
// specification's mapping (§5.4) and, for A2A errors, a
// google.rpc.ErrorInfo detail in the domain "a2a-protocol.org". The
// metadata keys a2a-version and a2a-extensions play the part of the HTTP
// headers A2A-Version and A2A-Extensions (the response header
// a2a-extensions names the extensions activated); a2amesh-first-event-id and
// last-event-id that of SSE's event ids, so that a client resumes a cut
// stream as over SSE. The server accepts HTTP/2 keepalive pings every 5
// seconds (KeepaliveMinTime).
package grpcserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/cloudwego/kitex/pkg/endpoint"
	"github.com/cloudwego/kitex/pkg/remote"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2"
	kgrpc "github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/grpc"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/cloudwego/kitex/pkg/rpcinfo"
	"github.com/cloudwego/kitex/pkg/serviceinfo"
	"github.com/cloudwego/kitex/pkg/streaming"
	kserver "github.com/cloudwego/kitex/server"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
)

// Metadata keys of the binding: the gRPC counterparts of the A2A-Version
// and A2A-Extensions HTTP headers, and of SSE's event ids (a2amesh's own:
// gRPC has no event ids). A streaming RPC's response header
// FirstEventIDKey is the sequence number of its first event, the events
// after it numbered one by one; SubscribeToTask's request metadata
// LastEventIDKey asks for the events after that one, as the Last-Event-ID
// header does on the JSON bindings.
const (
	VersionKey      = pbconv.VersionKey
	ExtensionsKey   = pbconv.ExtensionsKey
	FirstEventIDKey = pbconv.FirstEventIDKey
	LastEventIDKey  = pbconv.LastEventIDKey
)

// KeepaliveMinTime is how often the server accepts an HTTP/2 keepalive
// ping from a client, with or without calls in progress. A
// client on a stream that stays silent (an agent waiting on a slow model)
// tells a live server from a hung one by its pings: a2a/grpcclient pings
// every StreamIdleTimeout/2, at least 10 s apart (Kitex's floor). A grpc-go
// or Kitex server's default policy, one ping per 5 minutes, answers more
// frequent pings on a silent connection with GOAWAY (too_many_pings) after
// two strikes and closes it; such a server's clients see their silent
// streams cut (and resumed). Config.Options may set another policy
// (server.WithGRPCKeepaliveEnforcementPolicy).
const KeepaliveMinTime = 5 * time.Second

// Config configures a Server. Its zero value is a working default.
type Config struct {
	// Grace is how long Serve lets calls in progress finish when it
	// stops; 0 means 5 seconds.
	Grace time.Duration
	// Options are extra Kitex server options, applied after the
	// binding's own (listener, exit wait time, exit signal, and the send
	// middleware that writes responses with internal/pbwire). Kitex's
	// send and receive middlewares see SendMessage's and
	// SendStreamingMessage's messages in the binding's own forms (the
	// answers already encoded, the requests read into the a2a model),
	// not as a2apb messages.
	Options []kserver.Option
	// TLS, when set, serves the service over TLS; "h2" is added to its
	// NextProtos, which HTTP/2 over TLS negotiates. A client certificate
	// it verifies (ClientAuth VerifyClientCertIfGiven or
	// RequireAndVerifyClientCert, with ClientCAs) reaches the Handler's
	// gate as auth.Credentials.PeerCertificates. nil serves plain HTTP/2.
	// Either runs on Go's net package, not Kitex's netpoll (transport.go
	// says why).
	TLS *tls.Config
	// MaxMessageBytes refuses a larger request message with
	// RESOURCE_EXHAUSTED before any of it is read, on a connection that
	// goes on serving its other calls; 0 means 8 MiB, as the JSON
	// bindings' body limit. Kitex has no such limit of its own (limit.go).
	MaxMessageBytes int
	Logger          *slog.Logger
}

// Server serves the A2A gRPC service over a server.Handler. It implements
// the generated a2apb.A2AService; Serve runs it on Kitex. It is safe for
// concurrent use.
type Server struct {
	h     *server.Handler
	grace time.Duration
	tls   *tls.Config
	max   uint32
	opts  []kserver.Option
	log   *slog.Logger
	enc   pbwire.Encoder
	bufs  pbwire.Buffers // for SendMessage's answers written directly
}

var _ a2apb.A2AService = (*Server)(nil)

// New returns a Server for h.
func New(h *server.Handler, cfg Config) (*Server, error) {
	if h == nil {
		return nil, errors.New("grpcserver: a Handler is required")
	}
	s := &Server{h: h, grace: cfg.Grace, tls: cfg.TLS, opts: cfg.Options, log: cfg.Logger}
	if s.grace <= 0 {
		s.grace = 5 * time.Second
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	switch {
	case cfg.MaxMessageBytes <= 0:
		s.max = 8 << 20
	case cfg.MaxMessageBytes >= math.MaxUint32:
		s.max = math.MaxUint32
	default:
		s.max = uint32(cfg.MaxMessageBytes)
	}
	return s, nil
}

// Serve serves the A2A service on ln with Kitex until ctx is done, then
// stops, giving calls in progress up to Config.Grace to finish. It does
// not close the Handler. Kitex's own handling of SIGINT and SIGTERM is
// replaced by ctx: stopping is the caller's decision.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	exit := make(chan error, 1)
	opts := []kserver.Option{
		kserver.WithListener(ln),
		kserver.WithExitWaitTime(s.grace),
		kserver.WithExitSignal(func() <-chan error { return exit }),
		// Every response, unary or streamed, goes out through pbwire
		// instead of prutal. Of Kitex's send middlewares only this
		// (deprecated) one sees the gRPC transport's messages.
		kserver.WithSendMiddleware(s.encodeWithPBWire),
		kserver.WithGRPCKeepaliveEnforcementPolicy(kgrpc.EnforcementPolicy{MinTime: KeepaliveMinTime, PermitWithoutStream: true}),
	}
	// Only gRPC: Kitex's protocol detection reads through netpoll.
	opts = append(opts, kserver.WithTransServerFactory(transportFactory{cfg: s.tls, max: s.max, log: s.log}),
		kserver.WithTransHandlerFactory(nphttp2.NewSvrTransHandlerFactory()))
	opts = append(opts, s.opts...)
	svr := kserver.NewServer(opts...)
	if err := svr.RegisterService(s.serviceInfo(), s); err != nil { // Kitex wants the handler as a pointer
		return fmt.Errorf("grpcserver: %w", err)
	}
	ran := make(chan error, 1)
	go func() { ran <- svr.Run() }()
	select {
	case err := <-ran:
		if err == nil {
			err = errors.New("the Kitex server stopped on its own")
		}
		return fmt.Errorf("grpcserver: serve: %w", err)
	case <-ctx.Done():
	}
	exit <- nil // Run stops the server and returns
	if err := <-ran; err != nil {
		return fmt.Errorf("grpcserver: stop: %w", err)
	}
	return nil
}

// serviceInfo is the generated service's, but for SendMessage and
// SendStreamingMessage, whose handlers on the gRPC transport read the
// request directly (pbconv.IncomingSendRequest) and, for SendMessage,
// write the Handler's answer directly (sendMessage, sendStreaming).
func (s *Server) serviceInfo() *serviceinfo.ServiceInfo {
	info := a2aservice.NewServiceInfo()
	for name, direct := range map[string]func(context.Context, streaming.Stream) error{
		"SendMessage":          s.sendMessage,
		"SendStreamingMessage": s.sendStreaming,
	} {
		gen := info.Methods[name]
		info.Methods[name] = serviceinfo.NewMethodInfo(
			func(ctx context.Context, handler, arg, result any) error {
				if a, ok := arg.(*streaming.Args); ok {
					return direct(ctx, a.Stream)
				}
				return gen.Handler()(ctx, handler, arg, result)
			},
			gen.NewArgs, gen.NewResult, gen.OneWay(), serviceinfo.WithStreamingMode(gen.StreamingMode()))
	}
	return info
}

// encodeWithPBWire has Kitex write each message the service sends with
// pbwire, which keeps set oneof members that hold zero values (an empty
// text part, a 0 or false in metadata) that prutal v0.1.3 drops. Stream
// items and SendMessage's answer come already encoded (pbconv's direct
// encoding, which keeps them too) and go out as they are.
func (s *Server) encodeWithPBWire(next endpoint.SendEndpoint) endpoint.SendEndpoint {
	return func(st streaming.Stream, msg any) error {
		if _, ok := msg.(pbwire.Encoded); ok {
			return next(st, msg)
		}
		return next(st, pbwire.Outgoing{Enc: &s.enc, Msg: msg})
	}
}

// begin starts the call's telemetry (server.Handler.Begin: the caller's
// trace context comes in the metadata), checks the call's metadata,
// passes the call through the Handler's gate, and attaches the call info
// and the caller to ctx. The caller ends the returned Call, whatever the
// error. The service is A2A 1.0 only: a call without a2a-version is taken
// as 1.0, one that names another version is refused. A refused caller's
// challenge goes back as the trailer www-authenticate.
func (s *Server) begin(ctx context.Context, method string) (context.Context, server.Call, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	ctx, call := s.h.Begin(ctx, a2a.BindingGRPC, method, mdCarrier(md))
	if ri := rpcinfo.GetRPCInfo(ctx); ri != nil {
		// Kitex (v0.16.1, http2_server.go:338) compresses the answers
		// with the first of the client's grpc-accept-encoding it has a
		// compressor for and fails the call when it has none, which is
		// every grpc-go client that links grpc's gzip package (as the
		// OpenTelemetry OTLP exporter does): the answers go out
		// uncompressed ("identity"; Kitex ignores ""), which every client
		// reads.
		remote.SetSendCompressor(ri, "identity")
	}
	if vs := md.Get(VersionKey); len(vs) > 0 && strings.TrimSpace(vs[0]) != "" {
		if v := majorMinor(vs[0]); v != a2a.Version {
			return ctx, call, a2a.Errorf(a2a.CodeVersionNotSupported, "A2A version %q is not supported on this gRPC service; it speaks %s", vs[0], a2a.Version)
		}
	}
	var exts []string
	for _, v := range md.Get(ExtensionsKey) {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				exts = append(exts, f)
			}
		}
	}
	ctx = server.WithCallInfo(ctx, server.CallInfo{ProtocolVersion: a2a.Version, Extensions: exts})
	if active := s.h.ActiveExtensions(ctx); len(active) > 0 {
		// The answer's headers name the extensions activated, as the
		// A2A-Extensions header does over HTTP.
		if err := nphttp2.SetHeader(ctx, metadata.Pairs(ExtensionsKey, strings.Join(active, ","))); err != nil {
			s.log.Debug("a2a: setting the a2a-extensions header failed", "err", err)
		}
	}
	if !s.h.Gated() {
		return ctx, call, nil
	}
	creds := auth.Credentials{Header: func(name string) string {
		if vs := md.Get(strings.ToLower(name)); len(vs) > 0 {
			return vs[0]
		}
		return ""
	}, PeerCertificates: peerCertificates(ctx)}
	if ri := rpcinfo.GetRPCInfo(ctx); ri != nil && ri.From() != nil && ri.From().Address() != nil {
		creds.Remote = ri.From().Address()
	}
	ctx, err := s.h.Admit(ctx, method, creds)
	if err == nil {
		return ctx, call, nil
	}
	if e := a2a.AsError(err); e.Challenge != "" {
		if terr := nphttp2.SetTrailer(ctx, metadata.Pairs("www-authenticate", e.Challenge)); terr != nil {
			s.log.Debug("a2a: setting the www-authenticate trailer failed", "err", terr)
		}
	}
	return ctx, call, err
}

// majorMinor reduces a version to Major.Minor; patch numbers do not count.
func majorMinor(v string) string {
	major, rest, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok {
		return major
	}
	minor, _, _ := strings.Cut(rest, ".")
	return major + "." + minor
}

// invalid reports a request that does not convert to the model.
func invalid(err error) error {
	return a2a.Errorf(a2a.CodeInvalidParams, "%v", err)
}

// unary runs a unary RPC: checks the metadata, converts the request, calls
// the Handler and converts the result, turning any error into a status.
func unary[Req, In, Out, Resp any](s *Server, ctx context.Context, method string, req Req,
	from func(Req) (In, error), handle func(context.Context, In) (Out, error), to func(Out) (Resp, error),
) (Resp, error) {
	ctx, call, err := s.begin(ctx, method)
	var resp Resp
	if err == nil {
		resp, err = serveUnary(ctx, req, from, handle, to)
	}
	call.End(err)
	if err != nil {
		var zero Resp
		return zero, statusError(s.log, method, err)
	}
	return resp, nil
}

// serveUnary is unary's work once the call is admitted; its error is the
// one the call is answered with.
func serveUnary[Req, In, Out, Resp any](ctx context.Context, req Req,
	from func(Req) (In, error), handle func(context.Context, In) (Out, error), to func(Out) (Resp, error),
) (Resp, error) {
	var zero Resp
	in, err := from(req)
	if err != nil {
		return zero, invalid(err)
	}
	out, err := handle(ctx, in)
	if err != nil {
		return zero, err
	}
	resp, err := to(out)
	if err != nil {
		return zero, fmt.Errorf("encode the result: %w", err)
	}
	return resp, nil
}

// noErr lifts a conversion that cannot fail.
func noErr[A, B any](f func(A) B) func(A) (B, error) {
	return func(a A) (B, error) { return f(a), nil }
}

// stream sends a streaming RPC's events as the Handler yields them. An
// error ends the stream with its status. A client that goes away ends the
// stream too; the task goes on, and the client can subscribe again.
//
// The response header FirstEventIDKey numbers the events: first, when not
// 0, is the first event's sequence number known before the Handler yields
// it, and goes out at once, so that a client waiting for a slow first
// event hears from the server; otherwise the first event's own goes with
// it. A direct message reply has none.
//
// Each event is written directly from the model (pbconv.AppendEvent) into
// a buffer the stream reuses, rather than converted to a2apb and written
// by pbwire: the same bytes, without the copy.
//
// The stream's end ends call: with the error the stream ends with, or
// none when it ended with its last event or its client went away.
func (s *Server) stream(call server.Call, method string, st streaming.Stream, first uint64, events iter.Seq2[eventlog.Entry, error]) error {
	// What the loop changes, in one variable: the loop's body is a
	// closure, and each variable it changes would be an allocation of its
	// own.
	var loop struct {
		headed bool
		buf    []byte
		failed error // what the stream ends with, for call
	}
	defer func() { call.End(loop.failed) }()
	if loop.headed = first > 0; loop.headed {
		if err := st.SendHeader(metadata.Pairs(FirstEventIDKey, strconv.FormatUint(first, 10))); err != nil {
			s.log.Debug("a2a: gRPC stream client went away", "method", method, "err", err)
			return err
		}
	}
	for e, err := range events {
		if err != nil {
			loop.failed = err
			return statusError(s.log, method, err)
		}
		if !loop.headed && e.Seq > 0 {
			if err := st.SetHeader(metadata.Pairs(FirstEventIDKey, strconv.FormatUint(e.Seq, 10))); err != nil {
				loop.failed = fmt.Errorf("set the response header: %w", err)
				return statusError(s.log, method, loop.failed)
			}
		}
		loop.headed = true
		loop.buf, err = pbconv.AppendEvent(loop.buf[:0], e.Event)
		if err != nil {
			loop.failed = fmt.Errorf("encode an event: %w", err)
			return statusError(s.log, method, loop.failed)
		}
		if err := st.SendMsg(pbwire.Encoded(loop.buf)); err != nil {
			s.log.Debug("a2a: gRPC stream client went away", "method", method, "err", err)
			return err
		}
	}
	return nil
}

// SendMessage implements a2apb.A2AService. Served by Kitex over gRPC,
// the call goes to sendMessage instead, which does the same but writes
// the answer directly.
func (s *Server) SendMessage(ctx context.Context, req *a2apb.SendMessageRequest) (*a2apb.SendMessageResponse, error) {
	return unary(s, ctx, "SendMessage", req, pbconv.SendRequestFromPB, s.h.SendMessage, pbconv.SendResponseToPB)
}

// growStack grows the stack of the goroutine Kitex runs a call on before
// the call goes deep (Kitex's receiving, the Handler, the stream's
// iterator), where each growth copies and adjusts every frame. Kitex runs
// calls on pooled goroutines whose stacks the garbage collector shrinks
// between calls, so a streaming call grew its stack several times over:
// under a2aload hops, 11 % of a gRPC leaf's CPU was spent in
// runtime.newstack against 5 % of a JSON-RPC one's.
//
//go:noinline
func growStack() {
	var pad [24 << 10]byte
	touch(pad[:])
}

//go:noinline
func touch([]byte) {}

// sendMessage serves SendMessage on st, a gRPC call's stream: it reads
// the request directly into the model (pbconv.IncomingSendRequest), calls
// the Handler and sends its answer written directly from the model
// (pbconv.AppendSendResponse), the bytes pbwire writes for SendMessage's
// a2apb answer.
func (s *Server) sendMessage(ctx context.Context, st streaming.Stream) error {
	growStack()
	req := new(pbconv.IncomingSendRequest)
	if err := st.RecvMsg(req); err != nil {
		return err
	}
	buf := s.bufs.Get()
	defer s.bufs.Put(buf)
	b, err := unary(s, ctx, "SendMessage", req, (*pbconv.IncomingSendRequest).Request, s.h.SendMessage,
		func(ev a2a.Event) ([]byte, error) { return pbconv.AppendSendResponse(*buf, ev) })
	if err != nil {
		return err
	}
	*buf = b
	return st.SendMsg(pbwire.Encoded(b))
}

// sendStreaming serves SendStreamingMessage on st, a gRPC call's stream,
// with the request read directly into the model.
func (s *Server) sendStreaming(_ context.Context, st streaming.Stream) error {
	growStack()
	req := new(pbconv.IncomingSendRequest)
	if err := st.RecvMsg(req); err != nil {
		return err
	}
	return s.streamSend(st.Context(), st, req.Request)
}

// SendStreamingMessage implements a2apb.A2AService. Served by Kitex over
// gRPC, the call goes to sendStreaming instead, which does the same but
// reads the request directly.
func (s *Server) SendStreamingMessage(req *a2apb.SendMessageRequest, stream a2apb.A2AService_SendStreamingMessageServer) error {
	return s.streamSend(stream.Context(), stream, func() (*a2a.SendMessageRequest, error) { return pbconv.SendRequestFromPB(req) })
}

// streamSend serves SendStreamingMessage on st for the request req
// returns.
func (s *Server) streamSend(ctx context.Context, st streaming.Stream, req func() (*a2a.SendMessageRequest, error)) error {
	const method = "SendStreamingMessage"
	ctx, call, err := s.begin(ctx, method)
	if err != nil {
		call.End(err)
		return statusError(s.log, method, err)
	}
	r, err := req()
	if err != nil {
		err = invalid(err)
		call.End(err)
		return statusError(s.log, method, err)
	}
	// A new task's events are numbered from 1: say so before the agent
	// produces the first, which may take long.
	var first uint64
	if r.Message != nil && r.Message.TaskID == "" {
		first = 1
	}
	return s.stream(call, method, st, first, s.h.SendStreamingMessage(ctx, r))
}

// SubscribeToTask implements a2apb.A2AService. Without LastEventIDKey in
// the request metadata it starts with the task's current snapshot; with
// it, it continues after that event, as the Last-Event-ID header does on
// the JSON bindings.
func (s *Server) SubscribeToTask(req *a2apb.SubscribeToTaskRequest, stream a2apb.A2AService_SubscribeToTaskServer) error {
	const method = "SubscribeToTask"
	ctx, call, err := s.begin(stream.Context(), method)
	if err != nil {
		call.End(err)
		return statusError(s.log, method, err)
	}
	var lastEventID string
	if md, _ := metadata.FromIncomingContext(stream.Context()); len(md.Get(LastEventIDKey)) > 0 {
		lastEventID = md.Get(LastEventIDKey)[0]
	}
	// After event N comes N+1: the header can go before it, which may
	// be long in coming.
	var first uint64
	if n, err := strconv.ParseUint(strings.TrimSpace(lastEventID), 10, 64); err == nil {
		first = n + 1
	}
	r := &a2a.SubscribeToTaskRequest{Tenant: req.Tenant, ID: req.Id}
	return s.stream(call, method, stream, first, s.h.SubscribeToTask(ctx, r, lastEventID))
}

// GetTask implements a2apb.A2AService.
func (s *Server) GetTask(ctx context.Context, req *a2apb.GetTaskRequest) (*a2apb.Task, error) {
	return unary(s, ctx, "GetTask", req, noErr(pbconv.GetTaskRequestFromPB), s.h.GetTask, pbconv.TaskToPB)
}

// ListTasks implements a2apb.A2AService.
func (s *Server) ListTasks(ctx context.Context, req *a2apb.ListTasksRequest) (*a2apb.ListTasksResponse, error) {
	return unary(s, ctx, "ListTasks", req, pbconv.ListTasksRequestFromPB, s.h.ListTasks, pbconv.ListTasksResponseToPB)
}

// CancelTask implements a2apb.A2AService.
func (s *Server) CancelTask(ctx context.Context, req *a2apb.CancelTaskRequest) (*a2apb.Task, error) {
	return unary(s, ctx, "CancelTask", req, noErr(func(r *a2apb.CancelTaskRequest) *a2a.CancelTaskRequest {
		return &a2a.CancelTaskRequest{Tenant: r.Tenant, ID: r.Id, Metadata: pbconv.StructFromPB(r.Metadata)}
	}), s.h.CancelTask, pbconv.TaskToPB)
}

// CreateTaskPushNotificationConfig implements a2apb.A2AService.
func (s *Server) CreateTaskPushNotificationConfig(ctx context.Context, req *a2apb.TaskPushNotificationConfig) (*a2apb.TaskPushNotificationConfig, error) {
	return unary(s, ctx, "CreateTaskPushNotificationConfig", req, noErr(pbconv.PushConfigFromPB),
		s.h.CreateTaskPushNotificationConfig, noErr(pbconv.PushConfigToPB))
}

// GetTaskPushNotificationConfig implements a2apb.A2AService.
func (s *Server) GetTaskPushNotificationConfig(ctx context.Context, req *a2apb.GetTaskPushNotificationConfigRequest) (*a2apb.TaskPushNotificationConfig, error) {
	return unary(s, ctx, "GetTaskPushNotificationConfig", req,
		noErr(func(r *a2apb.GetTaskPushNotificationConfigRequest) *a2a.GetTaskPushNotificationConfigRequest {
			return &a2a.GetTaskPushNotificationConfigRequest{Tenant: r.Tenant, TaskID: r.TaskId, ID: r.Id}
		}), s.h.GetTaskPushNotificationConfig, noErr(pbconv.PushConfigToPB))
}

// ListTaskPushNotificationConfigs implements a2apb.A2AService.
func (s *Server) ListTaskPushNotificationConfigs(ctx context.Context, req *a2apb.ListTaskPushNotificationConfigsRequest) (*a2apb.ListTaskPushNotificationConfigsResponse, error) {
	return unary(s, ctx, "ListTaskPushNotificationConfigs", req,
		noErr(func(r *a2apb.ListTaskPushNotificationConfigsRequest) *a2a.ListTaskPushNotificationConfigsRequest {
			return &a2a.ListTaskPushNotificationConfigsRequest{Tenant: r.Tenant, TaskID: r.TaskId, PageSize: int(r.PageSize), PageToken: r.PageToken}
		}), s.h.ListTaskPushNotificationConfigs, noErr(pbconv.ListPushConfigsResponseToPB))
}

// DeleteTaskPushNotificationConfig implements a2apb.A2AService.
func (s *Server) DeleteTaskPushNotificationConfig(ctx context.Context, req *a2apb.DeleteTaskPushNotificationConfigRequest) (*emptypb.Empty, error) {
	return unary(s, ctx, "DeleteTaskPushNotificationConfig", req,
		noErr(func(r *a2apb.DeleteTaskPushNotificationConfigRequest) *a2a.DeleteTaskPushNotificationConfigRequest {
			return &a2a.DeleteTaskPushNotificationConfigRequest{Tenant: r.Tenant, TaskID: r.TaskId, ID: r.Id}
		}), func(ctx context.Context, r *a2a.DeleteTaskPushNotificationConfigRequest) (struct{}, error) {
			return struct{}{}, s.h.DeleteTaskPushNotificationConfig(ctx, r)
		}, noErr(func(struct{}) *emptypb.Empty { return new(emptypb.Empty) }))
}

// GetExtendedAgentCard implements a2apb.A2AService.
func (s *Server) GetExtendedAgentCard(ctx context.Context, req *a2apb.GetExtendedAgentCardRequest) (*a2apb.AgentCard, error) {
	return unary(s, ctx, "GetExtendedAgentCard", req,
		noErr(func(r *a2apb.GetExtendedAgentCardRequest) *a2a.GetExtendedAgentCardRequest {
			return &a2a.GetExtendedAgentCardRequest{Tenant: r.Tenant}
		}), s.h.GetExtendedAgentCard, pbconv.CardToPB)
}
