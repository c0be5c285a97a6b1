package offline_test

import (
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	transferTool = &schema.ToolInfo{Name: adk.TransferToAgentToolName, Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
		"agent_name": {Type: "string"},
	})}
	exitTool    = &schema.ToolInfo{Name: adk.ExitToolName}
	weatherTool = &schema.ToolInfo{Name: "get_weather", Desc: "Get the current weather of a city",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"city": {Type: "string", Description: "the city"}})}
	stockTool = &schema.ToolInfo{Name: "stock_price", Desc: "Look up a stock price",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"symbol": {Type: "string", Enum: []any{"AAPL", "GOOG"}},
			"days":   {Type: "integer"},
		})}
	respondTool = &schema.ToolInfo{Name: "respond", Desc: "Respond to the user with the final answer",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"response": {Type: "string", Description: "the final answer"}})}
	routerInstruction = "You route requests.\n\nYou work in a team of agents. Pick well.\n" + adk.TransferTargetsHeader +
		"\n- WeatherAgent: Answers questions about the weather in a city\n- ChatAgent: Chats casually about anything"
)

func TestRules(t *testing.T) {
	sys, user := schema.SystemMessage, schema.UserMessage
	// context is a message as adk rewrites another agent's for this one.
	ctxMsg := func(agent, text string) *schema.Message {
		m := user("For context: [" + agent + "] " + text)
		m.Extra = map[string]any{adk.ContextMessageKey: agent}
		return m
	}
	call := func(name, args string) *schema.Message {
		return schema.AssistantMessage("", []schema.ToolCall{{ID: "c1", Function: schema.FunctionCall{Name: name, Arguments: args}}})
	}
	for _, tc := range []struct {
		name  string
		tools []*schema.ToolInfo
		input []*schema.Message
		want  string
	}{
		{"transfers by description", []*schema.ToolInfo{transferTool},
			[]*schema.Message{sys(routerInstruction), user("What's the weather in Beijing?")},
			`call transfer_to_agent {"agent_name":"WeatherAgent"}`},
		{"answers when nothing fits", []*schema.ToolInfo{transferTool},
			[]*schema.Message{sys(routerInstruction), user("Book me a flight")},
			"[offline model] You asked: Book me a flight"},
		{"does not transfer back to where it came from", []*schema.ToolInfo{transferTool, weatherTool},
			[]*schema.Message{
				sys("You answer weather questions.\n\nTeam.\n" + adk.TransferTargetsHeader + "\n- RouterAgent: Routes weather questions"),
				user("What's the weather in New York?"),
				ctxMsg("RouterAgent", "`transfer_to_agent` tool returned result: successfully transferred to agent [WeatherAgent]"),
			},
			`call get_weather {"city":"New York"}`},
		{"prefers its own tool to a weaker target", []*schema.ToolInfo{transferTool, weatherTool},
			[]*schema.Message{sys(routerInstruction), user("weather in Oslo")},
			`call get_weather {"city":"Oslo"}`},
		{"extracts enums and numbers", []*schema.ToolInfo{stockTool},
			[]*schema.Message{user("stock price of goog over 30 days")},
			`call stock_price {"days":30,"symbol":"GOOG"}`},
		{"skips a tool without its required arguments", []*schema.ToolInfo{weatherTool},
			[]*schema.Message{user("what is the weather like")},
			"[offline model] You asked: what is the weather like"},
		{"answers from tool results", []*schema.ToolInfo{weatherTool},
			[]*schema.Message{user("weather in Oslo"), call("get_weather", `{"city":"Oslo"}`), schema.ToolMessage("sunny in Oslo", "c1", "get_weather")},
			"[offline model] sunny in Oslo"},
		{"exits with its answer", []*schema.ToolInfo{exitTool},
			[]*schema.Message{user("review the draft"), ctxMsg("Writer", "said: a draft")},
			`call exit {"final_result":"[offline model] You asked: review the draft\nBuilding on what Writer said: a draft"}`},
		{"answers from the results it is handed", []*schema.ToolInfo{respondTool},
			[]*schema.Message{user("Every step is done. Respond with the final answer from the results:\n" +
				"- check Oslo: [offline model] sunny in Oslo\n- research NATS: [1] docs/nats.md — NATS\n  - tasks are kept in NATS")},
			`call respond {"response":"[offline model] check Oslo: sunny in Oslo\nresearch NATS: [1] docs/nats.md — NATS\n  - tasks are kept in NATS"}`},
		{"answers with the request when it is handed nothing", []*schema.ToolInfo{respondTool},
			[]*schema.Message{user("Respond with the final answer: Oslo is sunny")},
			`call respond {"response":"[offline model] Respond with the final answer: Oslo is sunny"}`},
		{"takes a person's message that starts like context for the request", nil,
			[]*schema.Message{user("hi"), user("For context: I sail. Review the draft")},
			"[offline model] You asked: For context: I sail. Review the draft"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := offline.New().WithTools(tc.tools)
			msg, err := m.Generate(context.Background(), tc.input)
			if err != nil {
				t.Fatal(err)
			}
			got := msg.Content
			if len(msg.ToolCalls) > 0 {
				got = "call " + msg.ToolCalls[0].Function.Name + " " + msg.ToolCalls[0].Function.Arguments
			}
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if msg.ResponseMeta == nil || msg.ResponseMeta.Usage == nil || msg.ResponseMeta.Usage.TotalTokens == 0 {
				t.Fatalf("no usage: %+v", msg.ResponseMeta)
			}

			// Streaming gives the same message in several chunks.
			s, err := m.Stream(context.Background(), tc.input)
			if err != nil {
				t.Fatal(err)
			}
			joined, err := schema.ConcatMessageStream(s)
			if err != nil {
				t.Fatal(err)
			}
			if joined.Content != msg.Content || len(joined.ToolCalls) != len(msg.ToolCalls) ||
				(len(msg.ToolCalls) > 0 && joined.ToolCalls[0].Function.Arguments != msg.ToolCalls[0].Function.Arguments) {
				t.Fatalf("stream %+v, generate %+v", joined, msg)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	in := []*schema.Message{schema.SystemMessage(routerInstruction), schema.UserMessage("What's the weather in Beijing?")}
	m, _ := offline.New().WithTools([]*schema.ToolInfo{transferTool, weatherTool, stockTool})
	first, _ := m.Generate(context.Background(), in)
	for range 20 {
		again, _ := m.Generate(context.Background(), in)
		if again.String() != first.String() {
			t.Fatalf("%s then %s", first, again)
		}
	}
	if len(first.ToolCalls) != 1 || !strings.HasPrefix(first.ToolCalls[0].ID, "offline_call_") {
		t.Fatal("tool call without an id")
	}
}

func TestArguments(t *testing.T) {
	flights := &schema.ToolInfo{Name: "search_flights", Desc: "Search flights between two cities",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"from": {Type: "string", Description: "the city of departure"},
			"to":   {Type: "string", Description: "the destination city"},
		})}
	plan := &schema.ToolInfo{Name: "plan", Desc: "Give the plan's steps",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"steps": {Type: "array", Items: &schema.JSONSchema{Type: "string"}}})}
	calc := &schema.ToolInfo{Name: "calculate", Desc: "Evaluate an arithmetic expression",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{"expression": {Type: "string", Description: "an arithmetic expression"}})}
	for _, tc := range []struct {
		tool    *schema.ToolInfo
		request string
		want    string
	}{
		{calc, "Calculate (17 + 25) * 3, please.", `{"expression":"(17 + 25) * 3"}`},
		{calc, "calculate sqrt(2) ^ 2 for me", `{"expression":"sqrt(2) ^ 2"}`},
		{flights, "find flights from New York to Beijing", `{"from":"New York","to":"Beijing"}`},
		{plan, "Make a plan for: book flights, find a hotel and then list sights.", `{"steps":["book flights","find a hotel","list sights"]}`},
		{plan, "Revise the plan; these steps remain:\n- find a hotel\n2. list sights", `{"steps":["find a hotel","list sights"]}`},
	} {
		m, _ := offline.New().WithTools([]*schema.ToolInfo{tc.tool})
		msg, err := m.Generate(context.Background(), []*schema.Message{schema.UserMessage(tc.request)})
		if err != nil || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].Function.Arguments != tc.want {
			t.Fatalf("%q: %v %v", tc.request, msg, err)
		}
	}
}
