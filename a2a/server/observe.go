package server

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/telemetry"
)

// The attributes of the Handler's spans.
const (
	attrBinding   = attribute.Key("a2a.binding")
	attrMethod    = attribute.Key("a2a.method")
	attrError     = attribute.Key("a2a.error")
	attrTaskID    = attribute.Key("a2a.task.id")
	attrContextID = attribute.Key("a2a.context.id")
	attrState     = attribute.Key("a2a.task.state")
)

// RunSpanName is the name of the span of an agent run on a task, a child
// of the span of the request that started it.
const RunSpanName = "a2a.run"

// serverKind is the request spans' kind, made once: an option is an
// interface, and making it boxes the kind (an allocation a request).
var serverKind = trace.WithSpanKind(trace.SpanKindServer)

// unknownMethod stands for the method of a request that did not name one
// the binding knows, in metrics and span names: what it named is the
// client's, unbounded.
const unknownMethod = "unknown"

// Call is one request a binding serves, as the Handler's telemetry sees
// it: a span (when spans are recorded) and, at its end, the request
// metrics. Begin makes it, End ends it; its zero value, which Begin
// returns when the Handler has no Telemetry, does nothing.
type Call struct {
	tel     *telemetry.Telemetry
	binding string
	method  string
	start   time.Time
	span    trace.Span // nil when spans are not recorded
}

// Begin starts a request on binding (a2a.BindingJSONRPC, BindingHTTPJSON,
// BindingGRPC) for the A2A method (its 1.0 name; "" while the binding has
// not read it: SetMethod names it later). The returned context carries
// the request's span, a child of the caller's span when carrier (the
// request's HTTP headers or gRPC metadata) has W3C trace context: serve
// the request with it, so that the task runs it starts are that span's
// children. The binding calls End exactly once, when it has answered; for
// a stream, when the stream ends. Begin comes before the gate (Admit), so
// that refused requests are counted too.
//
// Without a Telemetry Begin does nothing; without recorded spans it only
// notes the time: carrier is read only when spans are recorded.
func (h *Handler) Begin(ctx context.Context, binding, method string, carrier propagation.TextMapCarrier) (context.Context, Call) {
	if h.tel == nil {
		return ctx, Call{}
	}
	c := Call{tel: h.tel, binding: binding, method: method, start: time.Now()}
	if !h.tel.Tracing() {
		return ctx, c
	}
	if carrier != nil {
		ctx = h.tel.Propagator().Extract(ctx, carrier)
	}
	name := method
	if name == "" {
		name = unknownMethod
	}
	ctx, c.span = h.tel.Tracer().Start(ctx, name, serverKind,
		trace.WithAttributes(attrBinding.String(binding), attrMethod.String(name)))
	return ctx, c
}

// SetMethod names the request's A2A method once the binding has read it.
func (c *Call) SetMethod(method string) {
	c.method = method
	if c.span != nil {
		c.span.SetName(method)
		c.span.SetAttributes(attrMethod.String(method))
	}
}

// End records the request's end: err is what it was answered with (nil
// for success, an *a2a.Error otherwise; another error counts as an
// internal error, as ProtocolError answers it). A stream that ends
// because its client went away has not failed.
func (c Call) End(err error) {
	if c.tel == nil {
		return
	}
	code := ErrorName(err)
	method := c.method
	if method == "" {
		method = unknownMethod
	}
	c.tel.Request(c.binding, method, code, time.Since(c.start))
	if c.span != nil {
		if err != nil {
			c.span.SetAttributes(attrError.String(code))
			c.span.SetStatus(codes.Error, code)
		}
		c.span.End()
	}
}

// ErrorName is how telemetry names the result of a request that ended
// with err: "OK" for nil, else the A2A error's name (a2a.ErrorCode's
// Reason, such as "TASK_NOT_FOUND"); an error that is not an *a2a.Error
// is an internal error, "INTERNAL_ERROR", and an A2A code without a name
// (one a peer made up) is "UNKNOWN".
func ErrorName(err error) string {
	if err == nil {
		return "OK"
	}
	// What the bindings answer with is an *a2a.Error itself; errors.As,
	// for the others, costs an allocation.
	if e, ok := err.(*a2a.Error); ok {
		return codeName(e.Code)
	}
	var e *a2a.Error
	if errors.As(err, &e) {
		return codeName(e.Code)
	}
	return a2a.CodeInternal.Reason()
}

func codeName(c a2a.ErrorCode) string {
	if r := c.Reason(); r != "" {
		return r
	}
	return "UNKNOWN"
}

// noteTask names the task a request is about on its span.
func (h *Handler) noteTask(ctx context.Context, taskID, contextID string) {
	if !h.tel.Tracing() {
		return
	}
	span := trace.SpanFromContext(ctx)
	// One call: each grows the span's attributes.
	if contextID != "" {
		span.SetAttributes(attrTaskID.String(taskID), attrContextID.String(contextID))
	} else {
		span.SetAttributes(attrTaskID.String(taskID))
	}
}

// observeRun gives r, about to be launched for the request of ctx, its
// telemetry: its context carries the Telemetry (for the agent's model and
// tool calls) and names the task (for the log, telemetry.LogHandler), and
// when spans are recorded the run has a span, a child of the request's.
func (h *Handler) observeRun(ctx context.Context, r *run) {
	if h.tel == nil {
		return
	}
	id, contextID := r.req.TaskID, r.req.ContextID
	rctx := telemetry.WithTask(telemetry.NewContext(r.ctx, h.tel), id, contextID)
	if h.tel.Tracing() {
		h.noteTask(ctx, id, contextID)
		_, r.span = h.tel.Tracer().Start(ctx, RunSpanName,
			trace.WithAttributes(attrTaskID.String(id), attrContextID.String(contextID)))
		rctx = trace.ContextWithSpan(rctx, r.span)
	}
	r.ctx = rctx
}

// endSpan ends the run's span: outcome is why the run stopped (nil when
// its task settled or it replied).
func (r *run) endSpan(outcome error) {
	if r.span == nil {
		return
	}
	if outcome != nil && !errors.Is(outcome, errTaskEnded) {
		r.span.SetStatus(codes.Error, outcome.Error())
	}
	if r.final != nil {
		r.span.SetAttributes(attrState.String(string(r.final.Status.State)))
	}
	r.span.End()
	r.span = nil
}

// noteCommit records evs committed to a task that was in state was
// ("" for a new task): the events, and each state the task reached.
func (h *Handler) noteCommit(was a2a.TaskState, evs []a2a.Event) {
	if h.tel == nil {
		return
	}
	h.tel.Events(len(evs))
	for _, ev := range evs {
		if s, ok := a2a.StateOf(ev); ok && s != was {
			h.tel.TaskState(string(s))
			was = s
		}
	}
}
