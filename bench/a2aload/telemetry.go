package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// maxTracingCost is issue 17's bound: tracing every request costs at most
// 10 % more server CPU per request than tracing off.
const maxTracingCost = 0.10

// telemetryCmd measures what a2amesh's telemetry costs the echo server:
// the same server with tracing off (its metrics still on, as always) and
// with every request traced and exported over OTLP/HTTP to a sink in
// a2aload that reads and drops the spans, and, given --before, a build
// without telemetry at all beside them. The servers run side by side and
// are loaded in turn, round after round (sideBySide); the report gives
// each one's CPU per request, throughput and latency as the median of its
// per-round ratios to the server with tracing off.
func telemetryCmd(args []string) error {
	fs := flag.NewFlagSet("telemetry", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command (given --addr, --grpc-addr)")
	before := fs.String("before", "", "the same command of a build without telemetry, to load beside (empty: none)")
	lf := addLoadFlags(fs, 12, 2*time.Second, "the servers", "of each server before each scenario and binding")
	if err := fs.Parse(args); err != nil {
		return err
	}
	load, err := lf.load("telemetry")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sink, err := startSpanSink()
	if err != nil {
		return err
	}
	defer sink.close()
	// Each variant says what it wants of tracing, whatever a2aload's own
	// environment has.
	off := []string{"OTEL_TRACES_EXPORTER=none", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_SDK_DISABLED=false"}
	on := []string{"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.url, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_TRACES_SAMPLER=always_on", "OTEL_SDK_DISABLED=false"}
	variants := []variant{{name: "tracing off", bin: *ours, env: off}, {name: "tracing on", bin: *ours, env: on}}
	if *before != "" {
		variants = append(variants, variant{name: "before", bin: *before, env: off})
	}
	bindings := []string{bindingJSONRPC, bindingGRPC}
	results, err := load.run(ctx, variants, bindings, 19151)
	if err != nil {
		return err
	}
	if sink.batches.Load() == 0 {
		return errors.New("telemetry: the server with tracing on exported no spans")
	}
	fmt.Printf("`%s` side by side with tracing off and with every request traced (OTLP/HTTP to a sink in a2aload that drops the spans: %d batches, %d MB received)",
		*ours, sink.batches.Load(), sink.bytes.Load()>>20)
	if *before != "" {
		fmt.Printf(", beside `%s`", *before)
	}
	fmt.Printf("; --log-level warn. For each scenario and binding: %v of warm-up each, then %d round(s) of %v on each server in turn, the order rotating; %d concurrent requests (HTTP: one connection each; gRPC: calls over %d connections). Absolute figures are the median round's; ratios are to the server with tracing off, the median of the per-round ratios.\n\n",
		load.warm, load.rounds, load.d, load.b.conns, load.b.grpcConns)
	for _, key := range []string{"send", "stream"} {
		for _, bd := range bindings {
			reportTelemetry(os.Stdout, scenarios[key], bd, variants, results[key][bd])
		}
	}
	return nil
}

// reportTelemetry writes one scenario and binding's table, and the
// verdict on the bound.
func reportTelemetry(w io.Writer, sc scenario, binding string, variants []variant, res map[string][]measurement) {
	fmt.Fprintf(w, "## %s over %s\n\n", sc.name, binding)
	fmt.Fprintln(w, "| server | server CPU / req | × off | req/s | × off | p50 | × off | p99 | × off |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	off := res[variants[0].name]
	var on variantRatios
	for _, v := range variants {
		ms := res[v.name]
		if len(ms) == 0 {
			continue
		}
		m, x := median(ms), ratiosTo(off, ms)
		if v.name == "tracing on" {
			on = x
		}
		fmt.Fprintf(w, "| %s | %v | %.2f× | %.0f | %.2f× | %v | %.2f× | %v | %.2f× |\n", v.name,
			m.cpuPerReq().Round(100*time.Nanosecond), x.cpu, m.res.rate(), x.rate,
			m.res.pct(.5).Round(time.Microsecond), x.p50, m.res.pct(.99).Round(time.Microsecond), x.p99)
	}
	fmt.Fprintf(w, "\nTarget, tracing every request costs at most %.0f %% more CPU per request (≤ %.2f× off): %.2f× (%s).\n\n",
		100*maxTracingCost, 1+maxTracingCost, on.cpu, verdict(on.cpu <= 1+maxTracingCost))
}

// spanSink is an OTLP/HTTP trace receiver that reads each export and
// drops it: the servers' exporters pay for encoding and sending their
// spans, as they would to a collector, and nothing here keeps them.
type spanSink struct {
	url     string
	srv     *http.Server
	batches atomic.Int64
	bytes   atomic.Int64
}

func startSpanSink() (*spanSink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("telemetry: span sink: %w", err)
	}
	s := &spanSink{url: "http://" + ln.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.batches.Add(1)
		s.bytes.Add(n)
		// An empty ExportTraceServiceResponse: all spans taken.
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *spanSink) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}
