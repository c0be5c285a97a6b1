package jsonrpcserver

import (
	"context"
	"encoding/json"
	"iter"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
	"github.com/cloudwego/hertz/pkg/protocol/sse"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// serveStream answers a streaming method with Server-Sent Events. Each
// event's data is a JSON-RPC response carrying the request id; its SSE id is
// the event's sequence number in the task, which a client can send back as
// Last-Event-ID to resume. Errors, including those found before the first
// event, are sent as an event too: streaming clients read only events.
func (s *Server) serveStream(ctx context.Context, c *app.RequestContext, op jsonrpc.Op, version string, id json.RawMessage, params json.RawMessage) {
	events := s.streamEvents(ctx, c, op, version, params)
	// Events that are ready together go out together: the writer holds
	// back the flush of an event the log says is followed at once.
	bw := &batchWriter{ExtWriter: resp.NewChunkedBodyWriter(&c.Response, c.GetWriter())}
	c.Response.HijackWriter(bw)
	defer func() {
		if bw.hold.Swap(false) { // the stream ended on a held event
			_ = bw.Flush()
		}
	}()
	w := sse.NewWriter(c)
	// Keep-alive comments hold idle connections open through proxies and
	// reveal a client that went away. The writer serializes writes.
	stop := make(chan struct{})
	keepAliveDone := make(chan struct{})
	go func() {
		defer close(keepAliveDone)
		t := time.NewTicker(s.opts.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if w.WriteKeepAlive() != nil {
					return
				}
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		close(stop)
		<-keepAliveDone
	}()

	buf := make([]byte, 0, 1024)
	for e, err := range events {
		if err != nil {
			buf = jsonrpc.AppendError(buf[:0], id, s.protocolError(op, err), version)
			if werr := w.WriteEvent("", "", buf); werr != nil {
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
		bw.hold.Store(e.More)
		if err := w.WriteEvent(sseID, "", buf); err != nil {
			// The client went away. The task goes on; it can resubscribe.
			s.log.Debug("a2a: stream client went away", "err", err)
			return
		}
	}
}

// batchWriter is the body writer of an event stream; while hold is set,
// flushes wait for a later write.
type batchWriter struct {
	network.ExtWriter
	hold atomic.Bool
}

func (w *batchWriter) Flush() error {
	if w.hold.Load() {
		return nil
	}
	return w.ExtWriter.Flush()
}

// streamEvents decodes a streaming call and starts it.
func (s *Server) streamEvents(ctx context.Context, c *app.RequestContext, op jsonrpc.Op, version string, params json.RawMessage) iter.Seq2[eventlog.Entry, error] {
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
	return s.h.SubscribeToTask(ctx, &req, string(c.Request.Header.Peek(sse.LastEventIDHeader)))
}
