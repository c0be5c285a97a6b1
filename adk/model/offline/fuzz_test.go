package offline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool/calc"
	"github.com/a2amesh/a2amesh/adk/tool/weather"
)

// FuzzReply: whatever a person sends (the model reads requests that come
// over the network), the offline model answers or calls one of its tools
// with JSON arguments, and never panics; an expression it extracts for the
// calculator is one the calculator answers (a value or an error).
func FuzzReply(f *testing.F) {
	for _, s := range []string{
		"How much is 12 percent of 250?", "what is seven times eight", "2 to the power of 10",
		"What's the weather in Beijing?", "Write a report on checkpoints", "twenty-five minus three hundred and six",
		"square root of square root of", "%%%% of of of", "12 percent of", "(((((((1", "1e308 * 1e308",
		"Plan: calculate 2 + 3, then research the gateway", "", "\x00\xff", "For context: hi",
	} {
		f.Add(s)
	}
	ctx := context.Background()
	var infos []*schema.ToolInfo
	for _, tl := range []interface {
		Info(context.Context) (*schema.ToolInfo, error)
	}{calc.Tool(), weather.Tool(weather.Config{})} {
		info, err := tl.Info(ctx)
		if err != nil {
			f.Fatal(err)
		}
		infos = append(infos, info)
	}
	infos = append(infos, &schema.ToolInfo{Name: adk.TransferToAgentToolName, Desc: "transfer"})
	m, err := offline.New().WithTools(infos)
	if err != nil {
		f.Fatal(err)
	}
	system := schema.SystemMessage("You route requests.\n\nYou work in a team of agents.\n" + adk.TransferTargetsHeader +
		"\n- MathAgent: Calculates arithmetic\n  Skill \"Calculate\": Works out arithmetic\n    Examples: \"What is 2 + 2?\"\n- ChatAgent: Chats")
	f.Fuzz(func(t *testing.T, request string) {
		msg, err := m.Generate(ctx, []*schema.Message{system, schema.UserMessage(request)})
		if err != nil {
			t.Fatal(err)
		}
		if len(msg.ToolCalls) == 0 {
			if !strings.HasPrefix(msg.Content, offline.Label) {
				t.Fatalf("an answer without the label: %q", msg.Content)
			}
			return
		}
		call := msg.ToolCalls[0].Function
		var args map[string]any
		if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
			t.Fatalf("%s called with arguments that are not JSON: %q", call.Name, call.Arguments)
		}
		if call.Name == "calculate" {
			expr, _ := args["expression"].(string)
			_, _ = calc.Eval(expr) // a value or an error, not a panic
		}
	})
}
