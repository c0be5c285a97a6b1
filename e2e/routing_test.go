package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

// routingRow is a request to the default mesh, the agent the router hands
// it to ("" for none: the router answers itself) and what the answer must
// say, as routingCheck reads it.
type routingRow struct {
	request string
	agent   string
	// steps are the plan a planner row must make.
	steps []step
	// want are what the answer must say, case aside: the city, the
	// result, the topic of the findings, the findings given.
	want []string
}

// step is a step of a plan and the agent the planner's executor asks to
// do it ("" for none: the executor answers the step itself).
type step struct{ text, agent string }

// routingRows are requests phrased the way people phrase them, for every
// agent of the default mesh.
var routingRows = []routingRow{
	{"What's the weather in Paris?", "WeatherAgent", nil, []string{"Paris"}},
	{"Is it raining in London?", "WeatherAgent", nil, []string{"London"}},
	{"How hot is it in Cairo today?", "WeatherAgent", nil, []string{"Cairo"}},
	{"What's the temperature in Tokyo right now?", "WeatherAgent", nil, []string{"Tokyo"}},
	{"Will it be windy in Chicago?", "WeatherAgent", nil, []string{"Chicago"}},
	{"Is it sunny in Rome?", "WeatherAgent", nil, []string{"Rome"}},
	{"What's the weather like in New York?", "WeatherAgent", nil, []string{"New York"}},

	{"hello there", "ChatAgent", nil, nil},
	{"Hi!", "ChatAgent", nil, nil},
	{"Good evening!", "ChatAgent", nil, nil},
	{"Tell me a joke", "ChatAgent", nil, nil},
	{"Thanks for your help!", "ChatAgent", nil, nil},
	{"Let's chat about jazz music", "ChatAgent", nil, nil},

	{"How much is 12 percent of 250?", "MathAgent", nil, []string{"= 30"}},
	{"What's 15% of 80?", "MathAgent", nil, []string{"= 12"}},
	{"what is seven times eight", "MathAgent", nil, []string{"= 56"}},
	{"What is the square root of 144?", "MathAgent", nil, []string{"= 12"}},
	{"2 to the power of 10", "MathAgent", nil, []string{"= 1024"}},
	{"twenty plus 5", "MathAgent", nil, []string{"= 25"}},
	{"(17 + 25) * 3", "MathAgent", nil, []string{"= 126"}},
	{"divide 100 by 8", "MathAgent", nil, []string{"= 12.5"}},
	{"Calculate 3.5 * 4", "MathAgent", nil, []string{"= 14"}},
	{"What's 45 divided by 9?", "MathAgent", nil, []string{"= 5"}},
	{"What is 3 squared plus 4 squared?", "MathAgent", nil, []string{"= 25"}},
	{"How much is 7% of 1,200?", "MathAgent", nil, []string{"= 84"}},

	{"Research checkpoints", "ResearchAgent", nil, []string{"checkpoint"}},
	{"What do the docs say about the gateway?", "ResearchAgent", nil, []string{"gateway"}},
	{"Search the documentation for push notifications", "ResearchAgent", nil, []string{"push notification"}},
	{"Find what the docs say about NATS", "ResearchAgent", nil, []string{"NATS"}},
	{"Search the docs for interrupts", "ResearchAgent", nil, []string{"interrupt"}},

	{"Summarize these findings: checkpoints are saved after every step, and a resumed run continues from the last one",
		"WriterAgent", nil, []string{"checkpoints are saved after every step"}},
	{"Write a short summary of these notes: the gateway retries a failed hop, then fails the task",
		"WriterAgent", nil, []string{"the gateway retries a failed hop"}},
	{"Turn these notes into a short report: the mesh has eight agents, a gateway and NATS",
		"WriterAgent", nil, []string{"the mesh has eight agents"}},
	{"Draft a summary of these findings: tasks are kept in memory or in NATS",
		"WriterAgent", nil, []string{"tasks are kept in memory or in NATS"}},

	{"Write a report on checkpoints", "SupervisorAgent", nil, []string{"checkpoint"}},
	{"Research the gateway and write a report", "SupervisorAgent", nil, []string{"gateway"}},
	{"Prepare a report about push notifications", "SupervisorAgent", nil, []string{"push notification"}},
	{"Could you research NATS and write me a report?", "SupervisorAgent", nil, []string{"NATS"}},
	{"Write a report on the offline model", "SupervisorAgent", nil, []string{"offline model"}},

	{"Make a plan: calculate 15% of 80, then research checkpoints", "PlannerAgent",
		[]step{{"calculate 15% of 80", "MathAgent"}, {"research checkpoints", "ResearchAgent"}}, []string{"= 12", "checkpoint"}},
	{"Plan these steps: research the gateway, then calculate 2 to the power of 10", "PlannerAgent",
		[]step{{"research the gateway", "ResearchAgent"}, {"calculate 2 to the power of 10", "MathAgent"}}, []string{"gateway", "= 1024"}},
	{"Plan: calculate 2 + 3, then calculate 4 * 5", "PlannerAgent",
		[]step{{"calculate 2 + 3", "MathAgent"}, {"calculate 4 * 5", "MathAgent"}}, []string{"= 5", "= 20"}},
	{"Plan a 3-step trip from Paris to Rome and compute the total cost of 120 + 80 + 45", "PlannerAgent",
		[]step{{"Plan a 3-step trip from Paris to Rome", ""}, {"compute the total cost of 120 + 80 + 45", "MathAgent"}},
		[]string{"= 245"}},
	{"Plan my budget: add up the costs 1200 + 350 + 75, then research the gateway", "PlannerAgent",
		[]step{{"add up the costs 1200 + 350 + 75", "MathAgent"}, {"research the gateway", "ResearchAgent"}},
		[]string{"= 1625", "gateway"}},
	{"Help me plan a party: invite 12 friends, then compute 12 times 15", "PlannerAgent",
		[]step{{"invite 12 friends", ""}, {"compute 12 times 15", "MathAgent"}}, []string{"= 180"}},

	{"Book me a flight to Rome", "", nil, nil},
	{"Recommend a movie", "", nil, nil},
	{"Who won the football match yesterday?", "", nil, nil},
	{"What is the meaning of life?", "", nil, nil},
}

// TestRouting asks the default mesh (deploy/topology.yaml over the
// mesh's services, each a process, with the offline model) every row
// of routingRows through its gateway, and checks which agents ran and
// what they answered.
func TestRouting(t *testing.T) {
	m := newMesh(t)
	urls := map[string]string{}
	for _, name := range []string{"weather", "chat", "math", "research", "writer"} {
		_, urls[name] = m.service(name)
	}
	_, urls["supervisor"] = m.service("supervisor", "--research-url", urls["research"], "--writer-url", urls["writer"])
	_, urls["planner"] = m.service("planner", "--math-url", urls["math"], "--research-url", urls["research"])
	_, urls["router"] = m.service("router")
	// The default topology, on the addresses the services got.
	topology := string(deploy.Topology)
	defaults, err := gateway.ParseTopology(deploy.Topology)
	if err != nil {
		t.Fatal(err)
	}
	for name, url := range urls {
		at, ok := defaults.Agents[name]
		if !ok || !strings.Contains(topology, at) {
			t.Fatalf("the default topology has no %s at %s", name, at)
		}
		topology = strings.ReplaceAll(topology, at, url)
	}
	_, gw := m.gateway(topology)
	mesh := m.remote(gw)

	agents := map[string]bool{}
	for _, row := range routingRows {
		agents[row.agent] = true
		t.Run(row.request, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: mesh}).Query(ctx, row.request))
			routingCheck(t, row, evs)
		})
	}
	for _, name := range []string{"", "WeatherAgent", "ChatAgent", "MathAgent", "ResearchAgent", "WriterAgent", "SupervisorAgent", "PlannerAgent"} {
		if !agents[name] {
			t.Errorf("no row for %q", name)
		}
	}
	if len(routingRows) < 40 {
		t.Errorf("%d rows", len(routingRows))
	}
}

// citation is how the research agent cites a document of the docs.
var citation = regexp.MustCompile(`\[1\] (?:docs/[\w.-]+\.md|README\.md) — `)

// routingCheck checks a row's events: the agents that ran, in order (the
// events' authors), and the substance of the answer.
func routingCheck(t *testing.T, row routingRow, evs []*adk.AgentEvent) {
	t.Helper()
	var route []string
	said := map[string][]string{} // each agent's answers, in order
	for _, ev := range evs {
		if ev.Err != nil {
			t.Fatalf("%s in\n  %s", adktest.Describe(ev), strings.Join(adktest.DescribeAll(evs), "\n  "))
		}
		if len(route) == 0 || route[len(route)-1] != ev.AgentName {
			route = append(route, ev.AgentName)
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Role == schema.Assistant {
			if text := ev.Output.MessageOutput.Message.Content; text != "" {
				said[ev.AgentName] = append(said[ev.AgentName], text)
			}
		}
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"; route %v, events\n  %s", append(args, route, strings.Join(adktest.DescribeAll(evs), "\n  "))...)
	}
	last := func(agent string) string {
		t.Helper()
		if len(said[agent]) == 0 {
			fail("%s said nothing", agent)
		}
		return said[agent][len(said[agent])-1]
	}
	has := func(agent, text string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(strings.ToLower(text), strings.ToLower(w)) {
				fail("%s's answer has no %q: %q", agent, w, text)
			}
		}
	}

	want := []string{"RouterAgent"}
	switch row.agent {
	case "":
	case "SupervisorAgent":
		want = append(want, "SupervisorAgent", "ResearchAgent", "SupervisorAgent", "WriterAgent", "SupervisorAgent")
	case "PlannerAgent":
		want = append(want, "Planner")
		for range row.steps {
			want = append(want, "Executor", "Replanner")
		}
	default:
		want = append(want, row.agent)
	}
	if !slices.Equal(route, want) {
		fail("route %v, want %v", route, want)
	}
	final := evs[len(evs)-1]
	if final.AgentName != want[len(want)-1] {
		fail("the last event is %s's", final.AgentName)
	}
	answer := last(final.AgentName)

	switch row.agent {
	case "":
		has("RouterAgent", answer, "[offline model] You asked: "+row.request)
	case "WeatherAgent":
		has(row.agent, answer, "the weather service is offline")
		has(row.agent, answer, row.want...)
	case "ChatAgent":
		has(row.agent, answer, "[offline model]", row.request)
	case "MathAgent", "WriterAgent":
		has(row.agent, answer, row.want...)
	case "ResearchAgent":
		if !citation.MatchString(answer) {
			fail("the research cites no document: %q", answer)
		}
		has(row.agent, answer, row.want...)
	case "SupervisorAgent":
		findings := last("ResearchAgent")
		if !citation.MatchString(findings) {
			fail("the research cites no document: %q", findings)
		}
		has("ResearchAgent", findings, row.want...)
		// The report, and the supervisor's answer, have the findings.
		first, _, _ := strings.Cut(strings.TrimPrefix(findings, "[offline model] "), "\n")
		has("WriterAgent", last("WriterAgent"), "Building on what ResearchAgent said: "+first)
		has("SupervisorAgent", answer, first)
	case "PlannerAgent":
		plan := said["Planner"]
		var numbered strings.Builder
		var asked []string // the agents the executor asks, step by step
		for i, s := range row.steps {
			fmt.Fprintf(&numbered, "%d. %s\n", i+1, s.text)
			if s.agent != "" {
				asked = append(asked, s.agent+" "+s.text)
			}
		}
		if len(plan) != 1 || !strings.Contains(plan[0]+"\n", numbered.String()) {
			fail("the plan %q, want the steps\n%s", plan, numbered.String())
		}
		// The executor hands each step to the agent whose skills fit it,
		// the step as the request.
		var calls []string
		for _, ev := range evs {
			if ev.AgentName == "Executor" && ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
				for _, tc := range ev.Output.MessageOutput.Message.ToolCalls {
					var args struct {
						Request string `json:"request"`
					}
					if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
						fail("the executor calls %s with %s: %v", tc.Function.Name, tc.Function.Arguments, err)
					}
					calls = append(calls, tc.Function.Name+" "+args.Request)
				}
			}
		}
		if !slices.Equal(calls, asked) {
			fail("the executor asked %q, want %q", calls, asked)
		}
		// The answer is built from the steps' results, not the replanner's
		// prompt.
		if strings.Contains(answer, "Every step is done") || strings.Contains(answer, "Respond with") {
			fail("the answer repeats the replanner's prompt: %q", answer)
		}
		for _, s := range row.steps {
			has("Replanner", answer, s.text)
		}
		has("Replanner", answer, row.want...)
	}
}
