package bridge_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/adktest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// router is a router on the offline model with subs to transfer to.
func router(t *testing.T, name, desc string, subs ...adk.Agent) adk.Agent {
	t.Helper()
	r, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Instruction: "You route requests. Answer only what no other agent fits.", Model: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	root, err := adk.SetSubAgents(context.Background(), r, subs)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

const routes = "Routes each request to the agent that can answer it"

// A plan-execute agent served in another process and reached by a transfer
// plans the person's request, not the transfer's result (issue 13): the
// context the caller's history becomes crosses the wire as context, over
// one hop and over two (a served router that transfers onward, whose input
// came over the wire itself).
func TestPlanAfterTransferToARemoteAgent(t *testing.T) {
	const request = "Plan a 3-step trip from Paris to Rome and compute the total cost of 120 + 80 + 45"
	const plan = `"Plan:\n1. Plan a 3-step trip from Paris to Rome\n2. compute the total cost of 120 + 80 + 45"`
	planner := serveAgent(t, adktest.Planner(t))
	// The front router is served too; its description fits the request,
	// so the caller's router picks it, and it transfers on.
	front := serveAgent(t, router(t, "FrontAgent", "Plans multi-step tasks through its planning agent", remote(t, planner)))
	for _, tc := range []struct {
		name, url, planLine string
	}{
		{"one hop", planner, `Planner [RouterAgent PlannerAgent Planner] says ` + plan},
		{"two hops", front, `Planner [RouterAgent FrontAgent PlannerAgent Planner] says ` + plan},
	} {
		for _, streaming := range []bool{false, true} {
			ctx := context.Background()
			root := router(t, "RouterAgent", routes, remote(t, tc.url))
			evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, EnableStreaming: streaming}).Query(ctx, request))
			lines := adktest.DescribeAll(evs)
			if !slices.Contains(lines, tc.planLine) {
				t.Fatalf("%s, streaming %v: no plan of the request; events:\n  %s", tc.name, streaming, strings.Join(lines, "\n  "))
			}
			for _, l := range lines {
				if strings.HasPrefix(l, "Planner ") || strings.HasPrefix(l, "Executor ") || strings.HasPrefix(l, "Replanner ") {
					if strings.Contains(l, "transferred") || strings.Contains(l, "For context") {
						t.Fatalf("%s, streaming %v: the plan-execute agent worked on context: %s", tc.name, streaming, l)
					}
				}
			}
		}
	}
}

// serveEcho serves the echo agent, an A2A agent that knows nothing of ADK.
func serveEcho(t *testing.T) string {
	t.Helper()
	ln, url := a2atest.Listen(t)
	a2atest.ServeOn(t, ln, a2atest.NewHandler(t, server.Config{Card: echo.Card(url), Executor: new(echo.Executor)}), jsonrpcserver.Config{})
	return url
}

// A plain A2A agent reached by a transfer is asked the person's request,
// not the context after it.
func TestPlainAgentAfterTransferIsAskedTheRequest(t *testing.T) {
	ctx := context.Background()
	root := router(t, "RouterAgent", routes, remote(t, serveEcho(t)))
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "Please echo: the sea is calm"))
	adktest.Expect(t, evs,
		`RouterAgent [RouterAgent] calls transfer_to_agent{"agent_name":"echo"}`,
		`RouterAgent [RouterAgent] tool transfer_to_agent: successfully transferred to agent [echo] => transfer echo`,
		`echo [RouterAgent echo] says "Please echo: the sea is calm"`,
	)
}

// The workers of a supervisor and of a sequential workflow that a router
// transfers to work on the person's request: the one on the offline model,
// and the plain A2A agent, which is sent the request's text alone. The
// team runs in the router's process or is served in another.
func TestTeamAfterTransferWorksOnTheRequest(t *testing.T) {
	const request = "Research the sea, then echo what was found"
	echoURL := serveEcho(t)
	ctx := context.Background()
	teams := map[string]func() adk.Agent{
		"SupervisorAgent": func() adk.Agent {
			sup, err := supervisor.New(ctx, &supervisor.Config{
				Supervisor: agent(t, "SupervisorAgent", "Coordinates research and echoing: researches a topic, then echoes the findings", offline.New()),
				SubAgents:  []adk.Agent{agent(t, "ResearchAgent", "Researches topics and reports the findings", offline.New()), remote(t, echoURL)},
			})
			if err != nil {
				t.Fatal(err)
			}
			return sup
		},
		"PipelineAgent": func() adk.Agent {
			seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{
				Name: "PipelineAgent", Description: "Researches a topic, then echoes the findings",
				SubAgents: []adk.Agent{agent(t, "ResearchAgent", "", offline.New()), remote(t, echoURL)},
			})
			if err != nil {
				t.Fatal(err)
			}
			return seq
		},
	}
	for name, team := range teams {
		for _, served := range []bool{false, true} {
			sub := team()
			if served {
				sub = remote(t, serveAgent(t, sub))
			}
			evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: router(t, "RouterAgent", routes, sub)}).Query(ctx, request))
			answered := map[string]string{}
			for _, ev := range evs {
				if ev.Err != nil {
					t.Fatal(ev.Err)
				}
				if ev.Output != nil && ev.Output.MessageOutput.Message.Content != "" && answered[ev.AgentName] == "" {
					answered[ev.AgentName] = ev.Output.MessageOutput.Message.Content
				}
			}
			if a := answered["ResearchAgent"]; !strings.HasPrefix(a, offline.Label+" You asked: "+request) || answered["echo"] != request {
				t.Errorf("%s (served %v): ResearchAgent answered %q, echo %q\nevents:\n  %s",
					name, served, a, answered["echo"], strings.Join(adktest.DescribeAll(evs), "\n  "))
			}
		}
	}
}
