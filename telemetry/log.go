package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// The attributes LogHandler adds to a record.
const (
	TraceIDKey   = "trace_id"
	SpanIDKey    = "span_id"
	TaskIDKey    = "task_id"
	ContextIDKey = "context_id"
)

type taskKey struct{}

// task is what WithTask puts in a context.
type task struct{ id, contextID string }

// WithTask returns a copy of ctx that names the task and the conversation
// (context id) the work done under it belongs to, for LogHandler.
func WithTask(ctx context.Context, taskID, contextID string) context.Context {
	return context.WithValue(ctx, taskKey{}, task{taskID, contextID})
}

// TaskFrom returns the task and context ids WithTask put in ctx; "" for
// none.
func TaskFrom(ctx context.Context) (taskID, contextID string) {
	t, _ := ctx.Value(taskKey{}).(task)
	return t.id, t.contextID
}

// LogHandler wraps next so that each record logged with a context (the
// ...Context methods of slog.Logger) names what the context does: the
// trace and span of its recording span (trace_id, span_id), and the task
// and conversation WithTask put in it (task_id, context_id). A record
// whose context carries neither goes to next as it is. Under a group
// (WithGroup) the attributes are in the group, as the record's own are.
// A handler LogHandler made already is returned as it is: wrapped twice,
// it would add everything twice.
func LogHandler(next slog.Handler) slog.Handler {
	if _, ok := next.(logHandler); ok {
		return next
	}
	return logHandler{next}
}

type logHandler struct{ next slog.Handler }

func (h logHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx == nil { // slog lets a caller pass none
		return h.next.Handle(ctx, r)
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String(TraceIDKey, sc.TraceID().String()), slog.String(SpanIDKey, sc.SpanID().String()))
	}
	if t, ok := ctx.Value(taskKey{}).(task); ok {
		r.AddAttrs(slog.String(TaskIDKey, t.id), slog.String(ContextIDKey, t.contextID))
	}
	return h.next.Handle(ctx, r)
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler { return logHandler{h.next.WithAttrs(as)} }
func (h logHandler) WithGroup(name string) slog.Handler    { return logHandler{h.next.WithGroup(name)} }
