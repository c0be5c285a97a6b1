package adk_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

func TestSequentialPipeline(t *testing.T) {
	ctx := context.Background()
	researchModel := modeltest.New(answer("Go 1.26 ships a faster GC."))
	writerModel := modeltest.New(answer("Summary: the GC got faster."))
	research, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Researcher", Description: "finds facts", Model: researchModel,
		Instruction: "Research {topic} for {audience}.", OutputKey: "research",
	})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Writer", Description: "writes", Model: writerModel,
		Instruction: "Summarize for {audience}: {research} {{literal}} {not a key}", OutputKey: "summary",
	})
	if err != nil {
		t.Fatal(err)
	}
	pipeline, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
		Name: "Pipeline", Description: "research, then write", SubAgents: []adk.Agent{research, writer},
	})
	if err != nil {
		t.Fatal(err)
	}
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: pipeline})
	evs := drain(t, runner.Query(ctx, "Tell me about Go", adk.WithSessionValues(map[string]any{"topic": "Go", "audience": "gophers"})))
	expectEvents(t, evs,
		`Researcher [Pipeline Researcher] says "Go 1.26 ships a faster GC."`,
		`Writer [Pipeline Researcher Writer] says "Summary: the GC got faster."`,
	)
	if got := researchModel.Calls()[0].Input[0].Content; got != "Research Go for gophers." {
		t.Fatalf("researcher instruction %q", got)
	}
	wc := writerModel.Calls()[0]
	if got := wc.Input[0].Content; got != "Summarize for gophers: Go 1.26 ships a faster GC. {literal} {not a key}" {
		t.Fatalf("writer instruction %q", got)
	}
	// The writer also sees the researcher's answer as context, and no transfer tool.
	if got := describeInput(wc.Input[1:]); !slices.Equal(got, []string{
		"user: Tell me about Go",
		"user: For context: [Researcher] said: Go 1.26 ships a faster GC.",
	}) {
		t.Fatalf("writer input %q", got)
	}
	if len(wc.Tools) != 0 {
		t.Fatalf("a workflow step got tools %v", toolNames(wc.Tools))
	}
}

func TestInstructionPlaceholderWithoutValue(t *testing.T) {
	ctx := context.Background()
	a := newAgent(t, "A", "", "Use {missing}.", modeltest.New(answer("x")))
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: a}).Query(ctx, "hi"))
	if len(evs) != 1 || evs[0].Err == nil || !strings.Contains(evs[0].Err.Error(), "{missing}") {
		t.Fatalf("events %q", describeAll(evs))
	}
}

func TestParallelCollection(t *testing.T) {
	ctx := context.Background()
	slowStarted := make(chan struct{})
	// The first branch waits until the second has answered, so the branches
	// really overlap and their events interleave.
	first := newAgent(t, "Flights", "", "", modeltest.FromScript(func(ctx context.Context, _ int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		close(slowStarted)
		return answer("3 flights"), nil
	}))
	var once sync.Once
	second := newAgent(t, "Hotels", "", "", modeltest.FromScript(func(ctx context.Context, _ int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		once.Do(func() { <-slowStarted })
		return answer("5 hotels"), nil
	}))
	failing := newAgent(t, "Cars", "", "", modeltest.New()) // its script is empty: it fails
	panicking := newAgent(t, "Trains", "", "", modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		panic("no trains today")
	}))
	collect, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "Collect", SubAgents: []adk.Agent{first, second, failing, panicking}})
	if err != nil {
		t.Fatal(err)
	}
	summaryModel := modeltest.New(answer("all collected"))
	summary := newAgent(t, "Summary", "", "", summaryModel)
	trip, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Trip", SubAgents: []adk.Agent{collect, summary}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: trip}).Query(ctx, "plan"))
	byAgent := map[string]string{}
	for _, ev := range evs {
		byAgent[ev.AgentName] = describe(ev)
	}
	if len(evs) != 4 ||
		byAgent["Flights"] != `Flights [Trip Collect Flights] says "3 flights"` ||
		byAgent["Hotels"] != `Hotels [Trip Collect Hotels] says "5 hotels"` ||
		!strings.Contains(byAgent["Cars"], "Cars [Trip Collect Cars] error:") ||
		!strings.Contains(byAgent["Trains"], "Trains [Trip Collect Trains] error: adk: agent Trains panicked: no trains today") {
		t.Fatalf("parallel events %q", describeAll(evs))
	}
	var pe *adk.PanicError
	for _, ev := range evs {
		if ev.AgentName == "Trains" && !errors.As(ev.Err, &pe) {
			t.Fatalf("the panic is not a PanicError: %v", ev.Err)
		}
	}
	// A failing branch fails the Parallel step, so the sequence stops.
	if len(summaryModel.Calls()) != 0 {
		t.Fatal("the step after a failed parallel step ran")
	}
}

func TestParallelThenNextStepSeesBranchesInOrder(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	a := newAgent(t, "A", "", "", modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		<-release // A answers after B
		return answer("from A"), nil
	}))
	bModel := modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		defer close(release)
		return answer("from B"), nil
	})
	b := newAgent(t, "B", "", "", bModel)
	par, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "Par", SubAgents: []adk.Agent{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	nextModel := modeltest.New(answer("done"))
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Seq", SubAgents: []adk.Agent{par, newAgent(t, "Next", "", "", nextModel)}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "go"))
	if describe(evs[len(evs)-1]) != `Next [Seq Par Next] says "done"` {
		t.Fatalf("events %q", describeAll(evs))
	}
	// Branches ran in isolation: B's input did not include anything from A.
	if got := describeInput(bModel.Calls()[0].Input); !slices.Equal(got, []string{"user: go"}) {
		t.Fatalf("B's input %q", got)
	}
	// The next step sees both branches, grouped in branch order although B finished first.
	if got := describeInput(nextModel.Calls()[0].Input); !slices.Equal(got, []string{
		"user: go", "user: For context: [A] said: from A", "user: For context: [B] said: from B",
	}) {
		t.Fatalf("Next's input %q", got)
	}
}

func TestLoopExits(t *testing.T) {
	ctx := context.Background()
	writerModel := modeltest.New(answer("draft 1"), answer("draft 2"), answer("draft 3"))
	writer := newAgent(t, "Writer", "", "", writerModel)
	criticModel := modeltest.New(
		answer("needs work"),
		callTool(adk.ExitToolName, `{"final_result":"draft 2 is good"}`),
	)
	critic, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Critic", Model: criticModel, Exit: adk.ExitTool{},
	})
	if err != nil {
		t.Fatal(err)
	}
	refine, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Refine", SubAgents: []adk.Agent{writer, critic}, MaxIterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	probe := &probeAgent{name: "Probe", run: func(context.Context) {}}
	outer, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Outer", SubAgents: []adk.Agent{refine, probe}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: outer}).Query(ctx, "write a poem"))
	expectEvents(t, evs,
		`Writer [Outer Refine Writer] says "draft 1"`,
		`Critic [Outer Refine Writer Critic] says "needs work"`,
		`Writer [Outer Refine Writer Critic Writer] says "draft 2"`,
		`Critic [Outer Refine Writer Critic Writer Critic] calls exit{"final_result":"draft 2 is good"}`,
		`Critic [Outer Refine Writer Critic Writer Critic] tool exit: draft 2 is good => exit`,
	)
	// Exit ends the loop and the sequence around it.
	if probe.runs != 0 {
		t.Fatal("the step after an exit ran")
	}
	// History flowed through the iterations.
	if got := describeInput(writerModel.Calls()[1].Input); !slices.Equal(got, []string{
		"user: write a poem", "assistant: draft 1", "user: For context: [Critic] said: needs work",
	}) {
		t.Fatalf("writer's second input %q", got)
	}
}

func TestReturnDirectlyStoresOutput(t *testing.T) {
	ctx := context.Background()
	lookup := mustTool(t, "lookup", "looks up", func(_ context.Context, in cityIn) (string, error) { return "found " + in.City, nil })
	finder, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Finder", Model: modeltest.New(callTool("lookup", `{"city":"Oslo"}`)), OutputKey: "found",
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{lookup}, ReturnDirectly: map[string]bool{"lookup": true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var found any
	probe := &probeAgent{name: "Probe", run: func(ctx context.Context) { found, _ = adk.GetSessionValue(ctx, "found") }}
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Seq", SubAgents: []adk.Agent{finder, probe}})
	if err != nil {
		t.Fatal(err)
	}
	expectEvents(t, drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "find")),
		`Finder [Seq Finder] calls lookup{"city":"Oslo"}`,
		`Finder [Seq Finder] tool lookup: found Oslo`,
		`Probe [Seq Finder Probe] says "ok"`,
	)
	if found != "found Oslo" {
		t.Fatalf("session value %v", found)
	}
}

func TestLoopBreakAndMaxIterations(t *testing.T) {
	ctx := context.Background()
	count := 0
	breaker := &probeAgent{name: "Counter", run: func(context.Context) { count++ }, breakAt: 3}
	lp, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Loop", SubAgents: []adk.Agent{breaker}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: lp}).Query(ctx, "count"))
	last := evs[len(evs)-1]
	if count != 3 || last.Action == nil || last.Action.BreakLoop == nil || !last.Action.BreakLoop.Done || last.Action.BreakLoop.CurrentIterations != 2 {
		t.Fatalf("count %d, events %q", count, describeAll(evs))
	}

	count = 0
	capped, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Capped", MaxIterations: 4,
		SubAgents: []adk.Agent{&probeAgent{name: "Counter", run: func(context.Context) { count++ }}}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: capped}).Query(ctx, "count"))
	if count != 4 {
		t.Fatalf("ran %d times, want 4", count)
	}
}

// probeAgent is a custom agent (not one of the package's own): it calls run
// and answers "ok", or breaks its loop on its breakAt-th run.
type probeAgent struct {
	name    string
	run     func(ctx context.Context)
	breakAt int
	runs    int
}

func (p *probeAgent) Name(context.Context) string        { return p.name }
func (p *probeAgent) Description(context.Context) string { return "a probe" }
func (p *probeAgent) Run(ctx context.Context, _ *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	p.runs++
	p.run(ctx)
	ev := adk.EventFromMessage(schema.AssistantMessage("ok", nil), nil, schema.Assistant, "")
	if p.breakAt > 0 && p.runs == p.breakAt {
		ev.Action = adk.NewBreakLoopAction(p.name)
	}
	gen.Send(ev)
	gen.Close()
	return it
}

func TestStepAfterTransferSeesTheWholeStep(t *testing.T) {
	// A workflow step that transfers: the next step sees what the agent
	// transferred to said, although that agent ran below the step's RunPath.
	ctx := context.Background()
	router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))
	weather := modeltest.New(answer("sunny"))
	step := routerTree(t, router, weather, modeltest.New())
	nextModel := modeltest.New(answer("noted"))
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Seq", SubAgents: []adk.Agent{step, newAgent(t, "Next", "", "", nextModel)}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "weather?"))
	if d := describe(evs[2]); d != `WeatherAgent [Seq RouterAgent WeatherAgent] says "sunny"` {
		t.Fatalf("events %q", describeAll(evs))
	}
	if d := describe(evs[3]); d != `Next [Seq RouterAgent Next] says "noted"` {
		t.Fatalf("events %q", describeAll(evs))
	}
	got := describeInput(nextModel.Calls()[0].Input)
	if len(got) != 4 || got[3] != "user: For context: [WeatherAgent] said: sunny" {
		t.Fatalf("Next's input %q", got)
	}
	// A step inside a workflow cannot transfer back to the workflow: the
	// router, a step, has no parent to offer.
	if strings.Contains(router.Calls()[0].Input[0].Content, "- Seq:") {
		t.Fatal("a step offered its workflow as a transfer target")
	}
}

func TestAsyncIterator(t *testing.T) {
	it, gen := adk.NewAsyncIteratorPair[int]()
	for i := range 1000 {
		gen.Send(i) // never blocks, nobody is reading yet
	}
	go func() {
		gen.Send(1000)
		gen.Close()
	}()
	for want := 0; ; want++ {
		v, ok := it.Next()
		if !ok {
			if want != 1001 {
				t.Fatalf("ended after %d items", want)
			}
			return
		}
		if v != want {
			t.Fatalf("item %d is %d", want, v)
		}
	}
}
