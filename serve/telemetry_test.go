package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	kclient "github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/metadata"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
	"github.com/a2amesh/a2amesh/telemetry"
)

// runExecutor serves exec with cfg (and gRPC) until the test ends, and
// returns the server and its gRPC address.
func runExecutor(t *testing.T, exec server.AgentExecutor, cfg serve.Config) (*serve.Server, string) {
	t.Helper()
	cfg.GRPCAddr = "127.0.0.1:0"
	s := serveUntilEnd(t, exec, echo.Card(""), cfg, 15*time.Second)
	for _, iface := range s.Card().SupportedInterfaces {
		if iface.ProtocolBinding == a2a.BindingGRPC {
			return s, iface.URL
		}
	}
	t.Fatal("the card lists no gRPC interface")
	return nil, ""
}

// serveUntilEnd serves exec under card with cfg until the test ends, and
// then waits, for stop at most, for Serve to return without an error.
func serveUntilEnd(t *testing.T, exec server.AgentExecutor, card *a2a.AgentCard, cfg serve.Config, stop time.Duration) *serve.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, exec, card, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve = %v", err)
			}
		case <-time.After(stop):
			t.Errorf("the server did not stop within %v", stop)
		}
	})
	return s
}

// TestMetrics: requests on each binding, served, failed and streamed,
// are counted in /metrics by binding, method and code, with the tasks'
// states and events and the Go runtime's metrics beside them; the
// exposition passes Prometheus's linter.
func TestMetrics(t *testing.T) {
	s, _ := runExecutor(t, new(echo.Executor), serve.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for _, b := range []client.Binding{client.JSONRPC, client.HTTPJSON, grpcclient.Binding(grpcclient.Config{})} {
		c, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{b}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
		if task, ok := res.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("SendMessage over %s = %v, %v", c.Binding(), res, err)
		}
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"}); !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("GetTask of an unknown task over %s: %v, want TaskNotFound", c.Binding(), err)
		}
		n := 0
		for _, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello, streamed")}) {
			if err != nil {
				t.Fatalf("SendStreamingMessage over %s: %v", c.Binding(), err)
			}
			n++
		}
		if n < 3 {
			t.Fatalf("SendStreamingMessage over %s: %d events", c.Binding(), n)
		}
		c.Close()
	}

	// Each request is counted when its answer has gone, a stream's after
	// its last event: wait for them.
	bindings := []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC}
	requests := []struct{ method, code string }{{"SendMessage", "OK"}, {"GetTask", "TASK_NOT_FOUND"}, {"SendStreamingMessage", "OK"}}
	families, text := scrapeUntil(t, s.URL()+"metrics", func(families map[string]*dto.MetricFamily) bool {
		for _, binding := range bindings {
			for _, r := range requests {
				if counter(families, "a2a_server_requests_total", "binding", binding, "method", r.method, "code", r.code) != 1 {
					return false
				}
			}
		}
		return true
	})
	for _, binding := range bindings {
		for _, r := range requests {
			if n := histogramCount(families, "a2a_server_request_duration_seconds", "binding", binding, "method", r.method); n != 1 {
				t.Errorf("a2a_server_request_duration_seconds{binding=%q,method=%q} counts %d, want 1", binding, r.method, n)
			}
		}
	}
	// Two tasks per binding; the echo agent works only on the streamed one.
	for state, want := range map[a2a.TaskState]float64{a2a.TaskStateSubmitted: 6, a2a.TaskStateWorking: 3, a2a.TaskStateCompleted: 6} {
		if n := counter(families, "a2a_server_task_states_total", "state", string(state)); n != want {
			t.Errorf("a2a_server_task_states_total{state=%q} = %v, want %v", state, n, want)
		}
	}
	if n := counter(families, "a2amesh_task_events_total"); n < 18 {
		t.Errorf("a2amesh_task_events_total = %v, want at least 3 per task", n)
	}
	if families["go_goroutines"] == nil {
		t.Error("/metrics has no go_goroutines")
	}
	problems, err := promlint.New(bytes.NewReader(text)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
}

// scrapeUntil GETs the metrics at url until done holds of them, failing
// after bound; it returns them, parsed and as text.
func scrapeUntil(t *testing.T, url string, done func(map[string]*dto.MetricFamily) bool) (map[string]*dto.MetricFamily, []byte) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	deadline := time.Now().Add(bound)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		text, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
		}
		families, err := parser.TextToMetricFamilies(bytes.NewReader(text))
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", url, err, text)
		}
		if done(families) {
			return families, text
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not as expected within %s:\n%s", url, bound, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestMetricsCountRefusals: a request the gate refuses is counted, on
// each binding, with the error's name.
func TestMetricsCountRefusals(t *testing.T) {
	s := gatedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	for _, b := range []client.Binding{client.JSONRPC, client.HTTPJSON, grpcclient.Binding(grpcclient.Config{})} {
		c, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{b}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "some-task"}); !errors.Is(err, a2a.ErrUnauthenticated) {
			t.Errorf("GetTask without a credential over %s: %v, want Unauthenticated", c.Binding(), err)
		}
		c.Close()
	}
	scrapeUntil(t, s.URL()+"metrics", func(families map[string]*dto.MetricFamily) bool {
		for _, binding := range []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON, a2a.BindingGRPC} {
			if counter(families, "a2a_server_requests_total", "binding", binding, "method", "GetTask", "code", "UNAUTHENTICATED") != 1 {
				return false
			}
		}
		return true
	})
}

// metric returns the metric of the family name whose labels are the pairs
// in labels; nil if none.
func metric(families map[string]*dto.MetricFamily, name string, labels ...string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
	for _, m := range f.Metric {
		have := map[string]string{}
		for _, l := range m.Label {
			have[l.GetName()] = l.GetValue()
		}
		match := len(have) == len(labels)/2
		for i := 0; i+1 < len(labels); i += 2 {
			match = match && have[labels[i]] == labels[i+1]
		}
		if match {
			return m
		}
	}
	return nil
}

func counter(families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	if m := metric(families, name, labels...); m != nil {
		return m.GetCounter().GetValue()
	}
	return 0
}

func histogramCount(families map[string]*dto.MetricFamily, name string, labels ...string) uint64 {
	if m := metric(families, name, labels...); m != nil {
		return m.GetHistogram().GetSampleCount()
	}
	return 0
}

// TestTracing: a request that carries a caller's W3C trace context, on
// each binding, is served under a server span that is the caller's
// span's child, named after the method, and the task's run under a span
// that is the request's child.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	s, grpcAddr := runExecutor(t, new(echo.Executor), serve.Config{Telemetry: tel})
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	g, err := a2aservice.NewClient("lf.a2a.v1.A2AService", kclient.WithHostPorts(grpcAddr), kclient.WithRPCTimeout(bound))
	if err != nil {
		t.Fatal(err)
	}
	msg := `{"messageId":"%s","role":"ROLE_USER","parts":[{"text":"hello"}]}`
	for i, tc := range []struct {
		binding string
		send    func(traceparent string) error
	}{
		{a2a.BindingJSONRPC, func(tp string) error {
			return post(ctx, s.URL(), tp, fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":`+msg+`}}`, a2a.NewID()))
		}},
		{a2a.BindingHTTPJSON, func(tp string) error {
			return post(ctx, s.URL()+"message:send", tp, fmt.Sprintf(`{"message":`+msg+`}`, a2a.NewID()))
		}},
		{a2a.BindingGRPC, func(tp string) error {
			_, err := g.SendMessage(metadata.AppendToOutgoingContext(ctx, "traceparent", tp), &a2apb.SendMessageRequest{Message: &a2apb.Message{
				MessageId: a2a.NewID(), Role: a2apb.Role_ROLE_USER, Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hello"}}}}})
			return err
		}},
	} {
		t.Run(tc.binding, func(t *testing.T) {
			caller := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, byte(i + 1)}, SpanID: trace.SpanID{2, byte(i + 1)}, TraceFlags: trace.FlagsSampled})
			if err := tc.send(fmt.Sprintf("00-%s-%s-01", caller.TraceID(), caller.SpanID())); err != nil {
				t.Fatal(err)
			}
			var req, run sdktrace.ReadOnlySpan
			deadline := time.Now().Add(bound)
			for req == nil || run == nil {
				if time.Now().After(deadline) {
					t.Fatalf("within %s: request span %v, run span %v", bound, req != nil, run != nil)
				}
				time.Sleep(5 * time.Millisecond)
				for _, sp := range rec.Ended() {
					switch {
					case sp.Name() == "SendMessage" && sp.Parent().SpanID() == caller.SpanID():
						req = sp
					case sp.Name() == server.RunSpanName && sp.SpanContext().TraceID() == caller.TraceID():
						run = sp
					}
				}
			}
			if req.SpanKind() != trace.SpanKindServer || req.SpanContext().TraceID() != caller.TraceID() || !req.Parent().IsRemote() {
				t.Errorf("request span: kind %s, trace %s, remote parent %v; want a server span in the caller's trace", req.SpanKind(), req.SpanContext().TraceID(), req.Parent().IsRemote())
			}
			if got := attr(req, "a2a.binding"); got != tc.binding {
				t.Errorf("request span's a2a.binding = %q, want %q", got, tc.binding)
			}
			if run.Parent().SpanID() != req.SpanContext().SpanID() {
				t.Errorf("run span's parent is %s, want the request span %s", run.Parent().SpanID(), req.SpanContext().SpanID())
			}
			if attr(run, "a2a.task.id") == "" || attr(run, "a2a.task.id") != attr(req, "a2a.task.id") || attr(run, "a2a.context.id") == "" {
				t.Errorf("run span names task %q (context %q), request span %q", attr(run, "a2a.task.id"), attr(run, "a2a.context.id"), attr(req, "a2a.task.id"))
			}
		})
	}
}

func attr(sp sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range sp.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// post sends a JSON request with a traceparent header and checks that it
// was served.
func post(ctx context.Context, url, traceparent, body string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", a2a.Version)
	req.Header.Set("traceparent", traceparent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(a2a.TaskStateCompleted)) {
		return fmt.Errorf("POST %s: %d %s", url, resp.StatusCode, b)
	}
	return nil
}

// failing logs a record with its run's context, then fails the task.
type failing struct{ log *slog.Logger }

func (f failing) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateWorking, nil), nil) {
			return
		}
		f.log.InfoContext(ctx, "the agent works")
		yield(nil, errors.New("the agent gave up"))
	}
}

func (failing) Cancel(context.Context, *a2a.Task) error { return nil }

// TestLogCorrelation: the records logged about a task during its run, the
// agent's and the server's, name the trace, the task and the
// conversation.
func TestLogCorrelation(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	logs := new(a2atest.LogBuffer)
	log := slog.New(slog.NewJSONHandler(logs, nil))
	s, _ := runExecutor(t, failing{slog.New(telemetry.LogHandler(log.Handler()))}, serve.Config{Telemetry: tel, Logger: log})
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
	task, ok := res.(*a2a.Task)
	if err != nil || !ok || task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("SendMessage = %v, %v; want a failed task", res, err)
	}
	found := map[string]bool{}
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		msg, _ := rec["msg"].(string)
		if msg != "the agent works" && msg != "a2a: task failed" {
			continue
		}
		found[msg] = true
		if rec[telemetry.TaskIDKey] != task.ID || rec[telemetry.ContextIDKey] != task.ContextID {
			t.Errorf("%q names task %v, context %v; want %s, %s", msg, rec[telemetry.TaskIDKey], rec[telemetry.ContextIDKey], task.ID, task.ContextID)
		}
		if id, _ := rec[telemetry.TraceIDKey].(string); len(id) != 32 {
			t.Errorf("%q names trace %v", msg, rec[telemetry.TraceIDKey])
		}
		if id, _ := rec[telemetry.SpanIDKey].(string); len(id) != 16 {
			t.Errorf("%q names span %v", msg, rec[telemetry.SpanIDKey])
		}
	}
	if !found["the agent works"] || !found["a2a: task failed"] {
		t.Fatalf("records found: %v\n%s", found, logs.String())
	}
}
