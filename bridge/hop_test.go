package bridge_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/internal/adktest"
	"github.com/a2amesh/a2amesh/telemetry"
)

// TestRemoteHopReported: a run of a remote agent in a context that carries
// a Telemetry makes a client span for its call, child of the agent's run,
// naming the agent, the method and the remote task, and counts the call in
// the remote-agent metric; without one it reports nothing and still runs.
func TestRemoteHopReported(t *testing.T) {
	url := serveAgent(t, agent(t, "WeatherAgent", "Answers questions about the weather", modeltest.New(answer("Sunny."), answer("Sunny."))))
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Config{TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	ctx, root := tp.Tracer("test").Start(telemetry.NewContext(context.Background(), tel), "task run")
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, url)})
	adktest.Expect(t, adktest.Drain(t, r.Query(ctx, "Weather?")), `WeatherAgent [WeatherAgent] says "Sunny."`)
	root.End()

	var hop, run sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		switch s.Name() {
		case "remote agent WeatherAgent":
			hop = s
		case "invoke_agent WeatherAgent": // the caller's run of the agent
			run = s
		}
	}
	if hop == nil || run == nil {
		t.Fatalf("no remote agent span, or no span of its run, among %d", len(rec.Ended()))
	}
	if run.Parent().SpanID() != root.SpanContext().SpanID() || hop.Parent().SpanID() != run.SpanContext().SpanID() || hop.SpanKind() != trace.SpanKindClient {
		t.Errorf("hop span: parent %s (want the run's, %s, under %s), kind %s", hop.Parent().SpanID(), run.SpanContext().SpanID(), root.SpanContext().SpanID(), hop.SpanKind())
	}
	attrs := map[string]string{}
	for _, kv := range hop.Attributes() {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["a2amesh.agent.name"] != "WeatherAgent" || attrs["rpc.method"] != "SendStreamingMessage" || attrs["a2amesh.remote.task_id"] == "" {
		t.Errorf("hop span attributes %v", attrs)
	}
	if got, err := testutil.GatherAndCount(tel.Registry(), "a2amesh_remote_agent_request_duration_seconds"); err != nil || got != 1 {
		t.Errorf("remote-agent metric: %d series, %v", got, err)
	}

	// Without a Telemetry in the context: nothing to report, the run works.
	plain := adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: remote(t, url)})
	adktest.Expect(t, adktest.Drain(t, plain.Query(context.Background(), "Weather?")), `WeatherAgent [WeatherAgent] says "Sunny."`)
}
