// Package otlp makes the OpenTelemetry tracer provider a process exports
// its spans with, configured as every OpenTelemetry SDK is: by the standard
// OTEL_* environment variables. It is a package of its own so that what
// reports through package telemetry links the OpenTelemetry API only, and
// the SDK and the exporter come with the commands.
package otlp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// TracerProvider returns the tracer provider the environment asks for, and
// the function that flushes and stops it, or nil (no tracing) and a no-op
// when it asks for none. Tracing is on when OTEL_TRACES_EXPORTER is "otlp"
// or an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and OTEL_SDK_DISABLED is not
// "true"; the exporter speaks OTLP over HTTP (protobuf, or JSON when
// OTEL_EXPORTER_OTLP_PROTOCOL is http/json) with the official client,
// which reads the other OTEL_EXPORTER_OTLP_* variables itself
// (endpoints, headers, TLS, compression, timeout), the sampler reads
// OTEL_TRACES_SAMPLER and its argument, and the resource
// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME (else service.name is
// service). getenv is os.Getenv in a command.
func TracerProvider(ctx context.Context, service string, getenv func(string) string) (trace.TracerProvider, func(context.Context) error, error) {
	none := func(context.Context) error { return nil }
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return nil, none, nil
	}
	switch exporter := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exporter {
	case "none":
		return nil, none, nil
	case "otlp":
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return nil, none, nil
		}
	default:
		return nil, none, fmt.Errorf("otlp: OTEL_TRACES_EXPORTER=%s: only otlp and none are supported", exporter)
	}
	if p := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")); p != "" && p != "http/protobuf" {
		return nil, none, fmt.Errorf("otlp: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=%s: only http/protobuf is supported", p)
	}
	var exp sdktrace.SpanExporter
	var err error
	if strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")) == "http/json" {
		// JSON is the official exporter's to write.
		exp, err = otlptracehttp.New(ctx)
	} else {
		exp, err = newExporter(ctx, otlptracehttp.NewClient())
	}
	if err != nil {
		return nil, none, fmt.Errorf("otlp: exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(service)))
	if err != nil {
		return nil, none, fmt.Errorf("otlp: resource: %w", err)
	}
	// The environment's resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins over the default name.
	if env, err := resource.New(ctx, resource.WithFromEnv()); err == nil {
		if merged, err := resource.Merge(res, env); err == nil {
			res = merged
		}
	} else if !errors.Is(err, resource.ErrPartialResource) {
		return nil, none, fmt.Errorf("otlp: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}
