package adk_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/model/openai"
	"github.com/a2amesh/a2amesh/adk/model/openai/openaitest"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// routerTree builds the seed's transfer scenario: RouterAgent with the
// sub-agents WeatherAgent (with a weather tool) and ChatAgent.
func routerTree(t *testing.T, router, weather, chat model.ChatModel) adk.Agent {
	t.Helper()
	ctx := context.Background()
	r := newAgent(t, "RouterAgent", "Routes each request to the agent that can answer it",
		"You route requests.", router)
	w := newAgent(t, "WeatherAgent", "Answers questions about the weather in a city",
		"You answer weather questions.", weather, weatherTool(t))
	c := newAgent(t, "ChatAgent", "Chats casually about anything",
		"You chat.", chat)
	root, err := adk.SetSubAgents(ctx, r, []adk.Agent{w, c})
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// weatherTranscript is the seed's transfer run: the router's transfer, the
// weather agent's tool call and result, and its answer.
func weatherTranscript(answer string) []string {
	return []string{
		`RouterAgent [RouterAgent] calls transfer_to_agent{"agent_name":"WeatherAgent"}`,
		`RouterAgent [RouterAgent] tool transfer_to_agent: successfully transferred to agent [WeatherAgent] => transfer WeatherAgent`,
		`WeatherAgent [RouterAgent WeatherAgent] calls get_weather{"city":"Beijing"}`,
		`WeatherAgent [RouterAgent WeatherAgent] tool get_weather: the temperature in Beijing is 25°C`,
		`WeatherAgent [RouterAgent WeatherAgent] says "` + answer + `"`,
	}
}

func TestTransferScenario(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		t.Run(map[bool]string{false: "generate", true: "stream"}[streaming], func(t *testing.T) {
			router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))
			weather := modeltest.New(callTool("get_weather", `{"city":"Beijing"}`), answer("It is 25°C in Beijing."))
			chat := modeltest.New()
			ctx := context.Background()
			runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, router, weather, chat), EnableStreaming: streaming})
			evs := drain(t, runner.Query(ctx, "What's the weather in Beijing?"))
			expectEvents(t, evs, weatherTranscript("It is 25°C in Beijing.")...)
			if evs[0].Output.MessageOutput.Role != schema.Assistant || evs[1].Output.MessageOutput.ToolName != adk.TransferToAgentToolName {
				t.Fatalf("roles: %+v %+v", evs[0].Output.MessageOutput, evs[1].Output.MessageOutput)
			}

			// The router's model was told whom it can transfer to, and got the tool.
			rc := router.Calls()
			sys := rc[0].Input[0]
			if sys.Role != schema.System || !strings.HasPrefix(sys.Content, "You route requests.\n\n") ||
				!strings.Contains(sys.Content, adk.TransferTargetsHeader+"\n- WeatherAgent: Answers questions about the weather in a city\n- ChatAgent: Chats casually about anything") {
				t.Fatalf("router instruction:\n%s", sys.Content)
			}
			if names := toolNames(rc[0].Tools); !slices.Equal(names, []string{adk.TransferToAgentToolName}) {
				t.Fatalf("router tools %v", names)
			}

			// WeatherAgent's input is the user's question and the router's
			// messages rewritten as context; it may transfer back to its parent.
			wc := weather.Calls()
			got := describeInput(wc[0].Input[1:])
			want := []string{
				"user: What's the weather in Beijing?",
				"user: For context: [RouterAgent] called tool `transfer_to_agent` with arguments: {\"agent_name\":\"WeatherAgent\"}",
				"user: For context: [RouterAgent] `transfer_to_agent` tool returned result: successfully transferred to agent [WeatherAgent]",
			}
			if !slices.Equal(got, want) {
				t.Fatalf("weather input\n got %q\nwant %q", got, want)
			}
			if !strings.Contains(wc[0].Input[0].Content, "- RouterAgent: Routes each request") {
				t.Fatalf("weather instruction does not offer the parent:\n%s", wc[0].Input[0].Content)
			}
			if names := toolNames(wc[0].Tools); !slices.Equal(names, []string{"get_weather", adk.TransferToAgentToolName}) {
				t.Fatalf("weather tools %v", names)
			}
			// The second call sees its own tool call and result as they were.
			got = describeInput(wc[1].Input[4:])
			want = []string{
				`assistant:  [call get_weather({"city":"Beijing"})]`,
				"tool(get_weather): the temperature in Beijing is 25°C",
			}
			if !slices.Equal(got, want) {
				t.Fatalf("weather second input\n got %q\nwant %q", got, want)
			}
			if len(chat.Calls()) != 0 {
				t.Fatal("ChatAgent ran")
			}
		})
	}
}

func toolNames(infos []*schema.ToolInfo) []string {
	var out []string
	for _, i := range infos {
		out = append(out, i.Name)
	}
	return out
}

func TestTransferFailedRoute(t *testing.T) {
	// Nothing fits: the router answers itself.
	router := modeltest.New(answer("I can only route weather and chat questions."))
	ctx := context.Background()
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, router, modeltest.New(), modeltest.New())})
	expectEvents(t, drain(t, runner.Query(ctx, "Book me a flight")),
		`RouterAgent [RouterAgent] says "I can only route weather and chat questions."`)
}

func TestTransferToUnknownAgent(t *testing.T) {
	router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"FlightAgent"}`))
	ctx := context.Background()
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, router, modeltest.New(), modeltest.New())})
	evs := drain(t, runner.Query(ctx, "Book me a flight"))
	last := evs[len(evs)-1]
	if !errors.Is(last.Err, adk.ErrAgentNotFound) || !strings.Contains(last.Err.Error(), "RouterAgent") ||
		!strings.Contains(last.Err.Error(), "FlightAgent") || last.AgentName != "RouterAgent" {
		t.Fatalf("last event: %s", describe(last))
	}
}

func TestTransferBackToParent(t *testing.T) {
	// Router -> Weather -> back to Router, which then answers with all of
	// it in view.
	router := modeltest.New(
		callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`),
		answer("Anything else?"))
	weather := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"RouterAgent"}`))
	ctx := context.Background()
	runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, router, weather, modeltest.New())})
	evs := drain(t, runner.Query(ctx, "hello"))
	expectEvents(t, evs,
		`RouterAgent [RouterAgent] calls transfer_to_agent{"agent_name":"WeatherAgent"}`,
		`RouterAgent [RouterAgent] tool transfer_to_agent: successfully transferred to agent [WeatherAgent] => transfer WeatherAgent`,
		`WeatherAgent [RouterAgent WeatherAgent] calls transfer_to_agent{"agent_name":"RouterAgent"}`,
		`WeatherAgent [RouterAgent WeatherAgent] tool transfer_to_agent: successfully transferred to agent [RouterAgent] => transfer RouterAgent`,
		`RouterAgent [RouterAgent WeatherAgent RouterAgent] says "Anything else?"`,
	)
	// The router sees its own messages as they were and Weather's as context.
	got := describeInput(router.Calls()[1].Input[1:])
	want := []string{
		"user: hello",
		`assistant:  [call transfer_to_agent({"agent_name":"WeatherAgent"})]`,
		"tool(transfer_to_agent): successfully transferred to agent [WeatherAgent]",
		"user: For context: [WeatherAgent] called tool `transfer_to_agent` with arguments: {\"agent_name\":\"RouterAgent\"}",
		"user: For context: [WeatherAgent] `transfer_to_agent` tool returned result: successfully transferred to agent [RouterAgent]",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("router's second input\n got %q\nwant %q", got, want)
	}
}

func TestDisallowTransferToParent(t *testing.T) {
	ctx := context.Background()
	weatherModel := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"RouterAgent"}`))
	w, err := adk.AgentWithConfig(ctx, newAgent(t, "WeatherAgent", "weather", "", weatherModel), adk.AgentConfig{DisallowTransferToParent: true})
	if err != nil {
		t.Fatal(err)
	}
	router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))
	root, err := adk.SetSubAgents(ctx, newAgent(t, "RouterAgent", "routes", "", router), []adk.Agent{w})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "hi"))
	// WeatherAgent has no transfer tool: its model's transfer call is answered with an error result,
	// and the script then runs out.
	if tools := weatherModel.Calls()[0].Tools; len(tools) != 0 {
		t.Fatalf("weather got tools %v", toolNames(tools))
	}
	last := evs[len(evs)-1]
	if last.Err == nil || !strings.Contains(last.Err.Error(), "has no tools") {
		t.Fatalf("last event: %s", describe(last))
	}
}

func TestSetSubAgentsRules(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New()
	a := newAgent(t, "A", "", "", m)
	b := newAgent(t, "B", "", "", m)
	if _, err := adk.SetSubAgents(ctx, a, []adk.Agent{b, newAgent(t, "B", "", "", m)}); err == nil {
		t.Fatal("two sub-agents named B accepted")
	}
	if _, err := adk.SetSubAgents(ctx, newAgent(t, "X", "", "", m), []adk.Agent{newAgent(t, "X", "", "", m)}); err == nil {
		t.Fatal("a sub-agent named like its parent accepted")
	}
	p1 := newAgent(t, "P1", "", "", m)
	if _, err := adk.SetSubAgents(ctx, p1, []adk.Agent{b}); err != nil {
		t.Fatal(err)
	}
	if _, err := adk.SetSubAgents(ctx, newAgent(t, "P2", "", "", m), []adk.Agent{b}); err == nil {
		t.Fatal("an agent got two parents")
	}
	if _, err := adk.SetSubAgents(ctx, p1, []adk.Agent{newAgent(t, "C", "", "", m)}); err == nil {
		t.Fatal("sub-agents set twice")
	}
}

func TestHistoryRewriter(t *testing.T) {
	ctx := context.Background()
	router := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`))
	weatherModel := modeltest.New(answer("sunny"))
	var seen []*adk.HistoryEntry
	w, err := adk.AgentWithConfig(ctx, newAgent(t, "WeatherAgent", "weather", "", weatherModel),
		adk.AgentConfig{HistoryRewriter: func(_ context.Context, entries []*adk.HistoryEntry) ([]*schema.Message, error) {
			seen = entries
			return []*schema.Message{schema.UserMessage("only this")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	root, err := adk.SetSubAgents(ctx, newAgent(t, "RouterAgent", "routes", "", router), []adk.Agent{w})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: root}).Query(ctx, "weather?"))
	if len(seen) != 3 || !seen[0].IsUserInput || seen[1].AgentName != "RouterAgent" || seen[2].Message.Role != schema.Tool {
		t.Fatalf("entries: %+v", seen)
	}
	if got := describeInput(weatherModel.Calls()[0].Input[1:]); !slices.Equal(got, []string{"user: only this"}) {
		t.Fatalf("weather input %q", got)
	}
}

// The transfer scenario through the real go-openai client against a local
// OpenAI-compatible server, streamed: tool calls arrive as argument deltas.
func TestTransferOverOpenAI(t *testing.T) {
	srv := openaitest.NewServer(func(req *goopenai.ChatCompletionRequest) openaitest.Reply {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.HasPrefix(req.Messages[0].Content, "You route requests."):
			return openaitest.Reply{ToolCalls: []schema.ToolCall{modeltest.ToolCall("call_1", adk.TransferToAgentToolName, `{"agent_name":"WeatherAgent"}`)}}
		case last.Role == goopenai.ChatMessageRoleTool:
			return openaitest.Reply{Content: "It is 25°C in " + "Beijing.", Usage: schema.Usage{PromptTokens: 50, CompletionTokens: 6, TotalTokens: 56}}
		default:
			return openaitest.Reply{ToolCalls: []schema.ToolCall{modeltest.ToolCall("call_2", "get_weather", `{"city":"Beijing"}`)}}
		}
	})
	defer srv.Close()
	hc := &http.Client{}
	defer hc.CloseIdleConnections()
	m, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test", Model: "fake", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	for _, streaming := range []bool{true, false} {
		ctx := context.Background()
		runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, m, m, m), EnableStreaming: streaming})
		evs := drain(t, runner.Query(ctx, "What's the weather in Beijing?"))
		expectEvents(t, evs, weatherTranscript("It is 25°C in Beijing.")...)
		if u := evs[4].Output.MessageOutput.Message.ResponseMeta.Usage; u == nil || u.TotalTokens != 56 {
			t.Fatalf("usage %+v", u)
		}
	}
	// The weather agent's second request carried its tool call and the result.
	reqs := srv.Requests()
	third := reqs[2].Messages
	if got := third[len(third)-1]; got.Role != goopenai.ChatMessageRoleTool || got.ToolCallID != "call_2" || got.Content != "the temperature in Beijing is 25°C" {
		t.Fatalf("last message of the third request: %+v", got)
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Function.Name != adk.TransferToAgentToolName {
		t.Fatalf("router's tools %+v", reqs[0].Tools)
	}
}
