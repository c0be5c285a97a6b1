package adk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

func contextMessage(agent, text string) *schema.Message {
	m := schema.UserMessage("For context: [" + agent + "] " + text)
	m.Extra = map[string]any{adk.ContextMessageKey: agent}
	return m
}

func TestUserRequest(t *testing.T) {
	user, said := schema.UserMessage, schema.AssistantMessage
	for _, tc := range []struct {
		name string
		msgs []*schema.Message
		want string // "" for none
	}{
		{"none", nil, ""},
		{"only context", []*schema.Message{contextMessage("A", "said: hi")}, ""},
		{"the request before context", []*schema.Message{user("plan a trip"), contextMessage("Router", "said: on it")}, "plan a trip"},
		{"the last turn's request", []*schema.Message{user("first"), said("answer", nil), user("second"), contextMessage("R", "said: x")}, "second"},
		{"unmarked context text is the person's", []*schema.Message{user("hi"), user("For context: I sail. Plan a trip")}, "For context: I sail. Plan a trip"},
		{"a nil message", []*schema.Message{user("ask"), nil}, "ask"},
		{"a mark without an agent", []*schema.Message{user("ask"), {Role: schema.User, Content: "x", Extra: map[string]any{adk.ContextMessageKey: ""}}}, "x"},
		{"not a user message", []*schema.Message{said("hello", nil), schema.ToolMessage("r", "c", "t")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := adk.UserRequest(tc.msgs)
			if tc.want == "" {
				if got != nil {
					t.Fatalf("got %s, want none", got)
				}
				return
			}
			if got == nil || got.Text() != tc.want {
				t.Fatalf("got %v, want %q", got, tc.want)
			}
		})
	}
	if adk.IsContext(nil) || adk.IsContext(user("For context: [A] said: x")) || !adk.IsContext(contextMessage("A", "said: x")) {
		t.Fatal("IsContext goes by the mark alone")
	}
}

// The messages a transfer hands the next agent are marked as context; the
// run's input is not.
func TestTransferMarksContext(t *testing.T) {
	ctx := context.Background()
	weather := modeltest.New(answer("sunny"))
	root, err := adk.SetSubAgents(ctx, newAgent(t, "RouterAgent", "routes", "", modeltest.New(
		callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))), []adk.Agent{newAgent(t, "WeatherAgent", "weather", "", weather)})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "weather?"))
	in := weather.Calls()[0].Input[1:] // after the system message
	if len(in) != 3 || adk.IsContext(in[0]) || !adk.IsContext(in[1]) || !adk.IsContext(in[2]) || in[2].Extra[adk.ContextMessageKey] != "RouterAgent" {
		t.Fatalf("input %q", describeInput(in))
	}
	if got := adk.UserRequest(in); got == nil || got.Text() != "weather?" {
		t.Fatalf("request %v", got)
	}
}

// ownRun runs its agent in a run of its own, on the input it is given, as
// an agent served in another process runs (bridge.RemoteAgent without the
// wire): the run's input is then the caller's whole input, context
// included.
type ownRun struct{ agent adk.Agent }

func (o ownRun) Name(ctx context.Context) string        { return o.agent.Name(ctx) }
func (o ownRun) Description(ctx context.Context) string { return o.agent.Description(ctx) }
func (o ownRun) Run(ctx context.Context, in *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: o.agent, EnableStreaming: in.EnableStreaming})
	return r.Run(ctx, in.Messages, adk.WithRunPath(adk.CurrentRunPath(ctx)))
}

const tripRequest = "Plan a 3-step trip from Paris to Rome and compute the total cost of 120 + 80 + 45"

// A plan-execute agent a router transfers to plans the person's request,
// not the transfer's result (issue 13), whether it runs in the router's
// run or in one of its own.
func TestPlanAfterTransfer(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(adk.Agent) adk.Agent
	}{
		{"sub-agent", func(a adk.Agent) adk.Agent { return a }},
		{"run of its own", func(a adk.Agent) adk.Agent { return ownRun{a} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			router := newAgent(t, "RouterAgent", "Routes each request to the agent that can answer it",
				"You route requests. Answer only what no other agent fits.", offline.New())
			root, err := adk.SetSubAgents(ctx, router, []adk.Agent{tc.wrap(adktest.Planner(t))})
			if err != nil {
				t.Fatal(err)
			}
			evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, tripRequest))
			lines := describeAll(evs)
			plan := `Planner [RouterAgent PlannerAgent Planner] says "Plan:\n1. Plan a 3-step trip from Paris to Rome\n2. compute the total cost of 120 + 80 + 45"`
			if len(lines) < 3 || lines[1] != `RouterAgent [RouterAgent] tool transfer_to_agent: successfully transferred to agent [PlannerAgent] => transfer PlannerAgent` ||
				lines[2] != plan {
				t.Fatalf("events:\n  %s", strings.Join(lines, "\n  "))
			}
			for _, l := range lines[2:] {
				if strings.Contains(l, "transferred") || strings.Contains(l, "For context") {
					t.Fatalf("the plan-execute agent worked on context: %s\nevents:\n  %s", l, strings.Join(lines, "\n  "))
				}
			}
		})
	}
}

// teams returns a supervisor and a sequential workflow whose workers, all
// on the offline model, research and write.
func teams(t *testing.T) []adk.Agent {
	t.Helper()
	ctx := context.Background()
	m := offline.New()
	sup, err := supervisor.New(ctx, &supervisor.Config{
		Supervisor: newAgent(t, "SupervisorAgent", "Coordinates research and writing: researches a topic, then writes a report on it", "", m),
		SubAgents: []adk.Agent{
			newAgent(t, "ResearchAgent", "Researches topics and reports the findings", "", m),
			newAgent(t, "WriterAgent", "Writes reports from the findings", "", m),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
		Name: "PipelineAgent", Description: "Researches a topic, then writes a report on it",
		SubAgents: []adk.Agent{newAgent(t, "Researcher", "", "", m), newAgent(t, "Writer", "", "", m)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return []adk.Agent{sup, seq}
}

// Each worker of a supervisor or a workflow reached by a transfer works on
// the person's request, also one that starts like context ("For context:
// I am new to Go. ..."): only adk's mark makes a message context.
func TestTeamAfterTransferWorksOnTheRequest(t *testing.T) {
	workers := map[string][]string{"SupervisorAgent": {"ResearchAgent", "WriterAgent"}, "PipelineAgent": {"Researcher", "Writer"}}
	for _, request := range []string{
		"Research goroutines and write a report on them",
		"For context: I am new to Go. Research goroutines and write a report on them",
	} {
		for i := range 2 {
			for _, own := range []bool{false, true} {
				ctx := context.Background()
				team := teams(t)[i]
				name := team.Name(ctx)
				if own {
					team = ownRun{team}
				}
				router := newAgent(t, "RouterAgent", "Routes each request to the agent that can answer it",
					"You route requests. Answer only what no other agent fits.", offline.New())
				root, err := adk.SetSubAgents(ctx, router, []adk.Agent{team})
				if err != nil {
					t.Fatal(err)
				}
				evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, request))
				answered := map[string]string{}
				for _, ev := range evs {
					if ev.Err != nil {
						t.Fatal(ev.Err)
					}
					if ev.Output != nil && ev.Output.MessageOutput.Message.Content != "" && answered[ev.AgentName] == "" {
						answered[ev.AgentName] = ev.Output.MessageOutput.Message.Content
					}
				}
				for _, w := range workers[name] {
					if a := answered[w]; !strings.HasPrefix(a, offline.Label+" You asked: "+request) {
						t.Errorf("%s (%T) after a transfer, on %q: %s answered %q\nevents:\n  %s",
							name, team, request, w, a, strings.Join(describeAll(evs), "\n  "))
					}
				}
			}
		}
	}
}
