package adk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// The seed scenarios again, with the offline model deciding everything.

func TestOfflineTransfer(t *testing.T) {
	for _, streaming := range []bool{false, true} {
		ctx := context.Background()
		m := offline.New()
		runner := adk.NewRunner(ctx, adk.RunnerConfig{Agent: routerTree(t, m, m, m), EnableStreaming: streaming})
		expectEvents(t, drain(t, runner.Query(ctx, "What's the weather in Beijing?")),
			weatherTranscript("[offline model] the temperature in Beijing is 25°C")...)
		expectEvents(t, drain(t, runner.Query(ctx, "Let's chat casually about jazz")),
			`RouterAgent [RouterAgent] calls transfer_to_agent{"agent_name":"ChatAgent"}`,
			`RouterAgent [RouterAgent] tool transfer_to_agent: successfully transferred to agent [ChatAgent] => transfer ChatAgent`,
			`ChatAgent [RouterAgent ChatAgent] says "[offline model] You asked: Let's chat casually about jazz"`,
		)
		// The failed route: the router answers itself.
		expectEvents(t, drain(t, runner.Query(ctx, "Book me a flight")),
			`RouterAgent [RouterAgent] says "[offline model] You asked: Book me a flight"`)
	}
}

func TestOfflineWorkflows(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	research, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Researcher", Model: m, Instruction: "Research {topic}.", OutputKey: "research",
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{weatherTool(t)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	writer, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Writer", Model: m, Instruction: "Write about: {research}",
	})
	if err != nil {
		t.Fatal(err)
	}
	critic, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "Critic", Model: m, Exit: adk.ExitTool{}})
	if err != nil {
		t.Fatal(err)
	}
	refine, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Refine", SubAgents: []adk.Agent{writer, critic}, MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	collect, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "Collect", SubAgents: []adk.Agent{
		newAgent(t, "Oslo", "", "", m, weatherTool(t)), newAgent(t, "Rome", "", "", m),
	}})
	if err != nil {
		t.Fatal(err)
	}
	pipeline, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Pipeline", SubAgents: []adk.Agent{collect, research, refine}})
	if err != nil {
		t.Fatal(err)
	}
	evs := drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: pipeline}).Query(ctx, "Weather in Oslo",
		adk.WithSessionValues(map[string]any{"topic": "the weather"})))
	lines := describeAll(evs)
	byAgent := map[string][]string{}
	for _, l := range lines {
		name, _, _ := strings.Cut(l, " ")
		byAgent[name] = append(byAgent[name], l)
	}
	want := map[string][]string{ // parallel branches interleave; the rest is in order
		"Oslo": {
			`Oslo [Pipeline Collect Oslo] calls get_weather{"city":"Oslo"}`,
			`Oslo [Pipeline Collect Oslo] tool get_weather: the temperature in Oslo is 25°C`,
			`Oslo [Pipeline Collect Oslo] says "[offline model] the temperature in Oslo is 25°C"`,
		},
	}
	if len(byAgent["Oslo"]) != 3 || strings.Join(byAgent["Oslo"], "\n") != strings.Join(want["Oslo"], "\n") {
		t.Fatalf("Oslo: %q", byAgent["Oslo"])
	}
	// Rome ran in parallel with Oslo, so it saw nothing of Oslo's.
	if strings.Join(byAgent["Rome"], "") != `Rome [Pipeline Collect Rome] says "[offline model] You asked: Weather in Oslo"` {
		t.Fatalf("Rome: %q", byAgent["Rome"])
	}
	expectEvents(t, evs[4:],
		`Researcher [Pipeline Collect Researcher] calls get_weather{"city":"Oslo"}`,
		`Researcher [Pipeline Collect Researcher] tool get_weather: the temperature in Oslo is 25°C`,
		`Researcher [Pipeline Collect Researcher] says "[offline model] the temperature in Oslo is 25°C"`,
		`Writer [Pipeline Collect Researcher Refine Writer] says "[offline model] You asked: Weather in Oslo\nBuilding on what Researcher said: the temperature in Oslo is 25°C"`,
		`Critic [Pipeline Collect Researcher Refine Writer Critic] calls exit{"final_result":"[offline model] You asked: Weather in Oslo\nBuilding on what Researcher said: the temperature in Oslo is 25°C"}`,
		`Critic [Pipeline Collect Researcher Refine Writer Critic] tool exit: [offline model] You asked: Weather in Oslo`+"\n"+`Building on what Researcher said: the temperature in Oslo is 25°C => exit`,
	)
}

func TestOfflineAgentTool(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	expert := newAgent(t, "WeatherExpert", "knows the weather of any city", "", m, weatherTool(t))
	assistant := newAgent(t, "Assistant", "", "", m, adk.NewAgentTool(ctx, expert))
	expectEvents(t, drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: assistant}).Query(ctx, "Oslo weather?")),
		`Assistant [Assistant] calls WeatherExpert{"request":"Oslo weather?"}`,
		`Assistant [Assistant] tool WeatherExpert: [offline model] the temperature in Oslo is 25°C`,
		`Assistant [Assistant] says "[offline model] the temperature in Oslo is 25°C"`,
	)
}
