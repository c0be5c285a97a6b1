package client

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/telemetry"
)

// withTrace returns the headers of a call made in ctx: h, and, when ctx
// has a span, its trace context as the propagator of the Telemetry ctx
// carries writes it (telemetry.FromContext; W3C traceparent, tracestate
// and baggage when ctx carries none), so that the agent's spans join the
// caller's trace whatever the binding (gRPC sends the headers as
// metadata). A call in a context without a span costs a context lookup. h
// is not changed.
func withTrace(ctx context.Context, h http.Header) http.Header {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return h
	}
	out := h.Clone()
	if out == nil {
		out = make(http.Header, 2)
	}
	telemetry.FromContext(ctx).Propagator().Inject(ctx, propagation.HeaderCarrier(out))
	return out
}
