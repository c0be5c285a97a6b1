package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Point 2: ADK events survive the trip through A2A. A generated agent
// emits random event sequences (whole and streamed messages, tool calls and
// results, actions, customized outputs, errors, events of agents below it);
// a RemoteAgent receives them; both sides are compared field by field.

// script builds the events of one case; streams are made anew for each run.
type script func() []*adk.AgentEvent

type genAgent struct{ cases []script }

func (g *genAgent) Name(context.Context) string        { return "Gen" }
func (g *genAgent) Description(context.Context) string { return "emits generated events" }
func (g *genAgent) Run(_ context.Context, in *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	i, err := strconv.Atoi(in.Messages[len(in.Messages)-1].Content)
	if err != nil {
		gen.Send(adk.ErrorEvent(err))
	} else {
		for _, ev := range g.cases[i]() {
			gen.Send(ev)
		}
	}
	gen.Close()
	return it
}

// generate makes a random case: its script and the chunk texts of its
// streamed messages.
func generate(rng *rand.Rand) script {
	type spec struct {
		agent     string
		path      []adk.RunStep
		msg       *schema.Message
		chunks    []string // streamed when not nil
		role      schema.Role
		toolName  string
		action    *adk.AgentAction
		custom    any
		err       string
		streamErr string
	}
	words := []string{"alpha", "beta", "gamma", "δέλτα", "émoji 🚀", "quote \"x\"", "line\nbreak", "tab\t"}
	text := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(words[rng.IntN(len(words))] + " ")
		}
		return b.String()
	}
	n := 1 + rng.IntN(7)
	var specs []spec
	for i := range n {
		s := spec{}
		if rng.IntN(3) == 0 { // an agent below the root
			s.agent = "Sub" + strconv.Itoa(rng.IntN(3))
			s.path = []adk.RunStep{{AgentName: "Gen"}, {AgentName: s.agent}}
		}
		switch kind := rng.IntN(7); {
		case kind == 0: // a whole answer
			s.role, s.msg = schema.Assistant, schema.AssistantMessage(text(), nil)
			s.msg.ResponseMeta = &schema.ResponseMeta{FinishReason: "stop", Usage: &schema.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7}}
		case kind == 1: // a tool call, maybe with text
			content := ""
			if rng.IntN(2) == 0 {
				content = text()
			}
			s.role = schema.Assistant
			s.msg = schema.AssistantMessage(content, []schema.ToolCall{{ID: "c" + strconv.Itoa(i), Type: "function",
				Function: schema.FunctionCall{Name: "tool" + strconv.Itoa(i), Arguments: `{"q":"` + strconv.Itoa(rng.IntN(100)) + `"}`}}})
		case kind == 2: // a tool result, maybe with an action
			s.role, s.toolName = schema.Tool, "tool"+strconv.Itoa(i)
			s.msg = schema.ToolMessage(text(), "c"+strconv.Itoa(i), s.toolName)
			switch rng.IntN(4) {
			case 0:
				s.action = &adk.AgentAction{BreakLoop: &adk.BreakLoopAction{From: "Gen", CurrentIterations: 2}}
			case 1:
				s.action = &adk.AgentAction{CustomizedAction: "custom-" + strconv.Itoa(i)}
			case 2:
				if s.path != nil { // a transfer below the root stays below it
					s.action = adk.NewTransferToAgentAction("Sub9")
				}
			}
		case kind == 3: // a streamed answer
			s.role = schema.Assistant
			for range 1 + rng.IntN(5) {
				s.chunks = append(s.chunks, text())
			}
			if rng.IntN(4) == 0 {
				s.streamErr = "the model went away"
			}
		case kind == 4: // a streamed tool call, no text
			s.role = schema.Assistant
			s.chunks = []string{}
			s.msg = schema.AssistantMessage("", []schema.ToolCall{{ID: "s" + strconv.Itoa(i), Type: "function",
				Function: schema.FunctionCall{Name: "streamed", Arguments: `{"n":` + strconv.Itoa(i) + `}`}}})
		case kind == 5: // a customized output only
			s.custom = map[string]any{"n": float64(i), "s": text()}
		default: // an error in the middle
			s.err = "step " + strconv.Itoa(i) + " failed"
		}
		specs = append(specs, s)
	}
	return func() []*adk.AgentEvent {
		var out []*adk.AgentEvent
		for _, s := range specs {
			ev := &adk.AgentEvent{AgentName: s.agent, RunPath: s.path, Action: s.action}
			switch {
			case s.err != "":
				ev.Err = errors.New(s.err)
			case s.custom != nil:
				ev.Output = &adk.AgentOutput{CustomizedOutput: s.custom}
			case s.chunks != nil:
				r, w := schema.Pipe[*schema.Message]()
				for _, c := range s.chunks {
					w.Send(&schema.Message{Role: schema.Assistant, Content: c})
				}
				if s.msg != nil {
					w.Send(s.msg)
				}
				if s.streamErr != "" {
					w.Fail(errors.New(s.streamErr))
				} else {
					w.Close()
				}
				ev.Output = &adk.AgentOutput{MessageOutput: &adk.MessageVariant{IsStreaming: true, MessageStream: r, Role: s.role}}
			default:
				ev.Output = &adk.AgentOutput{MessageOutput: &adk.MessageVariant{Message: s.msg, Role: s.role, ToolName: s.toolName}}
			}
			out = append(out, ev)
		}
		return out
	}
}

// fingerprint describes an event as the comparison sees it: streamed
// messages by their text chunks and the rest of the message.
func fingerprint(ev *adk.AgentEvent, root string) string {
	var b strings.Builder
	name, path := ev.AgentName, ev.RunPath
	if len(path) == 0 {
		path = []adk.RunStep{{AgentName: root}}
	}
	if name == "" {
		name = root
	}
	fmt.Fprintf(&b, "%s %v", name, path)
	if out := ev.Output; out != nil {
		if mv := out.MessageOutput; mv != nil {
			fmt.Fprintf(&b, " role=%s tool=%s streaming=%v", mv.Role, mv.ToolName, mv.IsStreaming)
			var msg *schema.Message
			if mv.IsStreaming {
				var chunks []*schema.Message
				var texts []string
				for {
					c, err := mv.MessageStream.Recv()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						fmt.Fprintf(&b, " stream-error=%q", err.Error())
						break
					}
					chunks = append(chunks, c)
					if c.Content != "" {
						texts = append(texts, c.Content)
					}
				}
				fmt.Fprintf(&b, " chunks=%q", texts)
				msg, _ = schema.ConcatMessages(chunks)
			} else {
				msg = mv.Message
			}
			if msg != nil {
				j, _ := json.Marshal(struct {
					Content    string
					ToolCalls  []schema.ToolCall
					ToolCallID string
					ToolName   string
					Meta       *schema.ResponseMeta
				}{msg.Content, stripIndex(msg.ToolCalls), msg.ToolCallID, msg.ToolName, msg.ResponseMeta})
				b.Write(j)
			}
		}
		if out.CustomizedOutput != nil {
			j, _ := json.Marshal(out.CustomizedOutput)
			fmt.Fprintf(&b, " custom=%s", j)
		}
	}
	if a := ev.Action; a != nil {
		j, _ := json.Marshal(a)
		fmt.Fprintf(&b, " action=%s", j)
	}
	if ev.Err != nil {
		// The receiving side names the remote agent and its URL first.
		msg := ev.Err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "remote agent ") {
			msg = msg[i+2:]
		}
		fmt.Fprintf(&b, " error=%q", msg)
	}
	return b.String()
}

// stripIndex drops the stream indexes concatenation leaves on tool calls.
func stripIndex(calls []schema.ToolCall) []schema.ToolCall {
	out := make([]schema.ToolCall, len(calls))
	for i, c := range calls {
		c.Index = nil
		out[i] = c
	}
	return out
}

func TestEventsRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	g := &genAgent{}
	for range 200 {
		g.cases = append(g.cases, generate(rng))
	}
	url := serveAgent(t, g)
	ctx := context.Background()
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, url)})
	for i, sc := range g.cases {
		var want []string
		for _, ev := range sc() {
			want = append(want, fingerprint(ev, "Gen"))
		}
		it := r.Query(ctx, strconv.Itoa(i))
		var got []string
		for ev, ok := it.Next(); ok; ev, ok = it.Next() {
			got = append(got, fingerprint(ev, "Gen"))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("case %d\n got:\n  %s\nwant:\n  %s", i, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}
