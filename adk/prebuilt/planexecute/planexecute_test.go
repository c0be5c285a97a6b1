package planexecute_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/planexecute"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/calc"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type cityIn struct {
	City string `json:"city" desc:"the city"`
}

// travelTools are the seed's travel tools; searching hotels asks the person
// for a budget first.
func travelTools(t *testing.T) []tool.Tool {
	t.Helper()
	must := func(tl tool.Tool, err error) tool.Tool {
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	return []tool.Tool{
		must(tool.FromFunc("search_flights", "Search flights between two cities", func(_ context.Context, in struct {
			From string `json:"from" desc:"the city of departure"`
			To   string `json:"to" desc:"the destination city"`
		}) (string, error) {
			return "flight CA982 from " + in.From + " to " + in.To + ", 13:00", nil
		})),
		must(tool.FromFunc("search_hotels", "Search hotels in a city", func(ctx context.Context, in cityIn) (string, error) {
			budget, ok := adk.GetResumeData[string](ctx)
			if !ok {
				return "", adk.Interrupt(ctx, "What is your budget for hotels in "+in.City+"?")
			}
			return "hotel Peninsula in " + in.City + " within " + budget, nil
		})),
		must(tool.FromFunc("list_attractions", "List the attractions of a city", func(_ context.Context, in cityIn) (string, error) {
			return "attractions of " + in.City + ": Great Wall, Forbidden City", nil
		})),
	}
}

func travelAgent(t *testing.T, planner, executor, replanner model.ChatModel) adk.Agent {
	t.Helper()
	ctx := context.Background()
	p, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: planner})
	if err != nil {
		t.Fatal(err)
	}
	e, err := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: executor, ToolsConfig: adk.ToolsConfig{Tools: travelTools(t)}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: replanner})
	if err != nil {
		t.Fatal(err)
	}
	a, err := planexecute.New(ctx, &planexecute.Config{Planner: p, Executor: e, Replanner: r, MaxIterations: 5})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

const trip = "Plan a 3-day trip to Beijing: find flights from New York to Beijing, find hotels in Beijing and list attractions in Beijing"

func TestTravelPlanning(t *testing.T) {
	ctx := context.Background()
	planner := modeltest.New(modeltest.CallTool("plan", `{"steps":["Find flights from New York to Beijing","Find a hotel in Beijing","List attractions in Beijing"]}`))
	executor := modeltest.New(
		modeltest.CallTool("search_flights", `{"from":"New York","to":"Beijing"}`), modeltest.Answer("Flight CA982 at 13:00."),
		modeltest.CallTool("search_hotels", `{"city":"Beijing"}`), modeltest.Answer("The Peninsula.\nBreakfast included."),
		modeltest.CallTool("list_attractions", `{"city":"Beijing"}`), modeltest.Answer("Great Wall, Forbidden City."))
	replanner := modeltest.New(
		modeltest.CallTool("plan", `{"steps":["Find a hotel in Beijing","List attractions in Beijing"]}`),
		modeltest.CallTool("plan", `{"steps":["List attractions in Beijing"]}`),
		modeltest.CallTool("respond", `{"response":"Day 1: fly CA982 and check in at the Peninsula; days 2-3: Great Wall, Forbidden City."}`))
	store := &adk.MemoryCheckPointStore{}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: travelAgent(t, planner, executor, replanner), CheckPointStore: store})

	evs := adktest.Drain(t, r.Query(ctx, trip, adk.WithCheckPointID("trip")))
	adktest.Expect(t, evs,
		`Planner [PlanExecute Planner] says "Plan:\n1. Find flights from New York to Beijing\n2. Find a hotel in Beijing\n3. List attractions in Beijing"`,
		`Executor [PlanExecute Planner ExecuteReplan Executor] calls search_flights{"from":"New York","to":"Beijing"}`,
		`Executor [PlanExecute Planner ExecuteReplan Executor] tool search_flights: flight CA982 from New York to Beijing, 13:00`,
		`Executor [PlanExecute Planner ExecuteReplan Executor] says "Flight CA982 at 13:00."`,
		`Replanner [PlanExecute Planner ExecuteReplan Executor Replanner] says "Revised plan:\n1. Find a hotel in Beijing\n2. List attractions in Beijing"`,
		`Executor [PlanExecute Planner ExecuteReplan Executor Replanner Executor] calls search_hotels{"city":"Beijing"}`,
		`Executor [PlanExecute Planner ExecuteReplan Executor Replanner Executor] => interrupted`,
	)
	p := adktest.Interrupted(t, evs).Points[0]
	if p.Info != "What is your budget for hotels in Beijing?" {
		t.Fatalf("point %+v", p)
	}
	it, err := r.Resume(ctx, "trip", adk.ResumeWith(p.ID, "200 USD a night"))
	if err != nil {
		t.Fatal(err)
	}
	evs = adktest.Drain(t, it)
	const again = `PlanExecute Planner ExecuteReplan Executor Replanner Executor`
	adktest.Expect(t, evs,
		`Executor [`+again+`] tool search_hotels: hotel Peninsula in Beijing within 200 USD a night`,
		`Executor [`+again+`] says "The Peninsula.\nBreakfast included."`,
		`Replanner [`+again+` Replanner] says "Revised plan:\n1. List attractions in Beijing"`,
		`Executor [`+again+` Replanner Executor] calls list_attractions{"city":"Beijing"}`,
		`Executor [`+again+` Replanner Executor] tool list_attractions: attractions of Beijing: Great Wall, Forbidden City`,
		`Executor [`+again+` Replanner Executor] says "Great Wall, Forbidden City."`,
		`Replanner [`+again+` Replanner Executor Replanner] says "Day 1: fly CA982 and check in at the Peninsula; days 2-3: Great Wall, Forbidden City." => break loop (done true, iteration 2)`,
	)

	// The executor was asked for one step at a time, the step alone,
	// knowing what was done: a result of several lines under its step.
	third := adktest.DescribeInput(executor.Calls()[4].Input)
	if third[2] != "user: List attractions in Beijing" ||
		!strings.Contains(third[1], "Done so far:\n- Find flights from New York to Beijing: Flight CA982 at 13:00.\n"+
			"- Find a hotel in Beijing: The Peninsula.\n  Breakfast included.\n") {
		t.Fatalf("executor input for the third step %q", third)
	}
	// With nothing left, the replanner could only respond.
	if tools := replanner.Calls()[2].Tools; len(tools) != 1 || tools[0].Name != planexecute.RespondToolName {
		t.Fatalf("the last replanner call had tools %v", tools)
	}
}

func TestTravelPlanningOffline(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	store := &adk.MemoryCheckPointStore{}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: travelAgent(t, m, m, m), CheckPointStore: store})
	evs := adktest.Drain(t, r.Query(ctx, trip, adk.WithCheckPointID("trip")))
	p := adktest.Interrupted(t, evs).Points[0]
	it, err := r.Resume(ctx, "trip", adk.ResumeWith(p.ID, "200 USD"))
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, adktest.Drain(t, it)...)
	var calls []string
	for _, ev := range evs {
		if ev.Err != nil {
			t.Fatal(ev.Err)
		}
		if ev.Output != nil && ev.AgentName == "Executor" {
			for _, tc := range ev.Output.MessageOutput.Message.ToolCalls {
				calls = append(calls, tc.Function.Name+tc.Function.Arguments)
			}
		}
	}
	want := []string{`search_flights{"from":"New York","to":"Beijing"}`, `search_hotels{"city":"Beijing"}`, `list_attractions{"city":"Beijing"}`}
	if !slices.Equal(calls, want) {
		t.Fatalf("tool calls %v in\n  %s", calls, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
	first, last := evs[0], evs[len(evs)-1]
	if adktest.Describe(first) != `Planner [PlanExecute Planner] says "Plan:\n1. find flights from New York to Beijing\n2. find hotels in Beijing\n3. list attractions in Beijing"` {
		t.Fatalf("plan: %s", adktest.Describe(first))
	}
	// The answer is the results of the steps, not the replanner's prompt.
	const answer = offline.Label + " find flights from New York to Beijing: flight CA982 from New York to Beijing, 13:00\n" +
		"find hotels in Beijing: hotel Peninsula in Beijing within 200 USD\n" +
		"list attractions in Beijing: attractions of Beijing: Great Wall, Forbidden City"
	if text := last.Output.MessageOutput.Message.Content; last.AgentName != "Replanner" || last.Action == nil || last.Action.BreakLoop == nil ||
		text != answer {
		t.Fatalf("last event %s, want the answer %q", adktest.Describe(last), answer)
	}
}

// With agents as the executor's tools, each step goes to the agent whose
// skills fit it, whatever words the step uses, and the answer is built
// from what the agents said.
func TestAgentsAsToolsOffline(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	calculator, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "MathAgent", Description: "Calculates: arithmetic and math expressions",
		Instruction: "You calculate with the calculate tool.", Model: m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{calc.Tool()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mathAgent, err := adk.AgentWithConfig(ctx, calculator, adk.AgentConfig{Skills: []adk.Skill{{ID: "calculate", Name: "Calculate",
		Description: "Works out arithmetic written in symbols or in words", Tags: []string{"math", "arithmetic"},
		Examples: []string{"What is (17 + 25) * 3?", "How much is 12 percent of 250?"}}}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	e, err := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{adk.NewAgentTool(ctx, mathAgent)}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	a, err := planexecute.New(ctx, &planexecute.Config{Planner: p, Executor: e, Replanner: r})
	if err != nil {
		t.Fatal(err)
	}
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: a}).Query(ctx,
		"Plan a 3-step trip from Paris to Rome and compute the total cost of 120 + 80 + 45"))
	const path = "PlanExecute Planner ExecuteReplan Executor Replanner Executor"
	adktest.Expect(t, evs,
		`Planner [PlanExecute Planner] says "Plan:\n1. Plan a 3-step trip from Paris to Rome\n2. compute the total cost of 120 + 80 + 45"`,
		`Executor [PlanExecute Planner ExecuteReplan Executor] says "[offline model] You asked: Plan a 3-step trip from Paris to Rome"`,
		`Replanner [PlanExecute Planner ExecuteReplan Executor Replanner] says "Revised plan:\n1. compute the total cost of 120 + 80 + 45"`,
		`Executor [`+path+`] calls MathAgent{"request":"compute the total cost of 120 + 80 + 45"}`,
		`Executor [`+path+`] tool MathAgent: [offline model] 120 + 80 + 45 = 245`,
		`Executor [`+path+`] says "[offline model] 120 + 80 + 45 = 245"`,
		`Replanner [`+path+` Replanner] says "[offline model] Plan a 3-step trip from Paris to Rome: You asked: Plan a 3-step trip from Paris to Rome\n`+
			`compute the total cost of 120 + 80 + 45: 120 + 80 + 45 = 245" => break loop (done true, iteration 1)`,
	)
}
