// Package telemetry is how a2amesh reports what it does: OpenTelemetry
// spans for every A2A request, task run, agent run, model and tool call,
// transfer and remote hop, with W3C trace context carried across processes;
// Prometheus metrics served at /metrics; and log records that name the
// trace, the task and the conversation they belong to.
//
// A *Telemetry is made once per process (or per server) and handed to what
// reports through it: serve.Config.Telemetry, and from there to the A2A
// handler, the bridge and the stores; a run's context carries it
// (NewContext, FromContext) to the agent kit's model and tool calls. The
// nil *Telemetry reports nothing and costs a nil check.
//
// This package uses only the OpenTelemetry API: without a tracer provider
// of the SDK behind it (package telemetry/otlp makes one from the standard
// OTEL_* environment variables) spans are not recorded.
package telemetry

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentation names the tracer a2amesh's spans come from.
const instrumentation = "github.com/a2amesh/a2amesh"

// Config says where a Telemetry reports. The zero Config records no spans
// and keeps metrics in a registry of its own.
type Config struct {
	// TracerProvider makes the spans; nil: none are recorded.
	TracerProvider trace.TracerProvider
	// Propagator carries trace context across processes (HTTP headers,
	// gRPC metadata, NATS message headers); nil: W3C trace context and
	// baggage.
	Propagator propagation.TextMapPropagator
	// Registry is where the metrics are registered; nil: a new registry
	// that also has the Go runtime's and the process's collectors.
	Registry *prometheus.Registry
}

// Telemetry reports spans and metrics. Its methods are safe for concurrent
// use, and on the nil *Telemetry they do nothing.
type Telemetry struct {
	tracer   trace.Tracer
	recorded bool // the provider records spans: not a no-op one
	prop     propagation.TextMapPropagator
	registry *prometheus.Registry
	metrics  *metrics
}

// New makes a Telemetry as cfg says. It fails only if the registry already
// has collectors of the names a2amesh uses.
func New(cfg Config) (*Telemetry, error) {
	t := &Telemetry{prop: cfg.Propagator, registry: cfg.Registry}
	if cfg.TracerProvider == nil {
		t.tracer = noop.NewTracerProvider().Tracer(instrumentation)
	} else {
		t.tracer = cfg.TracerProvider.Tracer(instrumentation)
		_, isNoop := cfg.TracerProvider.(noop.TracerProvider)
		t.recorded = !isNoop
	}
	if t.prop == nil {
		t.prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if t.registry == nil {
		t.registry = prometheus.NewRegistry()
		t.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m, err := newMetrics(t.registry)
	if err != nil {
		return nil, err
	}
	t.metrics = m
	return t, nil
}

// Tracer returns the tracer a2amesh's spans come from; a no-op one for the
// nil *Telemetry.
func (t *Telemetry) Tracer() trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer(instrumentation)
	}
	return t.tracer
}

// Tracing reports whether spans are recorded, so that a caller can skip
// work (attributes, carriers) that only a recorded span needs.
func (t *Telemetry) Tracing() bool { return t != nil && t.recorded }

// Propagator returns what carries trace context across processes; W3C
// trace context and baggage for the nil *Telemetry.
func (t *Telemetry) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	return t.prop
}

// Registry returns the registry the metrics are in; nil for the nil
// *Telemetry.
func (t *Telemetry) Registry() *prometheus.Registry {
	if t == nil {
		return nil
	}
	return t.registry
}

type contextKey struct{}

// NewContext returns a copy of ctx that carries t, for code that reports
// through it without being configured with it (the agent kit's model and
// tool calls in a run).
func NewContext(ctx context.Context, t *Telemetry) context.Context {
	return context.WithValue(ctx, contextKey{}, t)
}

// FromContext returns the Telemetry ctx carries; nil (reporting nothing)
// if none.
func FromContext(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(contextKey{}).(*Telemetry)
	return t
}
