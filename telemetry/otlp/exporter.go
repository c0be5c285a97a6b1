package otlp

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// exporter sends spans over OTLP/HTTP. The official client does the
// sending, so its endpoint, headers, TLS, compression, timeout and retries
// are the OTEL_EXPORTER_OTLP_* variables' as with the official exporter;
// the spans are encoded here (encoder), and handed to the client as
// ResourceSpans messages whose fields are all already-encoded bytes
// (unknown fields, to the message type), which its marshaling copies
// as they are.
type exporter struct {
	client otlptrace.Client

	mu  sync.Mutex // the encoder's buffers
	enc encoder
}

var _ sdktrace.SpanExporter = (*exporter)(nil)

// newExporter starts client and returns the exporter that sends with it.
func newExporter(ctx context.Context, client otlptrace.Client) (*exporter, error) {
	if err := client.Start(ctx); err != nil {
		return nil, err
	}
	return &exporter{client: client}, nil
}

// ExportSpans sends spans in one request (retried as the client retries).
func (e *exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	bodies := e.enc.encode(spans)
	if len(bodies) == 0 {
		return nil
	}
	rss := make([]*tracepb.ResourceSpans, len(bodies))
	for i, body := range bodies {
		rs := new(tracepb.ResourceSpans)
		rs.ProtoReflect().SetUnknown(protoreflect.RawFields(body))
		rss[i] = rs
	}
	// The client has marshaled the request (a copy of the bodies) before
	// it returns: the encoder's buffer is free again after it.
	if err := e.client.UploadTraces(ctx, rss); err != nil {
		return fmt.Errorf("traces export: %w", err)
	}
	return nil
}

// Shutdown stops the client, interrupting a request in flight.
func (e *exporter) Shutdown(ctx context.Context) error {
	return e.client.Stop(ctx)
}
