package natsstore

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// headerCarrier carries trace context in a message's headers, under the
// propagator's own keys ("traceparent", ...): NATS headers are
// case-sensitive, and the propagators of other languages read these keys.
type headerCarrier nats.Header

func (c headerCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c headerCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c headerCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// withTrace writes the trace context of ctx into h, when ctx has a span;
// an event's message says so which trace (which request) it belongs to.
func withTrace(ctx context.Context, prop propagation.TextMapPropagator, h nats.Header) {
	if trace.SpanContextFromContext(ctx).IsValid() {
		prop.Inject(ctx, headerCarrier(h))
	}
}

// traceIDOf returns the trace id (32 hex digits) of the W3C trace context
// in h; "" if there is none.
func traceIDOf(h nats.Header) string {
	if h.Get("traceparent") == "" {
		return ""
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), headerCarrier(h)))
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}
