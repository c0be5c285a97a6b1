package jsonrpcserver

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"

	"github.com/cloudwego/hertz/pkg/protocol/sse"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/internal/httpbind"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// serveStream answers a streaming method with Server-Sent Events. Each
// event's data is a JSON-RPC response carrying the request id; its SSE id is
// the event's sequence number in the task, which a client can send back as
// Last-Event-ID to resume. Errors, including those found before the first
// event, are sent as an event too: streaming clients read only events.
func (s *Server) serveStream(ctx context.Context, c httpbind.Exchange, op jsonrpc.Op, version string, id json.RawMessage, params json.RawMessage) {
	events := s.streamEvents(ctx, c, op, version, params)
	w := httpbind.NewEventWriter(c, s.opts.KeepAlive)
	defer w.Close()

	buf := make([]byte, 0, 1024)
	for e, err := range events {
		if err != nil {
			pe := server.ProtocolError(s.log, op.String(), err)
			httpbind.SetRetryAfter(c, pe) // written with the headers, if they have not been
			buf = jsonrpc.AppendError(buf[:0], id, pe, version)
			if werr := w.Event("", "", buf, true); werr != nil {
				s.log.Debug("a2a: writing a stream error failed", "err", werr)
			}
			return
		}
		var result any
		if version == a2a.Version03 {
			result = a2av03.FromEvent(e.Event)
		} else {
			result = a2a.Wrap(e.Event)
		}
		buf, err = jsonrpc.AppendResult(buf[:0], id, result)
		if err != nil {
			s.log.Error("a2a: encoding a stream event failed", "err", err)
			return
		}
		var sseID string
		if e.Seq > 0 {
			sseID = strconv.FormatUint(e.Seq, 10)
		}
		if err := w.Event(sseID, "", buf, httpbind.EndsStream(e.Event)); err != nil {
			// The client went away. The task goes on; it can resubscribe.
			s.log.Debug("a2a: stream client went away", "err", err)
			return
		}
	}
}

// streamEvents decodes a streaming call and starts it.
func (s *Server) streamEvents(ctx context.Context, c httpbind.Exchange, op jsonrpc.Op, version string, params json.RawMessage) iter.Seq2[eventlog.Entry, error] {
	fail := func(err error) iter.Seq2[eventlog.Entry, error] {
		return func(yield func(eventlog.Entry, error) bool) { yield(eventlog.Entry{}, err) }
	}
	if op == jsonrpc.OpSendStreamingMessage {
		req, err := decodeSend(version, params)
		if err != nil {
			return fail(err)
		}
		return s.h.SendStreamingMessage(ctx, req)
	}
	var req a2a.SubscribeToTaskRequest
	if version == a2a.Version03 {
		var p a2av03.TaskIDParams
		if err := jsonrpc.DecodeParams(params, &p); err != nil {
			return fail(err)
		}
		req.ID = p.ID
	} else if err := jsonrpc.DecodeParams(params, &req); err != nil {
		return fail(err)
	}
	return s.h.SubscribeToTask(ctx, &req, string(c.Header(sse.LastEventIDHeader)))
}
