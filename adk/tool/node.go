package tool

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/telemetry"
)

// Node runs the tool calls of one model turn.
type Node struct {
	tools map[string]Tool
	infos []*schema.ToolInfo
	names []string
}

// NewNode returns a Node for the tools; their names must be unique.
func NewNode(ctx context.Context, tools []Tool) (*Node, error) {
	n := &Node{tools: make(map[string]Tool, len(tools))}
	for _, t := range tools {
		info, err := t.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("tool info: %w", err)
		}
		if _, dup := n.tools[info.Name]; dup {
			return nil, fmt.Errorf("two tools are named %q", info.Name)
		}
		n.tools[info.Name] = t
		n.infos = append(n.infos, info)
		n.names = append(n.names, info.Name)
	}
	slices.Sort(n.names)
	return n, nil
}

// Infos describes the node's tools, in the order given.
func (n *Node) Infos() []*schema.ToolInfo { return n.infos }

// Has reports whether the node has a tool of that name.
func (n *Node) Has(name string) bool { _, ok := n.tools[name]; return ok }

// PanicError is what Run returns when a tool panics: a bug in the tool,
// which the caller should report rather than hand to the model.
type PanicError struct {
	Tool  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("tool %s panicked: %v", e.Tool, e.Value) }

// Run executes the calls concurrently and returns one tool message per
// call, in call order. A call that fails (an unknown tool, bad arguments,
// an error) gets a result that says so, for the model to read; nothing a
// tool does stops the others. A tool that panics gets such a result too,
// and Run also returns the panic as a *PanicError. ctxFor, when not nil,
// gives each call a context of its own derived from ctx.
func (n *Node) Run(ctx context.Context, calls []schema.ToolCall, ctxFor func(ctx context.Context, i int) context.Context) ([]*schema.Message, error) {
	out := make([]*schema.Message, len(calls))
	callCtx := func(i int) context.Context {
		if ctxFor != nil {
			return ctxFor(ctx, i)
		}
		return ctx
	}
	if len(calls) == 1 { // the common case needs no goroutine
		var p *PanicError
		if out[0], p = n.call(callCtx(0), &calls[0]); p != nil {
			return out, p
		}
		return out, nil
	}
	panics := make([]*PanicError, len(calls))
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], panics[i] = n.call(callCtx(i), &calls[i])
		}()
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			return out, p
		}
	}
	return out, nil
}

func (n *Node) call(ctx context.Context, c *schema.ToolCall) (msg *schema.Message, perr *PanicError) {
	name := c.Function.Name
	var span trace.Span // the call's, once the tool is found
	defer func() {
		if p := recover(); p != nil {
			perr = &PanicError{Tool: name, Value: p, Stack: debug.Stack()}
			msg = schema.ToolMessage("error: "+perr.Error(), c.ID, name)
			endToolSpan(span, perr)
		}
	}()
	t, ok := n.tools[name]
	if !ok {
		return schema.ToolMessage(fmt.Sprintf("error: there is no tool %q; the tools are %s", name, strings.Join(n.names, ", ")), c.ID, name), nil
	}
	ctx, span = toolSpan(ctx, name, c.ID)
	result, err := t.Run(ctx, c.Function.Arguments)
	endToolSpan(span, err)
	if err != nil {
		return schema.ToolMessage("error: "+err.Error(), c.ID, name), nil
	}
	return schema.ToolMessage(result, c.ID, name), nil
}

// toolSpan starts the span of a tool call ("execute_tool <name>", after
// OpenTelemetry's conventions for generative AI) when the Telemetry of
// the run's context records spans (telemetry.FromContext); nil otherwise.
func toolSpan(ctx context.Context, name, callID string) (context.Context, trace.Span) {
	tel := telemetry.FromContext(ctx)
	if !tel.Tracing() {
		return ctx, nil
	}
	return tel.Tracer().Start(ctx, "execute_tool "+name, trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", name), attribute.String("gen_ai.tool.call.id", callID)))
}

func endToolSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
