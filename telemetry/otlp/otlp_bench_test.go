package otlp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/a2amesh/a2amesh/telemetry/otlp"
)

// BenchmarkSpan is the floor of what a recorded span costs a process, the
// OpenTelemetry SDK's share alone: one span started and ended with three
// attributes, batched and exported over OTLP/HTTP to a receiver that drops
// it. cpu-ns/op is the process's CPU time (every goroutine's: the batch
// processor's and the exporter's too) per span.
func BenchmarkSpan(b *testing.B) {
	var exported atomic.Int64
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if proto.Unmarshal(body, &req) == nil {
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					exported.Add(int64(len(ss.Spans)))
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	// A queue no run fills: every span is exported, none dropped.
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL, "OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_MAX_QUEUE_SIZE": "4000000"}
	for k, v := range env {
		b.Setenv(k, v)
	}
	ctx := context.Background()
	tp, shutdown, err := otlp.TracerProvider(ctx, "bench", func(k string) string { return env[k] })
	if err != nil {
		b.Fatal(err)
	}
	tracer := tp.Tracer("bench")
	attrs := trace.WithAttributes(attribute.String("a2a.binding", "JSONRPC"), attribute.String("a2a.method", "SendMessage"),
		attribute.String("a2a.task.id", "01a21cf0-3bd5-7a5c-b909-b0ecf09655b1"))
	before := cpu()
	b.ResetTimer()
	for b.Loop() {
		_, span := tracer.Start(ctx, "SendMessage", attrs, trace.WithSpanKind(trace.SpanKindServer))
		span.End()
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := shutdown(sctx); err != nil { // exports what is queued: counted
		b.Fatal(err)
	}
	b.ReportMetric(float64(cpu()-before)/float64(b.N), "cpu-ns/op")
	// exported/op is 1 when no span was dropped.
	b.ReportMetric(float64(exported.Load())/float64(b.N), "exported/op")
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
