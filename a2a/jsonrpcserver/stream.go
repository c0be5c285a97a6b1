package jsonrpcserver

import (
	"context"
	"encoding/json"
	"iter"

	"github.com/cloudwego/hertz/pkg/protocol/sse"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/internal/httpbind"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// serveStream answers a streaming method with the Server-Sent Events of
// events, which streamEvents made. Each event's data is a JSON-RPC
// response carrying the request id; its SSE id is the event's sequence
// number in the task, which a client can send back as Last-Event-ID to
// resume. Errors, including those found before the first
// event, are sent as an event too: streaming clients read only events.
// It returns the error the stream ended with; nil when it ended with its
// last event, or when its client went away.
func (s *Server) serveStream(ctx context.Context, c httpbind.Exchange, op jsonrpc.Op, version string, id json.RawMessage, events iter.Seq2[eventlog.Entry, error]) error {
	w := wireOf(version)
	ew := httpbind.NewEventWriter(c, s.opts.KeepAlive)
	defer ew.Close()
	// What the loop's body changes, in one variable: the body is a
	// closure, and each variable it changes is an allocation of its own.
	loop := struct {
		end    httpbind.StreamEnd
		buf    []byte
		failed error // what the stream ends with
	}{end: httpbind.NewStreamEnd(op == jsonrpc.OpSubscribeToTask, c.Header(sse.LastEventIDHeader)), buf: make([]byte, 0, 1024)}
	for e, err := range events {
		if err != nil {
			pe := server.ProtocolError(s.log, op.String(), err)
			httpbind.SetErrorHeaders(c, pe) // written with the headers, if they have not been
			loop.buf = jsonrpc.AppendError(loop.buf[:0], id, pe, version)
			if werr := ew.Event("", "", loop.buf, true); werr != nil {
				s.log.Debug("a2a: writing a stream error failed", "err", werr)
			}
			loop.failed = pe
			break
		}
		loop.buf, err = jsonrpc.AppendResult(loop.buf[:0], id, w.event(e.Event))
		if err != nil {
			s.log.Error("a2a: encoding a stream event failed", "err", err)
			loop.failed = a2a.Errorf(a2a.CodeInternal, "internal error: an event could not be encoded")
			break
		}
		if err := ew.Event(httpbind.EventID(e.Seq), "", loop.buf, loop.end.Last(e.Event)); err != nil {
			// The client went away. The task goes on; it can resubscribe.
			s.log.Debug("a2a: stream client went away", "err", err)
			break
		}
	}
	return loop.failed
}

// streamEvents decodes a streaming call and starts it.
func (s *Server) streamEvents(ctx context.Context, c httpbind.Exchange, op jsonrpc.Op, w wire, params json.RawMessage) iter.Seq2[eventlog.Entry, error] {
	fail := func(err error) iter.Seq2[eventlog.Entry, error] {
		return func(yield func(eventlog.Entry, error) bool) { yield(eventlog.Entry{}, err) }
	}
	if op == jsonrpc.OpSendStreamingMessage {
		req, err := w.sendMessage(params)
		if err != nil {
			return fail(err)
		}
		return s.h.SendStreamingMessage(ctx, req)
	}
	req, err := w.subscribeToTask(params)
	if err != nil {
		return fail(err)
	}
	return s.h.SubscribeToTask(ctx, req, string(c.Header(sse.LastEventIDHeader)))
}
