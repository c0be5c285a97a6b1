package offline_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/adk/tool/calc"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

// teamAgent is a member of a team's own mesh: names and words the model
// has never seen, which it knows only from what the agent declares.
type teamAgent struct {
	name, desc string
	skills     []adk.Skill
}

// acme is a team's own agents. Every description mentions the account, so
// "account" says little about which agent fits.
var acme = []teamAgent{
	{"InvoiceAgent", "Answers questions about the invoices of your account", []adk.Skill{{
		ID: "invoices", Name: "Invoices", Description: "Finds invoices, their totals and when they are due",
		Tags:     []string{"invoice", "billing", "payment", "due date"},
		Examples: []string{"What is the total of invoice INV-1042?", "Which invoices are overdue?", "When is my next payment due?"},
	}}},
	{"ShipmentAgent", "Tracks the orders of your account", []adk.Skill{{
		ID: "tracking", Name: "Track parcels", Description: "Says where a parcel is and when it arrives",
		Tags:     []string{"parcel", "package", "delivery", "courier"},
		Examples: []string{"Where is my package?", "When will order 5521 arrive?"},
	}}},
	{"Abacus", "Crunches numbers for your account", []adk.Skill{{
		ID: "sums", Name: "Sums", Description: "Works sums out exactly",
		Examples: []string{"What is 17 * 3?", "How much is 20 percent of 90?", "What is nine minus four?"},
	}}},
	{"LeaveAgent", "Handles the time off of your account", []adk.Skill{
		{ID: "leave", Name: "Leave requests", Description: "Books vacation and tells how many days are left",
			Tags:     []string{"vacation", "holiday", "days off", "overtime"},
			Examples: []string{"Book three days off next week", "How many vacation days do I have left?"}},
		{ID: "sick", Name: "Sick leave", Tags: []string{"sick", "ill"}, Examples: []string{"I'm sick today"}},
	}},
	{"ChatAgent", "Chats casually", []adk.Skill{{
		ID: "chat", Name: "Small talk", Tags: []string{"hello", "hi", "thanks", "joke"}, Examples: []string{"Good morning!"},
	}}},
}

// acmeRoutes are requests to acme's router and where they go ("" when
// the router answers itself).
var acmeRoutes = []struct{ request, want string }{
	{"How much do I owe on invoice INV-2001?", "InvoiceAgent"},
	{"Is my payment overdue?", "InvoiceAgent"},
	{"Send me the billing history of my account", "InvoiceAgent"},
	{"Where's my parcel?", "ShipmentAgent"},
	{"When does the courier come?", "ShipmentAgent"},
	{"what is 17 times 3", "Abacus"},
	{"How much is 12% of 250?", "Abacus"},
	{"What's the square root of 81?", "Abacus"},
	{"I want to go on holiday in May", "LeaveAgent"},
	{"Check my account for overtime", "LeaveAgent"}, // overtime, not the account every agent has
	{"I feel ill and can't come in", "LeaveAgent"},  // the second skill
	{"hello!", "ChatAgent"},
	{"Tell me a joke", "ChatAgent"},
	{"What's the capital of France?", ""},
	{"Recommend a movie", ""},
}

func acmeAgents(t *testing.T, m *offline.Model) []adk.Agent {
	t.Helper()
	ctx := context.Background()
	var out []adk.Agent
	for _, a := range acme {
		ag, err := adk.AgentWithConfig(ctx, newTestAgent(t, a.name, a.desc, "", m), adk.AgentConfig{Skills: a.skills})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ag)
	}
	return out
}

func newTestAgent(t *testing.T, name, desc, instruction string, m *offline.Model) adk.Agent {
	t.Helper()
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Instruction: instruction, Model: m})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// routed runs request and returns the agent the router transferred to,
// "" if it answered itself.
func routed(t *testing.T, r *adk.Runner, request string, opts ...adk.AgentRunOption) string {
	t.Helper()
	evs := adktest.Drain(t, r.Query(context.Background(), request, opts...))
	for _, ev := range evs {
		if ev.Err != nil {
			t.Fatalf("%q: %v", request, ev.Err)
		}
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			return ev.Action.TransferToAgent.DestAgentName
		}
	}
	if last := adktest.Describe(evs[len(evs)-1]); !strings.Contains(last, "You asked: "+request) {
		t.Fatalf("%q: the router's answer %s", request, last)
	}
	return ""
}

// A team's own agents, known to the router only by what they declare
// (their names, descriptions and skills, in the transfer instruction adk
// writes), get the requests that fit them: the model has no list of
// words of its own.
func TestRoutesByDeclaredSkills(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	router, err := adk.SetSubAgents(ctx, newTestAgent(t, "Router", "Routes requests", "You route requests.", m), acmeAgents(t, m))
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: router})
	for _, tc := range acmeRoutes {
		if got := routed(t, r, tc.request); got != tc.want {
			t.Errorf("%q went to %q, want %q", tc.request, got, tc.want)
		}
	}
}

// Agents a caller offers (a remote router's, as the bridge passes them
// with their cards' skills) route the same.
func TestRoutesToCallerAgents(t *testing.T) {
	ctx := context.Background()
	var callers []adk.CallerAgent
	for _, a := range acme {
		callers = append(callers, adk.CallerAgent{Name: a.name, Description: a.desc, Skills: a.skills})
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: newTestAgent(t, "Router", "Routes requests", "You route requests.", offline.New())})
	for _, tc := range acmeRoutes {
		if got := routed(t, r, tc.request, adk.WithCallerAgents(callers...)); got != tc.want {
			t.Errorf("%q went to %q, want %q", tc.request, got, tc.want)
		}
	}
}

// A request several agents fit goes to the one that fits all of it: a
// team agent over its members, and the member a request names first when
// it names several.
func TestRoutesToTheBestFit(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	agent := func(name, desc string, skills ...adk.Skill) adk.Agent {
		a, err := adk.AgentWithConfig(ctx, newTestAgent(t, name, desc, "", m), adk.AgentConfig{Skills: skills})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	subs := []adk.Agent{
		agent("Researcher", "Researches topics in the documents", adk.Skill{ID: "r", Name: "Research", Tags: []string{"docs"}}),
		agent("Writer", "Writes summaries from the findings it is given", adk.Skill{ID: "w", Name: "Summaries",
			Examples: []string{"Summarize these notes: the build is green"}}),
		agent("Editorial", "Researches a topic, then writes a report on it", adk.Skill{ID: "e", Name: "Reports",
			Examples: []string{"Write a report on the release"}}),
	}
	router, err := adk.SetSubAgents(ctx, newTestAgent(t, "Router", "", "You route requests.", m), subs)
	if err != nil {
		t.Fatal(err)
	}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: router})
	for _, tc := range []struct{ request, want string }{
		{"Research the release and write a report", "Editorial"},
		{"Write a report on the outage", "Editorial"},
		{"Summarize these findings: the outage lasted an hour", "Writer"},
		{"What do the docs say about the outage?", "Researcher"},
	} {
		if got := routed(t, r, tc.request); got != tc.want {
			t.Errorf("%q went to %q, want %q", tc.request, got, tc.want)
		}
	}
}

// A supervisor whose instruction names its members in the order of the
// work hands them a request in that order, whatever the request names
// first; one that does not follows the request's order.
func TestInstructionOrder(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	for _, tc := range []struct {
		instruction, request string
		want                 []string
	}{
		{"You coordinate. For a report, first ResearchAgent researches the topic, then WriterAgent writes it.",
			"Write a report on Go", []string{"Boss->ResearchAgent", "ResearchAgent->Boss", "Boss->WriterAgent", "WriterAgent->Boss"}},
		{"You coordinate. For a report, first ResearchAgent researches the topic, then WriterAgent writes it.",
			"Tell me a joke", nil},
		{"You coordinate a team.",
			"Write a report, then research Go", []string{"Boss->WriterAgent", "WriterAgent->Boss", "Boss->ResearchAgent", "ResearchAgent->Boss"}},
		{"You coordinate a team.",
			"Research Go and write a report", []string{"Boss->ResearchAgent", "ResearchAgent->Boss", "Boss->WriterAgent", "WriterAgent->Boss"}},
	} {
		team, err := supervisor.New(ctx, &supervisor.Config{
			Supervisor: newTestAgent(t, "Boss", "Coordinates", tc.instruction, m),
			SubAgents: []adk.Agent{
				newTestAgent(t, "WriterAgent", "Writes reports from findings", "You write.", m),
				newTestAgent(t, "ResearchAgent", "Researches a topic", "You research.", m),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: team}).Query(ctx, tc.request))
		var got []string
		for _, ev := range evs {
			if ev.Action != nil && ev.Action.TransferToAgent != nil {
				got = append(got, ev.AgentName+"->"+ev.Action.TransferToAgent.DestAgentName)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q with %q: transfers %v, want %v", tc.request, tc.instruction, got, tc.want)
		}
	}
}

// toolCall returns the tool the model calls for request with tools, and
// its arguments; "" when it answers.
func toolCall(t *testing.T, tools []*schema.ToolInfo, request string) (name, args string) {
	t.Helper()
	m, err := offline.New().WithTools(tools)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := m.Generate(context.Background(), []*schema.Message{
		schema.SystemMessage("You carry out a task with your tools."), schema.UserMessage(request)})
	if err != nil {
		t.Fatal(err)
	}
	if len(msg.ToolCalls) == 0 {
		return "", ""
	}
	return msg.ToolCalls[0].Function.Name, msg.ToolCalls[0].Function.Arguments
}

// infos returns the tools' infos.
func infos(t *testing.T, tools ...tool.Tool) []*schema.ToolInfo {
	t.Helper()
	var out []*schema.ToolInfo
	for _, tl := range tools {
		info, err := tl.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, info)
	}
	return out
}

// Agents given as tools (adk.NewAgentTool) are chosen by what they
// declare, as transfer targets are: the requests that go to an agent by
// transfer call that agent's tool.
func TestChoosesAgentToolsBySkills(t *testing.T) {
	ctx := context.Background()
	var tools []tool.Tool
	for _, a := range acmeAgents(t, offline.New()) {
		tools = append(tools, adk.NewAgentTool(ctx, a))
	}
	all := infos(t, tools...)
	for _, tc := range acmeRoutes {
		name, args := toolCall(t, all, tc.request)
		if name != tc.want {
			t.Errorf("%q called %q, want %q", tc.request, name, tc.want)
		}
		if name != "" && args != `{"request":`+strconv.Quote(tc.request)+`}` {
			t.Errorf("%q: arguments %s", tc.request, args)
		}
	}
}

// A step of a plan that asks for arithmetic with words no agent's name or
// description has goes to the agent whose skills show arithmetic, which
// works it out; plain tools are chosen as before beside agent tools.
func TestArithmeticGoesToTheMathAgentTool(t *testing.T) {
	ctx := context.Background()
	m := offline.New()
	declare := func(a adk.Agent, s adk.Skill) adk.Agent {
		t.Helper()
		a, err := adk.AgentWithConfig(ctx, a, adk.AgentConfig{Skills: []adk.Skill{s}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	mathAgent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "MathAgent", Description: "Calculates: arithmetic and math expressions",
		Instruction: "You calculate with the calculate tool.", Model: m,
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{calc.Tool()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mathTool := adk.NewAgentTool(ctx, declare(mathAgent, adk.Skill{ID: "calculate", Name: "Calculate",
		Description: "Works out arithmetic written in symbols or in words", Tags: []string{"math", "arithmetic"},
		Examples: []string{"What is (17 + 25) * 3?", "How much is 12 percent of 250?"}}))
	researchTool := adk.NewAgentTool(ctx, declare(newTestAgent(t, "ResearchAgent", "Researches a topic in the docs", "", m),
		adk.Skill{ID: "research", Name: "Research the documents", Tags: []string{"research", "docs", "search"},
			Examples: []string{"Research checkpoints", "What do the docs say about the gateway?"}}))
	weather, err := tool.FromFunc("get_weather", "Get the current weather of a city",
		func(_ context.Context, in struct {
			City string `json:"city" desc:"the city"`
		}) (string, error) {
			return "sunny in " + in.City, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	tools := infos(t, researchTool, mathTool, weather)
	for _, tc := range []struct{ request, want string }{
		{"compute the total cost of 120 + 80 + 45", `MathAgent {"request":"compute the total cost of 120 + 80 + 45"}`},
		{"work out the sum of 250 and 175", `MathAgent {"request":"work out the sum of 250 and 175"}`},
		{"research the gateway", `ResearchAgent {"request":"research the gateway"}`},
		{"What's the weather in Lisbon?", `get_weather {"city":"Lisbon"}`},
		{"Plan a 3-step trip from Paris to Rome", " "},
	} {
		if name, args := toolCall(t, tools, tc.request); name+" "+args != tc.want {
			t.Errorf("%q: called %s %s, want %s", tc.request, name, args, tc.want)
		}
	}

	// The agent tool works it out.
	assistant, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "Executor", Model: m,
		Instruction: "You carry out a task with your tools.",
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{researchTool, mathTool, weather}}})
	if err != nil {
		t.Fatal(err)
	}
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: assistant}).Query(ctx, "compute the total cost of 120 + 80 + 45"))
	if last := adktest.Describe(evs[len(evs)-1]); last != `Executor [Executor] says "[offline model] 120 + 80 + 45 = 245"` {
		t.Fatalf("the answer %s in\n  %s", last, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
}
