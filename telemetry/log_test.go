package telemetry_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/telemetry"
)

// span is a recording span's context, as a tracer would put in ctx.
var span = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
	SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	TraceFlags: trace.FlagsSampled,
})

func TestLogHandler(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"nothing", context.Background(), "msg=hello n=1"},
		{"span", trace.ContextWithSpanContext(context.Background(), span),
			"msg=hello n=1 trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7"},
		{"task", telemetry.WithTask(context.Background(), "t1", "c1"), "msg=hello n=1 task_id=t1 context_id=c1"},
		{"both", telemetry.WithTask(trace.ContextWithSpanContext(context.Background(), span), "t1", "c1"),
			"msg=hello n=1 trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7 task_id=t1 context_id=c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			// Wrapped twice, as a server given a wrapped logger does.
			log := slog.New(telemetry.LogHandler(telemetry.LogHandler(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: noTime}))))
			log.InfoContext(tc.ctx, "hello", "n", 1)
			if got := strings.TrimSpace(strings.TrimPrefix(b.String(), "level=INFO ")); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func noTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// A record logged with the context of a task's run names the trace and
// the task; the server's run contexts carry both.
func ExampleLogHandler() {
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})))
	ctx := telemetry.WithTask(trace.ContextWithSpanContext(context.Background(), span), "task-1", "conversation-1")
	log.InfoContext(ctx, "working")
	// Output:
	// level=INFO msg=working trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7 task_id=task-1 context_id=conversation-1
}
