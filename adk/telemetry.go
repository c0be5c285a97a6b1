package adk

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/telemetry"
)

// A run reports through the Telemetry its context carries
// (telemetry.FromContext: an A2A server puts it in every task run's
// context); a run whose context carries none reports nothing. The spans
// are children of the context's span (the task run's) and follow
// OpenTelemetry's conventions for generative AI where they have one: an
// agent's run ("invoke_agent <name>"), each chat model call ("chat
// <model>", with its token usage), each tool call ("execute_tool <name>")
// and each transfer ("transfer <from> -> <to>"). An agent's span lasts
// until the agent it transferred to has run, so a trace shows who handed
// the question to whom.
const (
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrAgentName    = attribute.Key("gen_ai.agent.name")
	attrRequestModel = attribute.Key("gen_ai.request.model")
	attrInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	attrFinish       = attribute.Key("gen_ai.response.finish_reasons")
	attrRunPath      = attribute.Key("a2amesh.run_path")
	attrTransferFrom = attribute.Key("a2amesh.transfer.from")
	attrTransferTo   = attribute.Key("a2amesh.transfer.to")
)

// startSpan starts a span of the run's Telemetry; nil (and ctx as it is)
// when spans are not recorded, which is all it costs then.
func startSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tel := telemetry.FromContext(ctx)
	if !tel.Tracing() {
		return ctx, nil
	}
	return tel.Tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
}

// endSpan ends span (nil: none), an error one if failed.
func endSpan(span trace.Span, failed error) {
	if span == nil {
		return
	}
	if failed != nil {
		span.RecordError(failed)
		span.SetStatus(codes.Error, failed.Error())
	}
	span.End()
}

// agentSpan starts the span of an agent's run.
func agentSpan(ctx context.Context, name string, path []RunStep) (context.Context, trace.Span) {
	if !telemetry.FromContext(ctx).Tracing() {
		return ctx, nil
	}
	steps := make([]string, len(path))
	for i, s := range path {
		steps[i] = s.AgentName
	}
	return startSpan(ctx, "invoke_agent "+name, attrOperation.String("invoke_agent"), attrAgentName.String(name),
		attrRunPath.String(strings.Join(steps, "/")))
}

// transferSpan starts the span of a transfer, whose child is the run of
// the agent transferred to.
func transferSpan(ctx context.Context, from, to string) (context.Context, trace.Span) {
	return startSpan(ctx, "transfer "+from+" -> "+to, attrTransferFrom.String(from), attrTransferTo.String(to))
}

// modelCall reports one chat model call: a span, and the model metric
// with the tokens the reply counts. done takes the reply (nil if none) and
// the call's error.
func modelCall(ctx context.Context, agent string, m model.ChatModel, opts []model.Option) (_ context.Context, done func(*schema.Message, error)) {
	tel := telemetry.FromContext(ctx)
	if tel == nil {
		return ctx, func(*schema.Message, error) {}
	}
	name := model.Apply(opts).Model
	if name == "" {
		name = "unknown"
		if n, ok := m.(model.Named); ok {
			name = n.ModelName()
		}
	}
	start := time.Now()
	ctx, span := startSpan(ctx, "chat "+name, attrOperation.String("chat"), attrRequestModel.String(name), attrAgentName.String(agent))
	return ctx, func(reply *schema.Message, err error) {
		var in, out int
		if reply != nil && reply.ResponseMeta != nil {
			if u := reply.ResponseMeta.Usage; u != nil {
				in, out = u.PromptTokens, u.CompletionTokens
			}
			if span != nil && reply.ResponseMeta.FinishReason != "" {
				span.SetAttributes(attrFinish.StringSlice([]string{reply.ResponseMeta.FinishReason}))
			}
		}
		tel.Model(name, time.Since(start), in, out, err)
		if span != nil {
			span.SetAttributes(attrInputTokens.Int(in), attrOutputTokens.Int(out))
		}
		endSpan(span, err)
	}
}
