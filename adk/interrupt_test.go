package adk_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

type askIn struct {
	Question string `json:"question"`
}

type askState struct {
	Question string `json:"question"`
	Asked    int    `json:"asked"`
}

// askTool asks a person: it interrupts with the question, saving it as its
// state, and answers with what the person typed when resumed.
func askTool(t testing.TB) tool.Tool {
	return mustTool(t, "ask_user", "Ask the person a question", func(ctx context.Context, in askIn) (string, error) {
		if typed, ok := adk.GetResumeData[string](ctx); ok {
			st, saved, err := adk.GetInterruptState[askState](ctx)
			if err != nil || !saved || !adk.WasInterrupted(ctx) {
				return "", errors.New("resumed without the saved state")
			}
			return "to " + quote(st.Question) + " the person said: " + typed, nil
		}
		asked := 1
		if st, saved, _ := adk.GetInterruptState[askState](ctx); saved {
			asked = st.Asked + 1
		}
		return "", adk.StatefulInterrupt(ctx, "please answer: "+in.Question, askState{Question: in.Question, Asked: asked})
	})
}

func quote(s string) string { return "«" + s + "»" }

func resume(t *testing.T, r *adk.Runner, id string, opts ...adk.AgentRunOption) []*adk.AgentEvent {
	t.Helper()
	it, err := r.Resume(context.Background(), id, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return drain(t, it)
}

func TestInterruptToolInChatModelAgent(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		ctx := context.Background()
		store := &adk.MemoryCheckPointStore{}
		m := modeltest.New(callTool("ask_user", `{"question":"Which city?"}`), answer("Booked for Paris."))
		a := newAgent(t, "Booker", "", "", m, askTool(t))
		r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: a, CheckPointStore: store, EnableStreaming: streaming})

		evs := drain(t, r.Query(ctx, "book a trip", adk.WithCheckPointID("cp1")))
		expectEvents(t, evs,
			`Booker [Booker] calls ask_user{"question":"Which city?"}`,
			`Booker [Booker] => interrupted`,
		)
		info := interrupted(t, evs)
		if len(info.Points) != 1 || info.Points[0].ID != "Booker#call_ask_user" || info.Data != "please answer: Which city?" ||
			info.Points[0].Tool != "ask_user" || info.Points[0].Agent != "Booker" {
			t.Fatalf("interrupt info %+v %+v", info, info.Points[0])
		}
		if _, ok, _ := store.Get(ctx, "cp1"); !ok {
			t.Fatal("no checkpoint saved")
		}

		evs = resume(t, r, "cp1", adk.ResumeWith(info.Points[0].ID, "Paris"))
		expectEvents(t, evs,
			`Booker [Booker] tool ask_user: to «Which city?» the person said: Paris`,
			`Booker [Booker] says "Booked for Paris."`,
		)
		// The model's second call saw the whole turn.
		got := describeInput(m.Calls()[1].Input)
		if got[len(got)-1] != "tool(ask_user): to «Which city?» the person said: Paris" {
			t.Fatalf("second model input %q", got)
		}
		if _, ok, _ := store.Get(ctx, "cp1"); ok {
			t.Fatal("the checkpoint outlived its finished run")
		}
		if _, err := r.Resume(ctx, "cp1"); !errors.Is(err, adk.ErrCheckPointNotFound) {
			t.Fatalf("resuming a finished run: %v", err)
		}
		if _, err := r.Resume(ctx, "never"); !errors.Is(err, adk.ErrCheckPointNotFound) {
			t.Fatalf("resuming an unknown checkpoint: %v", err)
		}
	}
}

func TestTwoSuccessiveInterrupts(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	m := modeltest.New(
		callTool("ask_user", `{"question":"Which city?"}`),
		schema.AssistantMessage("", []schema.ToolCall{modeltest.ToolCall("call_2", "ask_user", `{"question":"Which dates?"}`)}),
		answer("Booked."))
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, "Booker", "", "", m, askTool(t)), CheckPointStore: store})
	first := interrupted(t, drain(t, r.Query(ctx, "book", adk.WithCheckPointID("cp"))))

	// Resuming without input for the point: the tool asks again, and its
	// state counts the asking.
	again := interrupted(t, resume(t, r, "cp"))
	if again.Points[0].ID != first.Points[0].ID {
		t.Fatalf("points %s, %s", first.Points[0].ID, again.Points[0].ID)
	}

	evs := resume(t, r, "cp", adk.ResumeWith(first.Points[0].ID, "Paris"))
	second := interrupted(t, evs)
	if second.Points[0].ID != "Booker#call_2" || second.Data != "please answer: Which dates?" {
		t.Fatalf("second interrupt %+v", second.Points[0])
	}
	evs = resume(t, r, "cp", adk.ResumeWith(second.Points[0].ID, "May"))
	expectEvents(t, evs,
		`Booker [Booker] tool ask_user: to «Which dates?» the person said: May`,
		`Booker [Booker] says "Booked."`,
	)
	// The last model call saw both answers.
	last := describeInput(m.Calls()[2].Input)
	if !slices.Contains(last, "tool(ask_user): to «Which city?» the person said: Paris") {
		t.Fatalf("last input %q", last)
	}
}

func TestInterruptAfterTransfer(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))
	weatherModel := modeltest.New(callTool("ask_user", `{"question":"Which city?"}`), answer("Sunny in Oslo."))
	w := newAgent(t, "WeatherAgent", "weather", "", weatherModel, askTool(t))
	root, err := adk.SetSubAgents(ctx, newAgent(t, "RouterAgent", "routes", "", router), []adk.Agent{w})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store})
	evs := drain(t, r.Query(ctx, "weather?", adk.WithCheckPointID("cp")))
	info := interrupted(t, evs)
	if info.Points[0].ID != "RouterAgent/WeatherAgent#call_ask_user" ||
		!slices.Equal(info.Points[0].RunPath, []adk.RunStep{{AgentName: "RouterAgent"}, {AgentName: "WeatherAgent"}}) {
		t.Fatalf("point %+v", info.Points[0])
	}
	evs = resume(t, r, "cp", adk.ResumeWith(info.Points[0].ID, "Oslo"))
	expectEvents(t, evs,
		`WeatherAgent [RouterAgent WeatherAgent] tool ask_user: to «Which city?» the person said: Oslo`,
		`WeatherAgent [RouterAgent WeatherAgent] says "Sunny in Oslo."`,
	)
	if len(router.Calls()) != 1 {
		t.Fatal("the router ran again")
	}
}

func TestInterruptInSequentialAndLoop(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	aModel := modeltest.New(answer("a1"), answer("a2"))
	bModel := modeltest.New(answer("b1"), callTool("ask_user", `{"question":"Go on?"}`), answer("b2"))
	a := newAgent(t, "A", "", "", aModel)
	b := newAgent(t, "B", "", "", bModel, askTool(t))
	lp, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Loop", SubAgents: []adk.Agent{a, b}, MaxIterations: 2})
	if err != nil {
		t.Fatal(err)
	}
	afterModel := modeltest.New(answer("after"))
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Seq", SubAgents: []adk.Agent{lp, newAgent(t, "After", "", "", afterModel)}})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq, CheckPointStore: store})
	evs := drain(t, r.Query(ctx, "go", adk.WithCheckPointID("cp")))
	expectEvents(t, evs,
		`A [Seq Loop A] says "a1"`,
		`B [Seq Loop A B] says "b1"`,
		`A [Seq Loop A B A] says "a2"`,
		`B [Seq Loop A B A B] calls ask_user{"question":"Go on?"}`,
		`B [Seq Loop A B A B] => interrupted`,
	)
	info := interrupted(t, evs)
	if info.Points[0].ID != "Seq/Loop/A/B/A/B#call_ask_user" {
		t.Fatalf("point %s", info.Points[0].ID)
	}
	// Resumed at the second iteration's second step; the loop ends there,
	// then the sequence goes on.
	evs = resume(t, r, "cp", adk.ResumeWith(info.Points[0].ID, "yes"))
	expectEvents(t, evs,
		`B [Seq Loop A B A B] tool ask_user: to «Go on?» the person said: yes`,
		`B [Seq Loop A B A B] says "b2"`,
		`After [Seq Loop After] says "after"`,
	)
	// History survived the checkpoint: After sees the whole loop.
	got := describeInput(afterModel.Calls()[0].Input)
	want := []string{"user: go", "user: For context: [A] said: a1", "user: For context: [B] said: b1", "user: For context: [A] said: a2",
		"user: For context: [B] called tool `ask_user` with arguments: {\"question\":\"Go on?\"}",
		"user: For context: [B] `ask_user` tool returned result: to «Go on?» the person said: yes",
		"user: For context: [B] said: b2"}
	if !slices.Equal(got, want) {
		t.Fatalf("After's input\n got %q\nwant %q", got, want)
	}
	if len(aModel.Calls()) != 2 {
		t.Fatalf("A ran %d times", len(aModel.Calls()))
	}
}

func TestInterruptParallelBranches(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	ask := func(name, q, final string) *adk.ChatModelAgent {
		return newAgent(t, name, "", "", modeltest.New(callTool("ask_user", `{"question":"`+q+`"}`), answer(final)), askTool(t))
	}
	par, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "Par", SubAgents: []adk.Agent{
		ask("Flights", "Which airline?", "flights done"),
		newAgent(t, "Weather", "", "", modeltest.New(answer("sunny"))),
		ask("Hotels", "Which area?", "hotels done"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	nextModel := modeltest.New(answer("all done"))
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Trip", SubAgents: []adk.Agent{par, newAgent(t, "Next", "", "", nextModel)}})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq, CheckPointStore: store})
	evs := drain(t, r.Query(ctx, "plan", adk.WithCheckPointID("cp")))
	var ids []string
	for _, ev := range evs {
		if ev.Action != nil && ev.Action.Interrupted != nil {
			ids = append(ids, ev.Action.Interrupted.Points[0].ID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"Trip/Par/Flights#call_ask_user", "Trip/Par/Hotels#call_ask_user"}) {
		t.Fatalf("interrupted points %v in %q", ids, describeAll(evs))
	}

	// Resume only one: the other asks again.
	evs = resume(t, r, "cp", adk.ResumeWith(ids[0], "KLM"))
	var again []string
	for _, ev := range evs {
		if ev.Action != nil && ev.Action.Interrupted != nil {
			again = append(again, ev.Action.Interrupted.Points[0].ID)
		}
	}
	if !slices.Equal(again, ids[1:]) || len(nextModel.Calls()) != 0 {
		t.Fatalf("after a partial resume: %q", describeAll(evs))
	}
	// Resume both at once: the one already answered is not asked again.
	evs = resume(t, r, "cp", adk.ResumeWith(ids[0], "unused"), adk.ResumeWith(ids[1], "center"))
	expectEvents(t, evs,
		`Hotels [Trip Par Hotels] tool ask_user: to «Which area?» the person said: center`,
		`Hotels [Trip Par Hotels] says "hotels done"`,
		`Next [Trip Par Next] says "all done"`,
	)
	got := describeInput(nextModel.Calls()[0].Input)
	want := []string{
		"user: plan",
		"user: For context: [Flights] called tool `ask_user` with arguments: {\"question\":\"Which airline?\"}",
		"user: For context: [Flights] `ask_user` tool returned result: to «Which airline?» the person said: KLM",
		"user: For context: [Flights] said: flights done",
		"user: For context: [Weather] said: sunny",
		"user: For context: [Hotels] called tool `ask_user` with arguments: {\"question\":\"Which area?\"}",
		"user: For context: [Hotels] `ask_user` tool returned result: to «Which area?» the person said: center",
		"user: For context: [Hotels] said: hotels done",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Next's input\n got %q\nwant %q", got, want)
	}
}

func TestInterruptInsideAgentTool(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	innerModel := modeltest.New(callTool("ask_user", `{"question":"Budget?"}`), answer("Plan within 500 EUR."))
	inner := newAgent(t, "Planner", "plans trips", "", innerModel, askTool(t))
	outerModel := modeltest.New(callTool("Planner", `{"request":"plan a trip"}`), answer("Here is your plan."))
	outer := newAgent(t, "Assistant", "", "", outerModel, adk.NewAgentTool(ctx, inner))
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: outer, CheckPointStore: store})

	evs := drain(t, r.Query(ctx, "trip please", adk.WithCheckPointID("cp")))
	expectEvents(t, evs,
		`Assistant [Assistant] calls Planner{"request":"plan a trip"}`,
		`Assistant [Assistant] => interrupted`,
	)
	info := interrupted(t, evs)
	p := info.Points[0]
	if p.ID != "Assistant#call_Planner>Planner#call_ask_user" || p.Agent != "Planner" || p.Info != "please answer: Budget?" || info.Data != p.Info {
		t.Fatalf("the inner interrupt did not reach the outer run: %+v", p)
	}
	evs = resume(t, r, "cp", adk.ResumeWith(p.ID, "500 EUR"))
	expectEvents(t, evs,
		`Assistant [Assistant] tool Planner: Plan within 500 EUR.`,
		`Assistant [Assistant] says "Here is your plan."`,
	)
	if got := describeInput(innerModel.Calls()[1].Input); got[len(got)-1] != "tool(ask_user): to «Budget?» the person said: 500 EUR" {
		t.Fatalf("inner second input %q", got)
	}
	if len(outerModel.Calls()) != 2 {
		t.Fatal("the outer model ran its first turn again")
	}
}

func TestConcurrentResumes(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	entered, release := make(chan struct{}), make(chan struct{})
	slow := mustTool(t, "ask_user", "asks", func(ctx context.Context, in askIn) (string, error) {
		if typed, ok := adk.GetResumeData[string](ctx); ok {
			close(entered)
			<-release
			return typed, nil
		}
		return "", adk.Interrupt(ctx, in.Question)
	})
	m := modeltest.New(callTool("ask_user", `{"question":"?"}`), answer("done"))
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, "A", "", "", m, slow), CheckPointStore: store})
	info := interrupted(t, drain(t, r.Query(ctx, "x", adk.WithCheckPointID("cp"))))
	it, err := r.Resume(ctx, "cp", adk.ResumeWith(info.Points[0].ID, "first"))
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	// While the first resume runs, a second one of the same checkpoint
	// cannot start, here or in another Runner on the store.
	if _, err := r.Resume(ctx, "cp", adk.ResumeWith(info.Points[0].ID, "second")); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("second resume: %v", err)
	}
	other := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, "A", "", "", m, slow), CheckPointStore: store})
	if _, err := other.Resume(ctx, "cp"); !errors.Is(err, adk.ErrCheckPointBusy) {
		t.Fatalf("resume in another runner: %v", err)
	}
	close(release)
	expectEvents(t, drain(t, it), `A [A] tool ask_user: first`, `A [A] says "done"`)
}

type booking struct {
	City  string   `json:"city"`
	Dates []string `json:"dates"`
}

func TestResumeAfterRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// The whole tree is built anew for the second "process"; only the
	// directory is shared.
	build := func(m *modeltest.Model, extra ...tool.Tool) *adk.Runner {
		store, err := checkpoint.NewFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"Booker"}`))
		booker, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "Booker", Description: "books", Model: m,
			Instruction: "Book {booking} for {who}.", ToolsConfig: adk.ToolsConfig{Tools: append([]tool.Tool{askTool(t)}, extra...)}})
		if err != nil {
			t.Fatal(err)
		}
		root, err := adk.SetSubAgents(ctx, newAgent(t, "Router", "routes", "", router), []adk.Agent{booker})
		if err != nil {
			t.Fatal(err)
		}
		return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store,
			StateTypes: []adk.StateType{adk.StateTypeOf[booking]("test.booking")}})
	}
	first := build(modeltest.New(callTool("ask_user", `{"question":"Confirm?"}`)))
	evs := drain(t, first.Query(ctx, "book it", adk.WithCheckPointID("task-42"), adk.WithSessionValues(map[string]any{
		"booking": booking{City: "Rome", Dates: []string{"May 1"}}, "who": "Ann", "count": 3,
		"raw": struct {
			N int `json:"n"`
		}{7},
	})))
	info := interrupted(t, evs)

	m := modeltest.New(callTool("probe", `{}`), answer("Booked."))
	var seen map[string]any
	var typed booking
	var rawN struct {
		N int `json:"n"`
	}
	probe := mustTool(t, "probe", "reads values", func(ctx context.Context, _ struct{}) (string, error) {
		seen = adk.GetSessionValues(ctx)
		typed, _ = adk.SessionValue[booking](ctx, "booking")
		rawN, _ = adk.SessionValue[struct {
			N int `json:"n"`
		}](ctx, "raw")
		return "ok", nil
	})
	second := build(m, probe)
	evs = resume(t, second, "task-42", adk.ResumeWith(info.Points[0].ID, "yes"))
	expectEvents(t, evs,
		`Booker [Router Booker] tool ask_user: to «Confirm?» the person said: yes`,
		`Booker [Router Booker] calls probe{}`,
		`Booker [Router Booker] tool probe: ok`,
		`Booker [Router Booker] says "Booked."`,
	)
	// The instruction was filled again from the restored values: a
	// registered type came back as itself.
	sys := m.Calls()[0].Input[0].Content
	if !strings.HasPrefix(sys, `Book {"city":"Rome","dates":["May 1"]} for Ann.`) {
		t.Fatalf("instruction after restart: %q", sys)
	}
	// A registered type and the built-in ones come back as themselves; an
	// unregistered one as plain JSON, which SessionValue decodes.
	want := booking{City: "Rome", Dates: []string{"May 1"}}
	if b, ok := seen["booking"].(booking); !ok || b.City != want.City || seen["count"] != 3 || seen["who"] != "Ann" {
		t.Fatalf("values after restart: %#v", seen)
	}
	if raw, ok := seen["raw"].(map[string]any); !ok || raw["n"] != float64(7) {
		t.Fatalf("an unregistered value after restart: %#v", seen["raw"])
	}
	if typed.City != "Rome" || len(typed.Dates) != 1 || rawN.N != 7 {
		t.Fatalf("typed values after restart: %+v %+v", typed, rawN)
	}
	// The first Runner's model was asked once, the second's twice: nothing
	// ran again.
	if len(m.Calls()) != 2 {
		t.Fatalf("the model was asked %d times after the restart", len(m.Calls()))
	}
}

// custom is an agent that is not one of the package's: it interrupts with
// NewInterruptEvent and resumes from its state.
type custom struct{}

func (custom) Name(context.Context) string        { return "Approver" }
func (custom) Description(context.Context) string { return "asks for approval" }
func (custom) Run(context.Context, *adk.AgentInput, ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	gen.Send(adk.EventFromMessage(schema.AssistantMessage("I need approval.", nil), nil, schema.Assistant, ""))
	gen.Send(adk.NewInterruptEvent("approve?", map[string]int{"amount": 120}))
	gen.Close()
	return it
}

func (custom) Resume(_ context.Context, info *adk.ResumeInfo, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	var st map[string]int
	if err := json.Unmarshal(info.State, &st); err != nil {
		gen.Send(adk.ErrorEvent(err))
	} else {
		gen.Send(adk.EventFromMessage(schema.AssistantMessage(
			"amount "+itoa(st["amount"])+" "+info.Data.(string)+" at "+info.PointID, nil), nil, schema.Assistant, ""))
	}
	gen.Close()
	return it
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestCustomResumableAgent(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Flow", SubAgents: []adk.Agent{custom{},
		newAgent(t, "Done", "", "", modeltest.New(answer("finished")))}})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq, CheckPointStore: store})
	evs := drain(t, r.Query(ctx, "pay", adk.WithCheckPointID("cp")))
	expectEvents(t, evs,
		`Approver [Flow Approver] says "I need approval."`,
		`Approver [Flow Approver] => interrupted`,
	)
	p := interrupted(t, evs).Points[0]
	if p.ID != "Flow/Approver" || p.Info != "approve?" {
		t.Fatalf("point %+v", p)
	}
	expectEvents(t, resume(t, r, "cp", adk.ResumeWith(p.ID, "approved")),
		`Approver [Flow Approver] says "amount 120 approved at Flow/Approver"`,
		`Done [Flow Approver Done] says "finished"`,
	)
}

func TestDeterministicTransfer(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	supModel := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"Worker"}`), answer("all done"))
	workerModel := modeltest.New(callTool("ask_user", `{"question":"Detail?"}`), answer("work done"))
	worker := adk.AgentWithDeterministicTransferTo(ctx, &adk.DeterministicTransferConfig{
		Agent: newAgent(t, "Worker", "works", "", workerModel, askTool(t)), ToAgentNames: []string{"Boss"}})
	root, err := adk.SetSubAgents(ctx, newAgent(t, "Boss", "bosses", "", supModel), []adk.Agent{worker})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store})
	info := interrupted(t, drain(t, r.Query(ctx, "do it", adk.WithCheckPointID("cp"))))
	// Resumed, the worker finishes and hands back to Boss as if its model had.
	evs := resume(t, r, "cp", adk.ResumeWith(info.Points[0].ID, "more"))
	expectEvents(t, evs,
		`Worker [Boss Worker] tool ask_user: to «Detail?» the person said: more`,
		`Worker [Boss Worker] says "work done"`,
		`Worker [Boss Worker] calls transfer_to_agent{"agent_name":"Boss"}`,
		`Worker [Boss Worker] tool transfer_to_agent: successfully transferred to agent [Boss] => transfer Boss`,
		`Boss [Boss Worker Boss] says "all done"`,
	)
	call, result := evs[2].Output.MessageOutput.Message, evs[3].Output.MessageOutput.Message
	if call.Role != schema.Assistant || result.ToolCallID != call.ToolCalls[0].ID || result.ToolCallID == "" {
		t.Fatalf("transfer messages %+v %+v", call, result)
	}
}

// All the depths at once: after a transfer, in a step of a sequence, in two
// parallel branches, one of them inside an agent used as a tool.
func TestInterruptEverywhereAtOnce(t *testing.T) {
	ctx := context.Background()
	store := &adk.MemoryCheckPointStore{}
	inner := newAgent(t, "Inner", "asks deep inside", "",
		modeltest.New(callTool("ask_user", `{"question":"deep?"}`), answer("inner done")), askTool(t))
	a := newAgent(t, "A", "", "", modeltest.New(callTool("Inner", `{"request":"go deep"}`), answer("a done")), adk.NewAgentTool(ctx, inner))
	b := newAgent(t, "B", "", "", modeltest.New(callTool("ask_user", `{"question":"shallow?"}`), answer("b done")), askTool(t))
	par, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "Par", SubAgents: []adk.Agent{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	finalModel := modeltest.New(answer("all done"))
	pipeline, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Pipeline", Description: "does it all",
		SubAgents: []adk.Agent{par, newAgent(t, "Final", "", "", finalModel)}})
	if err != nil {
		t.Fatal(err)
	}
	root, err := adk.SetSubAgents(ctx, newAgent(t, "Router", "", "",
		modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"Pipeline"}`))), []adk.Agent{pipeline})
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store})
	evs := drain(t, r.Query(ctx, "go", adk.WithCheckPointID("cp")))
	var ids []string
	for _, ev := range evs {
		if ev.Action != nil && ev.Action.Interrupted != nil {
			for _, p := range ev.Action.Interrupted.Points {
				ids = append(ids, p.ID)
			}
		}
	}
	slices.Sort(ids)
	want := []string{"Router/Pipeline/Par/A#call_Inner>Inner#call_ask_user", "Router/Pipeline/Par/B#call_ask_user"}
	if !slices.Equal(ids, want) {
		t.Fatalf("points %q in %q", ids, describeAll(evs))
	}
	evs = resume(t, r, "cp", adk.ResumeWith(ids[0], "very"), adk.ResumeWith(ids[1], "a bit"))
	last := evs[len(evs)-1]
	if describe(last) != `Final [Router Pipeline Par Final] says "all done"` {
		t.Fatalf("events %q", describeAll(evs))
	}
	got := describeInput(finalModel.Calls()[0].Input)
	for _, line := range []string{
		"user: For context: [A] `Inner` tool returned result: inner done",
		"user: For context: [B] `ask_user` tool returned result: to «shallow?» the person said: a bit",
	} {
		if !slices.Contains(got, line) {
			t.Fatalf("Final's input lacks %q: %q", line, got)
		}
	}
}
