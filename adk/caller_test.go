package adk_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// A run that serves a remote caller: it continues the caller's RunPath and
// may transfer to the caller's agents, which ends it with the transfer.
func TestRunForACaller(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(callTool(adk.TransferToAgentToolName, `{"agent_name":"Router"}`))
	weather := newAgent(t, "WeatherAgent", "weather", "", m, weatherTool(t))
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: weather})
	path := []adk.RunStep{{AgentName: "Gateway"}, {AgentName: "Router"}, {AgentName: "WeatherAgent"}}
	evs := drain(t, r.Query(ctx, "hello", adk.WithRunPath(path),
		adk.WithCallerAgents(adk.CallerAgent{Name: "Router", Description: "routes requests"})))
	expectEvents(t, evs,
		`WeatherAgent [Gateway Router WeatherAgent] calls transfer_to_agent{"agent_name":"Router"}`,
		`WeatherAgent [Gateway Router WeatherAgent] tool transfer_to_agent: successfully transferred to agent [Router] => transfer Router`,
	)
	call := m.Calls()[0]
	if !strings.Contains(call.Input[0].Content, "- Router: routes requests") {
		t.Fatalf("instruction %q", call.Input[0].Content)
	}
	var names []string
	for _, ti := range call.Tools {
		names = append(names, ti.Name)
	}
	if !slices.Equal(names, []string{"get_weather", adk.TransferToAgentToolName}) {
		t.Fatalf("tools %v", names)
	}
	// Without callers, the same Runner's agent has no transfer tool.
	m2 := modeltest.New(answer("sunny"))
	r2 := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newAgent(t, "WeatherAgent", "weather", "", m2, weatherTool(t))})
	drain(t, r2.Query(ctx, "hello"))
	if len(m2.Calls()[0].Tools) != 1 {
		t.Fatalf("tools without callers: %v", m2.Calls()[0].Tools)
	}
}

// remoteLike is an agent that is not one of the package's and reports
// events from agents below it, as a remote agent's tree does.
type remoteLike struct{}

func (remoteLike) Name(context.Context) string        { return "Remote" }
func (remoteLike) Description(context.Context) string { return "a remote tree" }
func (remoteLike) Run(ctx context.Context, _ *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	deep := adk.EventFromMessage(schema.AssistantMessage("from deep inside", nil), nil, schema.Assistant, "")
	deep.AgentName = "Inner"
	deep.RunPath = []adk.RunStep{{AgentName: "Seq"}, {AgentName: "Remote"}, {AgentName: "Inner"}}
	gen.Send(deep)
	gen.Close()
	return it
}

func TestHistoryFromBelowAForeignAgent(t *testing.T) {
	ctx := context.Background()
	nextModel := modeltest.New(answer("ok"))
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Seq", SubAgents: []adk.Agent{remoteLike{},
		newAgent(t, "Next", "", "", nextModel)}})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "go"))
	if got := describeInput(nextModel.Calls()[0].Input); !slices.Contains(got, "user: For context: [Inner] said: from deep inside") {
		t.Fatalf("Next's input %q", got)
	}
}

type order struct {
	ID    int      `json:"id"`
	Items []string `json:"items"`
}

type unnamed struct {
	ID int `json:"id"`
}

func TestSessionValuesAcrossAWire(t *testing.T) {
	ctx := context.Background()
	var data []byte
	probe := &probeAgent{name: "P", run: func(ctx context.Context) {
		var err error
		if data, err = adk.MarshalSessionValues(ctx, adk.StateTypeOf[order]("test.order")); err != nil {
			t.Error(err)
		}
	}}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: probe}).Query(ctx, "x",
		adk.WithSessionValues(map[string]any{"o": order{ID: 1, Items: []string{"a"}}, "n": 2, "other": unnamed{ID: 3}})))

	// The far side knows test.order, not the unnamed one.
	vals, err := adk.UnmarshalSessionValues(data, adk.StateTypeOf[order]("test.order"))
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := vals["o"].(order); !ok || o.ID != 1 || vals["n"] != 2 {
		t.Fatalf("values %#v", vals)
	}
	var got unnamed
	seen := &probeAgent{name: "P", run: func(ctx context.Context) {
		got, _ = adk.SessionValue[unnamed](ctx, "other")
		if _, isMap := adk.GetSessionValues(ctx)["other"].(map[string]any); !isMap {
			t.Error("an unknown type is not shown as plain JSON")
		}
	}}
	drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seen}).Query(ctx, "x", adk.WithSessionValues(vals)))
	if got.ID != 3 {
		t.Fatalf("decoded %+v", got)
	}
	if _, err := adk.UnmarshalSessionValues([]byte(`{"k":null}`)); err == nil {
		t.Fatal("a null value accepted")
	}
}
