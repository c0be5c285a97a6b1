package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestTelemetry: tracing is off unless the OTEL_* environment asks for it,
// and then the process says where its spans go.
func TestTelemetry(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint string
		tracing        bool
		logged         string
	}{
		{name: "off", logged: "tracing off"},
		{name: "otlp", endpoint: "http://127.0.0.1:1", tracing: true, logged: "endpoint=http://127.0.0.1:1/v1/traces"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", tc.endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv("OTEL_TRACES_EXPORTER", "")
			var out bytes.Buffer
			tel, flush, err := Telemetry(context.Background(), "test", slog.New(slog.NewTextHandler(&out, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer flush()
			if tel.Tracing() != tc.tracing {
				t.Errorf("tracing %v, want %v", tel.Tracing(), tc.tracing)
			}
			if tel.Registry() == nil {
				t.Error("no metrics registry")
			}
			if !strings.Contains(out.String(), tc.logged) {
				t.Errorf("logged %q, want it to contain %q", out.String(), tc.logged)
			}
		})
	}
}
