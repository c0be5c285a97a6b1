package bridge

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/telemetry"
)

// Attributes of a remote hop's span.
const (
	attrAgent  = attribute.Key("a2amesh.agent.name")
	attrMethod = attribute.Key("rpc.method")
	attrURL    = attribute.Key("url.full")
	attrTask   = attribute.Key("a2amesh.remote.task_id")
)

// hop starts one call of a run to the remote agent, reported through the
// Telemetry of the run's context (telemetry.FromContext; the server puts
// it there): a client span "remote agent <name>", the parent of the
// agent's own spans in the trace (the client sends its context along), and
// the call's duration and result code in the remote-agent metric. end
// takes the remote task's id, once known, and what the call failed with.
// Without tracing there is no span and ctx is returned as it is, so that
// a trace the run is part of still reaches the agent.
func (r *RemoteAgent) hop(ctx context.Context, method string) (_ context.Context, end func(taskID string, err error)) {
	tel := telemetry.FromContext(ctx)
	if tel == nil {
		return ctx, func(string, error) {}
	}
	start := time.Now()
	var span trace.Span
	if tel.Tracing() {
		ctx, span = tel.Tracer().Start(ctx, "remote agent "+r.name, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attrAgent.String(r.name), attrMethod.String(method), attrURL.String(r.url)))
	}
	return ctx, func(taskID string, err error) {
		code := "OK"
		if err != nil {
			if code = a2a.AsError(err).Code.Reason(); code == "" {
				code = "ERROR"
			}
		}
		tel.Remote(r.name, method, code, time.Since(start))
		if span == nil {
			return
		}
		if taskID != "" {
			span.SetAttributes(attrTask.String(taskID))
		}
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, code)
		}
		span.End()
	}
}
