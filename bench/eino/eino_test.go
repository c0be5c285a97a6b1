// Package eino benchmarks a2amesh's adk against CloudWeGo Eino's ADK
// (v0.7.36) in one run: the same scripted ReAct agent (an instant model
// that calls one tool per turn) and the same three-agent transfer chain.
// It is a module of its own so that Eino never becomes a dependency of
// a2amesh.
//
//	cd bench/eino && go test -run '^$' -bench . -benchmem
package eino

import (
	"context"
	"runtime"
	"testing"
	"time"

	einoadk "github.com/cloudwego/eino/adk"
	einomodel "github.com/cloudwego/eino/components/model"
	einotool "github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	einoschema "github.com/cloudwego/eino/schema"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// turns is how many model+tool turns one ReAct run has before its answer.
const turns = 10

// The scripts: call the tool until turns results are in, then answer; or
// transfer to a fixed agent.

func countTools(n int, role func(i int) bool) int {
	c := 0
	for i := range n {
		if role(i) {
			c++
		}
	}
	return c
}

// ---- a2amesh ----

var (
	ourCall = schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
		Function: schema.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}})
	ourAnswer = schema.AssistantMessage("done", nil)
)

// ourScripted is an instant model; its streams are prebuilt chunks, as are
// einoScripted's, so neither side pays for making them.
type ourScripted struct {
	reply func(in []*schema.Message) *schema.Message
}

var ourChunks = map[*schema.Message][]*schema.Message{
	ourCall:   schema.SplitMessage(ourCall, 3),
	ourAnswer: schema.SplitMessage(ourAnswer, 3),
}

func (m *ourScripted) Generate(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	return m.reply(in), nil
}

func (m *ourScripted) Stream(_ context.Context, in []*schema.Message, _ ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg := m.reply(in)
	chunks, ok := ourChunks[msg]
	if !ok {
		chunks = []*schema.Message{msg}
	}
	return schema.FromSlice(chunks), nil
}

func (m *ourScripted) WithTools([]*schema.ToolInfo) (model.ChatModel, error) { return m, nil }

type ourTool struct{}

func (ourTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{Name: "lookup", Desc: "looks up", Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"q": {Type: "string"}})}, nil
}
func (ourTool) Run(context.Context, string) (string, error) { return "ok", nil }

func ourReAct(b *testing.B, streaming bool) *adk.Runner {
	m := &ourScripted{reply: func(in []*schema.Message) *schema.Message {
		if countTools(len(in), func(i int) bool { return in[i].Role == schema.Tool }) < turns {
			return ourCall
		}
		return ourAnswer
	}}
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "ReAct", Description: "calls a tool", Instruction: "Use the tool.", Model: m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{ourTool{}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return adk.NewRunner(context.Background(), adk.RunnerConfig{Agent: a, EnableStreaming: streaming})
}

func ourChain(b *testing.B) *adk.Runner {
	ctx := context.Background()
	agent := func(name string, reply *schema.Message) *adk.ChatModelAgent {
		m := &ourScripted{reply: func([]*schema.Message) *schema.Message { return reply }}
		a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: "agent " + name, Model: m})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	transfer := func(to string) *schema.Message {
		return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_t", Type: "function",
			Function: schema.FunctionCall{Name: adk.TransferToAgentToolName, Arguments: `{"agent_name":"` + to + `"}`}}})
	}
	c := agent("C", ourAnswer)
	bb, err := adk.SetSubAgents(ctx, agent("B", transfer("C")), []adk.Agent{c})
	if err != nil {
		b.Fatal(err)
	}
	a, err := adk.SetSubAgents(ctx, agent("A", transfer("B")), []adk.Agent{bb})
	if err != nil {
		b.Fatal(err)
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: a})
}

func ourRun(b *testing.B, r *adk.Runner) int {
	it := r.Query(context.Background(), "go")
	n := 0
	for {
		ev, ok := it.Next()
		if !ok {
			return n
		}
		if ev.Err != nil {
			b.Fatal(ev.Err)
		}
		if mo := ev.Output; mo != nil && mo.MessageOutput != nil && mo.MessageOutput.IsStreaming {
			if _, err := mo.MessageOutput.GetMessage(); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
}

// ---- Eino ----

var (
	einoCall = einoschema.AssistantMessage("", []einoschema.ToolCall{{ID: "call_1", Type: "function",
		Function: einoschema.FunctionCall{Name: "lookup", Arguments: `{"q":"x"}`}}})
	einoAnswer = einoschema.AssistantMessage("done", nil)
)

// einoChunks are the same chunks as ourChunks.
var einoChunks = map[*einoschema.Message][]*einoschema.Message{
	einoCall:   toEino(ourChunks[ourCall]),
	einoAnswer: toEino(ourChunks[ourAnswer]),
}

func toEino(chunks []*schema.Message) []*einoschema.Message {
	out := make([]*einoschema.Message, len(chunks))
	for i, c := range chunks {
		e := &einoschema.Message{Role: einoschema.RoleType(c.Role), Content: c.Content}
		for _, tc := range c.ToolCalls {
			e.ToolCalls = append(e.ToolCalls, einoschema.ToolCall{Index: tc.Index, ID: tc.ID, Type: tc.Type,
				Function: einoschema.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		if c.ResponseMeta != nil {
			e.ResponseMeta = &einoschema.ResponseMeta{FinishReason: c.ResponseMeta.FinishReason}
		}
		out[i] = e
	}
	return out
}

type einoScripted struct {
	reply func(in []*einoschema.Message) *einoschema.Message
}

func (m *einoScripted) Generate(_ context.Context, in []*einoschema.Message, _ ...einomodel.Option) (*einoschema.Message, error) {
	return m.reply(in), nil
}

func (m *einoScripted) Stream(_ context.Context, in []*einoschema.Message, _ ...einomodel.Option) (*einoschema.StreamReader[*einoschema.Message], error) {
	msg := m.reply(in)
	chunks, ok := einoChunks[msg]
	if !ok {
		chunks = []*einoschema.Message{msg}
	}
	return einoschema.StreamReaderFromArray(chunks), nil
}

func (m *einoScripted) WithTools([]*einoschema.ToolInfo) (einomodel.ToolCallingChatModel, error) {
	return m, nil
}

type einoTool struct{}

func (einoTool) Info(context.Context) (*einoschema.ToolInfo, error) {
	return &einoschema.ToolInfo{Name: "lookup", Desc: "looks up", ParamsOneOf: einoschema.NewParamsOneOfByParams(
		map[string]*einoschema.ParameterInfo{"q": {Type: einoschema.String, Required: true}})}, nil
}
func (einoTool) InvokableRun(context.Context, string, ...einotool.Option) (string, error) {
	return "ok", nil
}

func einoReAct(b *testing.B, streaming bool) *einoadk.Runner {
	ctx := context.Background()
	m := &einoScripted{reply: func(in []*einoschema.Message) *einoschema.Message {
		if countTools(len(in), func(i int) bool { return in[i].Role == einoschema.Tool }) < turns {
			return einoCall
		}
		return einoAnswer
	}}
	a, err := einoadk.NewChatModelAgent(ctx, &einoadk.ChatModelAgentConfig{
		Name: "ReAct", Description: "calls a tool", Instruction: "Use the tool.", Model: m,
		ToolsConfig: einoadk.ToolsConfig{ToolsNodeConfig: compose.ToolsNodeConfig{Tools: []einotool.BaseTool{einoTool{}}}},
	})
	if err != nil {
		b.Fatal(err)
	}
	return einoadk.NewRunner(ctx, einoadk.RunnerConfig{Agent: a, EnableStreaming: streaming})
}

func einoChain(b *testing.B) *einoadk.Runner {
	ctx := context.Background()
	agent := func(name string, reply *einoschema.Message) einoadk.Agent {
		m := &einoScripted{reply: func([]*einoschema.Message) *einoschema.Message { return reply }}
		a, err := einoadk.NewChatModelAgent(ctx, &einoadk.ChatModelAgentConfig{Name: name, Description: "agent " + name, Instruction: "", Model: m})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	transfer := func(to string) *einoschema.Message {
		return einoschema.AssistantMessage("", []einoschema.ToolCall{{ID: "call_t", Type: "function",
			Function: einoschema.FunctionCall{Name: einoadk.TransferToAgentToolName, Arguments: `{"agent_name":"` + to + `"}`}}})
	}
	bb, err := einoadk.SetSubAgents(ctx, agent("B", transfer("C")), []einoadk.Agent{agent("C", einoAnswer)})
	if err != nil {
		b.Fatal(err)
	}
	a, err := einoadk.SetSubAgents(ctx, agent("A", transfer("B")), []einoadk.Agent{bb})
	if err != nil {
		b.Fatal(err)
	}
	return einoadk.NewRunner(ctx, einoadk.RunnerConfig{Agent: a})
}

func einoRun(b *testing.B, r *einoadk.Runner) int {
	it := r.Query(context.Background(), "go")
	n := 0
	for {
		ev, ok := it.Next()
		if !ok {
			return n
		}
		if ev.Err != nil {
			b.Fatal(ev.Err)
		}
		if mo := ev.Output; mo != nil && mo.MessageOutput != nil && mo.MessageOutput.IsStreaming {
			if _, err := mo.MessageOutput.GetMessage(); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
}

// ---- the benchmarks ----

// measure runs run b.N times and reports time and allocations per unit
// (units per run).
func measure(b *testing.B, unit string, units int, run func() int, want int) {
	if got := run(); got != want {
		b.Fatalf("a run has %d events, want %d", got, want)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		run()
	}
	elapsed := time.Since(start)
	b.StopTimer()
	runtime.ReadMemStats(&after)
	n := float64(b.N * units)
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/"+unit)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/"+unit)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/"+unit)
	if unit == "event" {
		b.ReportMetric(n/elapsed.Seconds(), "events/s")
	}
}

// A ReAct run: turns model calls that each call the tool, then the answer.
// Events per run: 2 per turn and the answer.
// Streamed, every model message arrives as a stream the consumer reads
// whole.
func BenchmarkReActTurn(b *testing.B) {
	for _, streaming := range []bool{false, true} {
		mode := map[bool]string{false: "generate", true: "stream"}[streaming]
		b.Run(mode+"/a2amesh", func(b *testing.B) {
			r := ourReAct(b, streaming)
			measure(b, "turn", turns, func() int { return ourRun(b, r) }, 2*turns+1)
		})
		b.Run(mode+"/eino", func(b *testing.B) {
			r := einoReAct(b, streaming)
			measure(b, "turn", turns, func() int { return einoRun(b, r) }, 2*turns+1)
		})
	}
}

// A -> B -> C by transfer_to_agent; C answers. Events per run: a call and
// its result for A and B, the answer of C.
func BenchmarkTransferChain(b *testing.B) {
	b.Run("a2amesh", func(b *testing.B) {
		r := ourChain(b)
		measure(b, "event", 5, func() int { return ourRun(b, r) }, 5)
	})
	b.Run("eino", func(b *testing.B) {
		r := einoChain(b)
		measure(b, "event", 5, func() int { return einoRun(b, r) }, 5)
	})
}
