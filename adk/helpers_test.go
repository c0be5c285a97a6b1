package adk_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// drain reads every event of a run; streamed messages are read whole, so
// the returned events hold plain messages.
func drain(t testing.TB, it *adk.AsyncIterator[*adk.AgentEvent]) []*adk.AgentEvent {
	t.Helper()
	var out []*adk.AgentEvent
	for {
		ev, ok := it.Next()
		if !ok {
			return out
		}
		if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.IsStreaming {
			mv := ev.Output.MessageOutput
			msg, err := mv.GetMessage()
			if err != nil {
				t.Fatalf("stream of %s: %v", ev.AgentName, err)
			}
			cp := *mv
			cp.IsStreaming, cp.Message, cp.MessageStream = false, msg, nil
			ev.Output = &adk.AgentOutput{MessageOutput: &cp, CustomizedOutput: ev.Output.CustomizedOutput}
		}
		out = append(out, ev)
	}
}

// describe renders an event as one line: agent, path, then what it holds.
func describe(ev *adk.AgentEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v", ev.AgentName, ev.RunPath)
	if ev.Output != nil && ev.Output.MessageOutput != nil {
		m := ev.Output.MessageOutput.Message
		switch m.Role {
		case schema.Tool:
			fmt.Fprintf(&b, " tool %s: %s", m.ToolName, m.Content)
		default:
			if m.Content != "" {
				fmt.Fprintf(&b, " says %q", m.Content)
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, " calls %s%s", tc.Function.Name, tc.Function.Arguments)
			}
		}
	}
	if a := ev.Action; a != nil {
		switch {
		case a.TransferToAgent != nil:
			fmt.Fprintf(&b, " => transfer %s", a.TransferToAgent.DestAgentName)
		case a.Exit:
			b.WriteString(" => exit")
		case a.BreakLoop != nil:
			fmt.Fprintf(&b, " => break loop (done %v, iteration %d)", a.BreakLoop.Done, a.BreakLoop.CurrentIterations)
		case a.Interrupted != nil:
			b.WriteString(" => interrupted")
		}
	}
	if ev.Err != nil {
		fmt.Fprintf(&b, " error: %v", ev.Err)
	}
	return b.String()
}

func describeAll(evs []*adk.AgentEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = describe(ev)
	}
	return out
}

func expectEvents(t *testing.T, got []*adk.AgentEvent, want ...string) {
	t.Helper()
	lines := describeAll(got)
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events\n got:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

// describeInput renders a model input, one message per line.
func describeInput(msgs []*schema.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.String()
	}
	return out
}

func newAgent(t testing.TB, name, desc, instruction string, m model.ChatModel, tools ...tool.Tool) *adk.ChatModelAgent {
	t.Helper()
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: name, Description: desc, Instruction: instruction, Model: m,
		ToolsConfig: adk.ToolsConfig{Tools: tools},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func mustTool[In, Out any](t testing.TB, name, desc string, fn func(context.Context, In) (Out, error)) tool.Tool {
	t.Helper()
	tl, err := tool.FromFunc(name, desc, fn)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

type cityIn struct {
	City string `json:"city" desc:"the city"`
}

func weatherTool(t testing.TB) tool.Tool {
	return mustTool(t, "get_weather", "Get the current weather of a city", func(_ context.Context, in cityIn) (string, error) {
		return "the temperature in " + in.City + " is 25°C", nil
	})
}

var (
	answer   = modeltest.Answer
	callTool = modeltest.CallTool
)
