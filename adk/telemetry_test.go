package adk_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/telemetry"
)

// TestRunSpans: a run whose context carries a Telemetry reports each
// agent's run, model call (with its token usage), tool call and transfer
// as spans under the context's span, the agent transferred to under the
// transfer; and counts the model calls and their tokens.
func TestRunSpans(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
			tel, err := telemetry.New(telemetry.Config{TracerProvider: tp})
			if err != nil {
				t.Fatal(err)
			}
			counted := answer("It is 25°C in Beijing.")
			counted.ResponseMeta = &schema.ResponseMeta{FinishReason: "stop", Usage: &schema.Usage{PromptTokens: 30, CompletionTokens: 7, TotalTokens: 37}}
			router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))
			weather := modeltest.New(callTool("get_weather", `{"city":"Beijing"}`), counted)
			ctx, root := tp.Tracer("test").Start(telemetry.NewContext(context.Background(), tel), "task run")
			runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, router, weather, modeltest.New()), EnableStreaming: streaming})
			expectEvents(t, drain(t, runner.Query(ctx, "What's the weather in Beijing?")), weatherTranscript("It is 25°C in Beijing.")...)
			root.End()

			byID := map[string]sdktrace.ReadOnlySpan{}
			for _, s := range rec.Ended() {
				byID[s.SpanContext().SpanID().String()] = s
			}
			// Each span as "name < parent's name".
			var got []string
			attrs := map[string]map[string]string{}
			for _, s := range rec.Ended() {
				parent := "-"
				if p, ok := byID[s.Parent().SpanID().String()]; ok {
					parent = p.Name()
				}
				got = append(got, s.Name()+" < "+parent)
				m := map[string]string{}
				for _, kv := range s.Attributes() {
					m[string(kv.Key)] = kv.Value.Emit()
				}
				attrs[s.Name()] = m
			}
			want := []string{
				"chat unknown < invoke_agent RouterAgent",
				"execute_tool transfer_to_agent < invoke_agent RouterAgent",
				"chat unknown < invoke_agent WeatherAgent",
				"execute_tool get_weather < invoke_agent WeatherAgent",
				"chat unknown < invoke_agent WeatherAgent",
				"invoke_agent WeatherAgent < transfer RouterAgent -> WeatherAgent",
				"transfer RouterAgent -> WeatherAgent < invoke_agent RouterAgent",
				"invoke_agent RouterAgent < task run",
				"task run < -",
			}
			if len(got) != len(want) {
				t.Fatalf("spans:\n%q\nwant:\n%q", got, want)
			}
			for _, w := range want {
				found := false
				for i, g := range got {
					if g == w {
						got = append(got[:i], got[i+1:]...)
						found = true
						break
					}
				}
				if !found {
					t.Errorf("no span %q among %q", w, got)
				}
			}
			if a := attrs["invoke_agent WeatherAgent"]; a["a2amesh.run_path"] != "RouterAgent/WeatherAgent" || a["gen_ai.agent.name"] != "WeatherAgent" {
				t.Errorf("agent span attributes %v", a)
			}
			// The last chat span of the name is the answer's.
			if a := attrs["chat unknown"]; a["gen_ai.usage.input_tokens"] != "30" || a["gen_ai.usage.output_tokens"] != "7" {
				t.Errorf("model span attributes %v", a)
			}
			if a := attrs["execute_tool get_weather"]; a["gen_ai.tool.name"] != "get_weather" {
				t.Errorf("tool span attributes %v", a)
			}
			if a := attrs["transfer RouterAgent -> WeatherAgent"]; a["a2amesh.transfer.from"] != "RouterAgent" || a["a2amesh.transfer.to"] != "WeatherAgent" {
				t.Errorf("transfer span attributes %v", a)
			}
			if n, err := testutil.GatherAndCount(tel.Registry(), "a2amesh_model_tokens_total"); err != nil || n != 2 {
				t.Errorf("token series: %d, %v; want prompt and completion", n, err)
			}
		})
	}
}
