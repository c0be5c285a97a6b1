package bridge_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }

// serve serves agent as an A2A agent on 127.0.0.1 until the test ends and
// returns its URL.
func serveAgent(t *testing.T, agent adk.Agent, cfg ...func(*bridge.ExecutorConfig)) string {
	t.Helper()
	ctx := context.Background()
	ln, url := a2atest.Listen(t)
	// The executor reads the server's task store, as a service's does.
	ec := bridge.ExecutorConfig{Agent: agent, Tasks: new(taskstore.Memory)}
	for _, f := range cfg {
		f(&ec)
	}
	exec, err := bridge.NewExecutor(ctx, ec)
	if err != nil {
		t.Fatal(err)
	}
	sc := server.Config{Card: bridge.Card(ctx, agent, url), Executor: exec}
	if tasks, ok := ec.Tasks.(taskstore.Store); ok {
		sc.Tasks = tasks
	}
	h := a2atest.NewHandler(t, sc)
	a2atest.ServeOn(t, ln, h, jsonrpcserver.Config{})
	return url
}

func remote(t *testing.T, url string) *bridge.RemoteAgent {
	t.Helper()
	r, err := bridge.NewRemoteAgent(context.Background(), bridge.RemoteConfig{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Client().CloseIdleConnections)
	return r
}

func agent(t *testing.T, name, desc string, m model.ChatModel, tools ...tool.Tool) *adk.ChatModelAgent {
	t.Helper()
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Model: m, ToolsConfig: adk.ToolsConfig{Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustTool[In, Out any](t *testing.T, name, desc string, fn func(context.Context, In) (Out, error)) tool.Tool {
	t.Helper()
	tl, err := tool.FromFunc(name, desc, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

type cityIn struct {
	City string `json:"city"`
}

func weatherTool(t *testing.T) tool.Tool {
	return mustTool(t, "get_weather", "Get the weather of a city", func(_ context.Context, in cityIn) (string, error) {
		return "the temperature in " + in.City + " is 25°C", nil
	})
}

var (
	answer   = modeltest.Answer
	callTool = modeltest.CallTool
)

func TestRemoteAgentRuns(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			ctx := context.Background()
			m := modeltest.New(callTool("get_weather", `{"city":"Beijing"}`), answer("It is 25°C in Beijing."))
			url := serveAgent(t, agent(t, "WeatherAgent", "Answers questions about the weather", m, weatherTool(t)))
			r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, url), EnableStreaming: streaming})
			evs := adktest.Drain(t, r.Query(ctx, "What's the weather in Beijing?"))
			adktest.Expect(t, evs,
				`WeatherAgent [WeatherAgent] calls get_weather{"city":"Beijing"}`,
				`WeatherAgent [WeatherAgent] tool get_weather: the temperature in Beijing is 25°C`,
				`WeatherAgent [WeatherAgent] says "It is 25°C in Beijing."`,
			)
			if mv := evs[2].Output.MessageOutput; mv.Role != schema.Assistant {
				t.Fatalf("answer role %q", mv.Role)
			}
		})
	}
}

func TestTransferIntoAndOutOfARemoteAgent(t *testing.T) {
	ctx := context.Background()
	weatherModel := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"RouterAgent"}`))
	url := serveAgent(t, agent(t, "WeatherAgent", "Answers questions about the weather", weatherModel, weatherTool(t)))
	routerModel := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`), answer("I will answer myself."))
	root, err := adk.SetSubAgents(ctx, agent(t, "RouterAgent", "Routes requests", routerModel), []adk.Agent{remote(t, url)})
	if err != nil {
		t.Fatal(err)
	}
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "Tell me a joke"))
	adktest.Expect(t, evs,
		`RouterAgent [RouterAgent] calls transfer_to_agent{"agent_name":"WeatherAgent"}`,
		`RouterAgent [RouterAgent] tool transfer_to_agent: successfully transferred to agent [WeatherAgent] => transfer WeatherAgent`,
		`WeatherAgent [RouterAgent WeatherAgent] calls transfer_to_agent{"agent_name":"RouterAgent"}`,
		`WeatherAgent [RouterAgent WeatherAgent] tool transfer_to_agent: successfully transferred to agent [RouterAgent] => transfer RouterAgent`,
		`RouterAgent [RouterAgent WeatherAgent RouterAgent] says "I will answer myself."`,
	)
	// The remote agent got the caller's history, and the caller's parent
	// as a transfer target.
	call := weatherModel.Calls()[0]
	got := adktest.DescribeInput(call.Input)
	if !slices.Contains(got, "user: For context: [RouterAgent] called tool `transfer_to_agent` with arguments: {\"agent_name\":\"WeatherAgent\"}") ||
		!strings.Contains(got[0], "- RouterAgent: Routes requests") {
		t.Fatalf("remote input %q", got)
	}
	// And the router, back, saw what the remote agent did.
	if got := adktest.DescribeInput(routerModel.Calls()[1].Input); !slices.Contains(got,
		"user: For context: [WeatherAgent] `transfer_to_agent` tool returned result: successfully transferred to agent [RouterAgent]") {
		t.Fatalf("router's second input %q", got)
	}
}
