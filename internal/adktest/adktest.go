// Package adktest has what tests of agent trees share: reading a run's
// events whole and writing them as one line each, so a test states the run
// it expects as a list of lines.
package adktest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Drain reads every event of a run; streamed messages are read whole, so
// the returned events hold plain messages.
func Drain(t testing.TB, it *adk.AsyncIterator[*adk.AgentEvent]) []*adk.AgentEvent {
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

// Describe renders an event as one line: agent, RunPath, then what it
// holds: `Agent [Root Agent] says "text"`, `... calls tool{args}`,
// `... tool name: result`, and `=> transfer X`, `=> exit`,
// `=> interrupted`, `=> break loop ...`, `error: ...`.
func Describe(ev *adk.AgentEvent) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v", ev.AgentName, ev.RunPath)
	if ev.Output != nil && ev.Output.MessageOutput != nil && ev.Output.MessageOutput.Message != nil {
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

// DescribeAll renders every event.
func DescribeAll(evs []*adk.AgentEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = Describe(ev)
	}
	return out
}

// Expect fails the test unless the events are described by want, in order.
func Expect(t testing.TB, got []*adk.AgentEvent, want ...string) {
	t.Helper()
	lines := DescribeAll(got)
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events\n got:\n  %s\nwant:\n  %s", strings.Join(lines, "\n  "), strings.Join(want, "\n  "))
	}
}

// DescribeInput renders a model input, one message per line.
func DescribeInput(msgs []*schema.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.String()
	}
	return out
}

// Interrupted returns the first interrupt of evs.
func Interrupted(t testing.TB, evs []*adk.AgentEvent) *adk.InterruptInfo {
	t.Helper()
	for _, ev := range evs {
		if ev.Action != nil && ev.Action.Interrupted != nil {
			return ev.Action.Interrupted
		}
	}
	t.Fatalf("no interrupt in %q", DescribeAll(evs))
	return nil
}
