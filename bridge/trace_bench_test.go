//go:build unix

package bridge_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/telemetry"
)

// discard is a span exporter that drops what it is given: the cost
// measured is the process's (making, ending and batching spans), not an
// exporter's.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// BenchmarkTracing is what tracing costs a question to a remote agent, in
// one process: the caller's run of the remote agent (its span, the hop's,
// the trace context on the request), and the agent's server and run
// (request and task spans, the agent's run, a model call with a tool call
// and an answer). "off" runs with no Telemetry; "on" samples every request
// into an SDK tracer provider whose batches are discarded. cpu-ns/op is
// the process's CPU time (every goroutine: client, server, batcher) per
// question.
func BenchmarkTracing(b *testing.B) {
	for _, traced := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[traced], func(b *testing.B) {
			var tel *telemetry.Telemetry
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(discard{}))
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				var err error
				if tel, err = telemetry.New(telemetry.Config{TracerProvider: tp}); err != nil {
					b.Fatal(err)
				}
			}
			url := serveTraced(b, tel)
			r, err := bridge.NewRemoteAgent(context.Background(), bridge.RemoteConfig{URL: url})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(r.Client().CloseIdleConnections)
			ctx := context.Background()
			if tel != nil {
				ctx = telemetry.NewContext(ctx, tel)
			}
			runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: r})
			ask := func() {
				rctx, span := tel.Tracer().Start(ctx, "task run") // the caller's own run, as a server would start it
				it := runner.Query(rctx, "What's the weather in Beijing?")
				for ev, ok := it.Next(); ok; ev, ok = it.Next() {
					if ev.Err != nil {
						b.Fatal(ev.Err)
					}
				}
				span.End()
			}
			ask() // connections and pools warm
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				ask()
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// serveTraced serves a weather agent (a tool call, then an answer with its
// token usage) over JSON-RPC on 127.0.0.1, reporting through tel.
func serveTraced(b *testing.B, tel *telemetry.Telemetry) string {
	b.Helper()
	ctx := context.Background()
	m := modeltest.Unrecorded(func(_ context.Context, _ int, input []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if last := input[len(input)-1]; last.Role == schema.Tool {
			msg := schema.AssistantMessage("It is 25°C in Beijing.", nil)
			msg.ResponseMeta = &schema.ResponseMeta{FinishReason: "stop", Usage: &schema.Usage{PromptTokens: 40, CompletionTokens: 8, TotalTokens: 48}}
			return msg, nil
		}
		return modeltest.CallTool("get_weather", `{"city":"Beijing"}`), nil
	})
	ag, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "WeatherAgent", Description: "Answers questions about the weather",
		Model: m, ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weatherToolTB(b)}}})
	if err != nil {
		b.Fatal(err)
	}
	ln, url := a2atest.Listen(b)
	tasks := new(taskstore.Memory)
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: ag, Tasks: tasks})
	if err != nil {
		b.Fatal(err)
	}
	h := a2atest.NewHandler(b, server.Config{Card: bridge.Card(ctx, ag, url), Executor: exec, Tasks: tasks, Telemetry: tel})
	a2atest.ServeOn(b, ln, h, jsonrpcserver.Config{})
	return url
}

func weatherToolTB(b *testing.B) tool.Tool {
	tl, err := tool.FromFunc("get_weather", "Get the weather of a city", func(_ context.Context, in cityIn) (string, error) {
		return "the temperature in " + in.City + " is 25°C", nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return tl
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
