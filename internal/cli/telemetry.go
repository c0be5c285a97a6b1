package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/a2amesh/a2amesh/telemetry"
	"github.com/a2amesh/a2amesh/telemetry/otlp"
)

// Telemetry makes the process's Telemetry: spans exported over OTLP when
// the standard OTEL_* environment variables ask for it (see
// otlp.TracerProvider; off by default), metrics always. It logs once
// whether tracing is on and where the spans go. flush, called when the
// process is done, sends the spans still buffered and stops the exporter.
func Telemetry(ctx context.Context, service string, log *slog.Logger) (tel *telemetry.Telemetry, flush func(), err error) {
	tp, shutdown, err := otlp.TracerProvider(ctx, service, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	if tel, err = telemetry.New(telemetry.Config{TracerProvider: tp}); err != nil {
		_ = shutdown(ctx)
		return nil, nil, fmt.Errorf("telemetry: %w", err)
	}
	if tel.Tracing() {
		log.Info("tracing on: spans exported over OTLP/HTTP", "endpoint", exportEndpoint())
	} else {
		log.Info("tracing off: set OTEL_EXPORTER_OTLP_ENDPOINT to export spans over OTLP")
	}
	return tel, func() {
		// Not ctx: it is done by now, and the last spans are the ones
		// that say how the process ended.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Warn("tracing: the last spans were not exported", "err", err)
		}
	}, nil
}

// exportEndpoint is where the OTLP exporter sends spans, as the
// environment says (the exporter's default when it says nothing).
func exportEndpoint() string {
	if e := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); e != "" {
		return e
	}
	if e := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
		return e + "/v1/traces"
	}
	return "http://localhost:4318/v1/traces"
}
