package grpcclient_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// TestTraceContextAsMetadata: on gRPC, a call made in a context with a
// span carries the span's W3C trace context as request metadata
// (traceparent), unary calls and streams alike; a call without one
// carries none.
func TestTraceContextAsMetadata(t *testing.T) {
	f := serve(t, nil, server.Config{})
	c := dial(t, f.addr, "", client.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traced := trace.ContextWithSpanContext(ctx, sc)

	if _, err := c.SendMessage(traced, sendReq("unary")); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if _, err := collect(c.SendStreamingMessage(traced, sendReq("streamed"))); err != nil {
		t.Fatalf("stream: %v", err)
	}
	for _, m := range []string{"SendMessage", "SendStreamingMessage"} {
		calls := f.rec.of(m)
		if len(calls) != 1 {
			t.Fatalf("the server recorded %d %s calls", len(calls), m)
		}
		if got := calls[0].MD.Get("traceparent"); len(got) != 1 || got[0] != want {
			t.Errorf("%s carried traceparent %q, want %q", m, got, want)
		}
	}

	if _, err := c.SendMessage(ctx, sendReq("untraced")); err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	calls := f.rec.of("SendMessage")
	if got := calls[len(calls)-1].MD.Get("traceparent"); len(got) != 0 {
		t.Errorf("a call without a span carried traceparent %q", got)
	}
}
