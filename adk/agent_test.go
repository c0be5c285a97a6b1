package adk_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

func TestAgentAsTool(t *testing.T) {
	ctx := context.Background()
	// The inner agent has a tool of its own and reads a session value of the caller's run.
	innerModel := modeltest.New(callTool("get_weather", `{"city":"Oslo"}`), answer("Oslo: 25°C, says the expert"))
	inner, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "WeatherExpert", Description: "knows the weather", Model: innerModel,
		Instruction: "Units: {units}", ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weatherTool(t)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	outerModel := modeltest.New(callTool("WeatherExpert", `{"request":"weather in Oslo?"}`), answer("The expert says 25°C."))
	outer := newAgent(t, "Assistant", "", "", outerModel, adk.NewAgentTool(ctx, inner))
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: outer}).Query(ctx, "Oslo weather?",
		adk.WithSessionValues(map[string]any{"units": "metric"})))
	expectEvents(t, evs,
		`Assistant [Assistant] calls WeatherExpert{"request":"weather in Oslo?"}`,
		`Assistant [Assistant] tool WeatherExpert: Oslo: 25°C, says the expert`,
		`Assistant [Assistant] says "The expert says 25°C."`,
	)
	calls := innerModel.Calls()
	if got := describeInput(calls[0].Input); strings.Join(got, "|") != "system: Units: metric|user: weather in Oslo?" {
		t.Fatalf("inner input %q", got)
	}
	info, _ := adk.NewAgentTool(ctx, inner).Info(ctx)
	if info.Name != "WeatherExpert" || info.Desc != "knows the weather" || info.Params.Required[0] != "request" {
		t.Fatalf("info %+v", info)
	}

	// A failing inner agent is a tool error the outer model reads.
	failing := newAgent(t, "Broken", "", "", modeltest.New())
	outerModel = modeltest.New(callTool("Broken", `{"request":"x"}`), answer("it failed"))
	outer = newAgent(t, "Assistant", "", "", outerModel, adk.NewAgentTool(ctx, failing))
	evs = drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: outer}).Query(ctx, "x"))
	if d := describe(evs[1]); !strings.Contains(d, "tool Broken: error: agent Broken: model:") {
		t.Fatalf("tool result %s", d)
	}
}

func TestMaxIterations(t *testing.T) {
	ctx := context.Background()
	loopy := modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		return callTool("get_weather", `{"city":"X"}`), nil
	})
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "Loopy", Model: loopy, MaxIterations: 3,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weatherTool(t)}}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: a}).Query(ctx, "x"))
	last := evs[len(evs)-1]
	if len(evs) != 7 || !errors.Is(last.Err, adk.ErrMaxIterations) || !strings.Contains(last.Err.Error(), "MaxIterations is 3") {
		t.Fatalf("events %q", describeAll(evs))
	}

	// The default is 20.
	b := newAgent(t, "Loopy", "", "", loopy, weatherTool(t))
	evs = drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: b}).Query(ctx, "x"))
	if len(evs) != 41 || !errors.Is(evs[40].Err, adk.ErrMaxIterations) {
		t.Fatalf("%d events, last %s", len(evs), describe(evs[len(evs)-1]))
	}
}

func TestPanicsBecomeEvents(t *testing.T) {
	ctx := context.Background()
	boom := mustTool(t, "boom", "panics", func(context.Context, struct{}) (string, error) { panic("tool exploded") })
	a := newAgent(t, "A", "", "", modeltest.New(callTool("boom", `{}`), answer("never")), boom)
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: a}).Query(ctx, "x"))
	expectEvents(t, evs,
		`A [A] calls boom{}`,
		`A [A] error: agent A: tool boom panicked: tool exploded`,
	)
	var tpe *tool.PanicError
	if !errors.As(evs[1].Err, &tpe) || len(tpe.Stack) == 0 {
		t.Fatalf("the tool's panic is not a tool.PanicError: %v", evs[1].Err)
	}

	m := modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		panic("model exploded")
	})
	evs = drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, "B", "", "", m)}).Query(ctx, "x"))
	var pe *adk.PanicError
	if len(evs) != 1 || !errors.As(evs[0].Err, &pe) || pe.Agent != "B" || len(pe.Stack) == 0 || evs[0].RunPath[0].AgentName != "B" {
		t.Fatalf("events %q", describeAll(evs))
	}

	// A custom agent whose Run panics.
	evs = drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: panicAgent{}}).Query(ctx, "x"))
	if len(evs) != 1 || !errors.As(evs[0].Err, &pe) || pe.Agent != "Panicky" {
		t.Fatalf("events %q", describeAll(evs))
	}
	// And run on its own, a ChatModelAgent recovers too.
	evs = drain(t, newAgent(t, "C", "", "", m).Run(ctx, &adk.AgentInput{Messages: []*schema.Message{schema.UserMessage("x")}}))
	if len(evs) != 1 || !errors.As(evs[0].Err, &pe) {
		t.Fatalf("events %q", describeAll(evs))
	}
}

type panicAgent struct{}

func (panicAgent) Name(context.Context) string        { return "Panicky" }
func (panicAgent) Description(context.Context) string { return "" }
func (panicAgent) Run(context.Context, *adk.AgentInput, ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	panic("run exploded")
}

func TestToolActionsAndSessionValuesInTools(t *testing.T) {
	ctx := context.Background()
	// A tool that reads and writes session values and asks the agent to exit.
	finish := mustTool(t, "finish", "finishes", func(ctx context.Context, _ struct{}) (string, error) {
		v, _ := adk.GetSessionValue(ctx, "who")
		adk.AddSessionValues(ctx, map[string]any{"done": true})
		if err := adk.SendToolGenAction(ctx, adk.NewExitAction()); err != nil {
			return "", err
		}
		return "bye " + v.(string), nil
	})
	a := newAgent(t, "A", "", "", modeltest.New(callTool("finish", `{}`)), finish)
	var done any
	probe := &probeAgent{name: "P", run: func(ctx context.Context) { done, _ = adk.GetSessionValue(ctx, "done") }}
	// A custom agent after A in a sequence never runs: A exits.
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "S", SubAgents: []adk.Agent{a, probe}})
	if err != nil {
		t.Fatal(err)
	}
	expectEvents(t, drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "x", adk.WithSessionValues(map[string]any{"who": "Ann"}))),
		`A [S A] calls finish{}`,
		`A [S A] tool finish: bye Ann => exit`,
	)
	if probe.runs != 0 || done != nil {
		t.Fatal("ran past the exit")
	}
	if err := adk.SendToolGenAction(ctx, adk.NewExitAction()); !errors.Is(err, adk.ErrNotInToolCall) {
		t.Fatalf("outside a tool call: %v", err)
	}
	// Outside a run, session values are empty and setting them does nothing.
	adk.AddSessionValue(ctx, "k", 1)
	if _, ok := adk.GetSessionValue(ctx, "k"); ok || len(adk.GetSessionValues(ctx)) != 0 {
		t.Fatal("a session value outside a run")
	}
}

func TestRunOptions(t *testing.T) {
	type opts struct{ n int }
	add := func(k int) adk.AgentRunOption { return adk.WrapImplSpecificOptFn(func(o *opts) { o.n += k }) }
	other := adk.WrapImplSpecificOptFn(func(o *struct{ s string }) { o.s = "x" })
	if got := adk.GetImplSpecificOptions(&opts{n: 100}, add(1), other, add(10)); got.n != 111 {
		t.Fatalf("n = %d", got.n)
	}
	if got := adk.GetImplSpecificOptions[opts](nil); got == nil || got.n != 0 {
		t.Fatal("nil base")
	}

	// Model options reach only the designated agent.
	ctx := context.Background()
	var seen []string
	record := func(name string) *modeltest.Model {
		return modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
			return answer(name), nil
		})
	}
	spy := func(name string, m model.ChatModel) model.ChatModel {
		return &optionSpy{ChatModel: m, name: name, seen: &seen}
	}
	a := newAgent(t, "A", "", "", spy("A", record("A")))
	b := newAgent(t, "B", "", "", spy("B", record("B")))
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "S", SubAgents: []adk.Agent{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "x",
		adk.WithChatModelOptions(model.WithModel("for-b")).DesignateAgent("B"),
		adk.WithChatModelOptions(model.WithMaxTokens(7))))
	if strings.Join(seen, ",") != "A:/7,B:for-b/7" {
		t.Fatalf("seen %v", seen)
	}
}

type optionSpy struct {
	model.ChatModel
	name string
	seen *[]string
}

func (s *optionSpy) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	o := model.Apply(opts)
	*s.seen = append(*s.seen, s.name+":"+o.Model+"/"+strconv.Itoa(o.MaxTokens))
	return s.ChatModel.Generate(ctx, in, opts...)
}

func TestIteratorConsumerLeaves(t *testing.T) {
	// The consumer reads one event and walks away; the run still ends and
	// leaves no goroutine behind (TestMain checks).
	ctx := context.Background()
	for _, streaming := range []bool{false, true} {
		var calls atomic.Int32
		m := modeltest.FromScript(func(_ context.Context, n int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
			calls.Add(1)
			if n < 5 {
				return callTool("get_weather", `{"city":"X"}`), nil
			}
			return answer("done"), nil
		})
		r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, "A", "", "", m, weatherTool(t)), EnableStreaming: streaming})
		it := r.Query(ctx, "x")
		if _, ok := it.Next(); !ok {
			t.Fatal("no event")
		}
		deadline := time.Now().Add(10 * time.Second)
		for calls.Load() < 6 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if calls.Load() != 6 {
			t.Fatalf("the run stopped after %d model calls", calls.Load())
		}
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	m := modeltest.FromScript(func(ctx context.Context, _ int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		close(started)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	lp, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Forever", SubAgents: []adk.Agent{newAgent(t, "A", "", "", m)}})
	if err != nil {
		t.Fatal(err)
	}
	it := adk.NewRunner(ctx, adk.RunnerConfig{Agent: lp}).Query(ctx, "x")
	<-started
	cancel()
	evs := drain(t, it)
	if len(evs) != 1 || !errors.Is(evs[0].Err, context.Canceled) {
		t.Fatalf("events %q", describeAll(evs))
	}
}

func TestMessageVariantGetMessage(t *testing.T) {
	msg := schema.AssistantMessage("hello world", []schema.ToolCall{modeltest.ToolCall("c1", "f", `{"a":1}`)})
	ev := adk.EventFromMessage(nil, schema.FromSlice(schema.SplitMessage(msg, 3)), schema.Assistant, "")
	got, err := ev.Output.MessageOutput.GetMessage()
	if err != nil || got.Content != "hello world" || len(got.ToolCalls) != 1 || got.ToolCalls[0].Function.Arguments != `{"a":1}` ||
		got.ToolCalls[0].ID != "c1" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := (&adk.MessageVariant{IsStreaming: true}).GetMessage(); err == nil {
		t.Fatal("no stream, no error")
	}
}
