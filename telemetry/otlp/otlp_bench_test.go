package otlp_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// receiverEnv, set in the environment of this package's test binary, makes
// it an OTLP/HTTP receiver (receiveSpans) rather than run the tests.
const receiverEnv = "A2AMESH_OTLP_BENCH_RECEIVER"

func TestMain(m *testing.M) {
	if os.Getenv(receiverEnv) != "" {
		os.Exit(receiveSpans(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// BenchmarkSpan is the floor of what a recorded span costs a process, the
// OpenTelemetry SDK's and the exporter's share alone: one span started and
// ended with three attributes, batched and exported over OTLP/HTTP to a
// receiver in a child process (its decoding is not this process's cost).
// cpu-ns/op is this process's CPU time (every goroutine's: the batch
// processor's and the exporter's too) per span.
func BenchmarkSpan(b *testing.B) {
	rcv := startReceiver(b)
	// A queue no run fills: every span is exported, none dropped.
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.url, "OTEL_TRACES_SAMPLER": "always_on", "OTEL_BSP_MAX_QUEUE_SIZE": "4000000"}
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
	b.ReportMetric(float64(rcv.spans(b))/float64(b.N), "exported/op")
}

// receiver is a child process receiving spans (receiveSpans).
type receiver struct {
	url   string
	cmd   *exec.Cmd
	stdin io.Closer
	out   *bufio.Scanner
}

// startReceiver runs this test binary as a receiver; the test's cleanup
// stops it if spans has not.
func startReceiver(tb testing.TB) *receiver {
	tb.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), receiverEnv+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	r := &receiver{cmd: cmd, stdin: stdin, out: bufio.NewScanner(stdout)}
	tb.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	if !r.out.Scan() {
		tb.Fatalf("receiver: no address: %v", r.out.Err())
	}
	r.url = r.out.Text()
	return r
}

// spans stops the receiver and returns how many spans it received.
func (r *receiver) spans(tb testing.TB) int64 {
	tb.Helper()
	_ = r.stdin.Close()
	if !r.out.Scan() {
		tb.Fatalf("receiver: no count: %v", r.out.Err())
	}
	n, err := strconv.ParseInt(strings.TrimSpace(r.out.Text()), 10, 64)
	if err != nil {
		tb.Fatalf("receiver: %v", err)
	}
	return n
}

// receiveSpans serves OTLP/HTTP trace exports on a loopback port, which it
// writes to out first, counting the spans they hold, until in ends; then
// it writes the count to out.
func receiveSpans(in io.Reader, out io.Writer) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var n atomic.Int64
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n.Add(int64(len(ss.Spans)))
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	fmt.Fprintf(out, "http://%s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, in)
	// The exporter has shut down by now: nothing is in flight.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	<-done
	fmt.Fprintln(out, n.Load())
	return 0
}

func cpu() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
