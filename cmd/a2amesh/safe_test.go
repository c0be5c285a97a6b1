package main

import (
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/natsstore"
)

func TestSafe(t *testing.T) {
	tests := []struct {
		name, in, safe, line string
	}{
		{"plain", "Sunny, 21 °C in 北京", "Sunny, 21 °C in 北京", "Sunny, 21 °C in 北京"},
		{"newline and tab", "a\nb\tc", "a\nb\tc", `a\nb\tc`},
		{"clear screen", "\x1b[2J\x1b[Hfake prompt $ ", `\x1b[2J\x1b[Hfake prompt $ `, `\x1b[2J\x1b[Hfake prompt $ `},
		{"window title (OSC, BEL)", "\x1b]0;owned\x07", `\x1b]0;owned\a`, `\x1b]0;owned\a`},
		{"carriage return over a line", "rm -rf /\rsafe text", `rm -rf /\rsafe text`, `rm -rf /\rsafe text`},
		{"backspaces", "yes\b\b\bno", `yes\b\b\bno`, `yes\b\b\bno`},
		{"NUL and DEL", "a\x00b\x7f", `a\x00b\x7f`, `a\x00b\x7f`},
		{"C1 CSI as a rune", "\u009b31mred", `\u009b31mred`, `\u009b31mred`},
		{"C1 CSI as a lone byte", "\x9b31mred", `\x9b31mred`, `\x9b31mred`},
		{"bidi override", "invoice\u202eFDP.exe", `invoice\u202eFDP.exe`, `invoice\u202eFDP.exe`},
		{"bidi isolate", "a\u2067b\u2069", `a\u2067b\u2069`, `a\u2067b\u2069`},
		{"cut rune", "é"[:1], `\xc3`, `\xc3`},
		{"form feed, vertical tab", "a\fb\vc", `a\fb\vc`, `a\fb\vc`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := safe(tt.in); got != tt.safe {
				t.Errorf("safe(%q) = %q, want %q", tt.in, got, tt.safe)
			}
			if got := safeLine(tt.in); got != tt.line {
				t.Errorf("safeLine(%q) = %q, want %q", tt.in, got, tt.line)
			}
			if got := safe(safe(tt.in)); got != tt.safe {
				t.Errorf("safe is not idempotent: %q", got)
			}
		})
	}
}

// hostile is what a hostile agent or user puts in every string it can:
// a screen clear, a window title, a carriage return and backspaces that
// rewrite the line, a C1 CSI, a bidi override, and lines and tabs that
// would break a table.
const hostile = "x\x1b[2J\x1b]0;owned\x07\rA\b\bB\u009b31m\u202eC\tD\nE"

// seen is hostile's screen clear as the commands print it.
const seen = `\x1b[2J`

// terminalSafe fails the test if out holds anything a terminal would act on.
func terminalSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, r := range out {
		if r == utf8.RuneError || r != '\n' && r != '\t' && unicode.IsControl(r) || bidi(r) {
			t.Errorf("%s printed %U at byte %d:\n%q", what, r, i, out)
			return
		}
	}
	if !strings.Contains(out, seen) {
		t.Errorf("%s does not show the hostile text (escaped) at all:\n%s", what, out)
	}
}

// hostileAgent's every event carries hostile strings: status messages,
// an artifact, ADK event metadata (agent, tool, transfer, error), and a
// question; its answer completes the task.
type hostileAgent struct{}

func (hostileAgent) Execute(_ context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	status := func(state a2a.TaskState, text string, meta map[string]any) *a2a.TaskStatusUpdateEvent {
		ev := a2a.NewStatusUpdate(req.TaskID, req.ContextID, state, a2a.NewTextMessage(a2a.RoleAgent, text))
		ev.Metadata = meta
		return ev
	}
	return func(yield func(a2a.Event, error) bool) {
		if req.Task != nil {
			yield(status(a2a.TaskStateCompleted, "done "+hostile, nil), nil)
			return
		}
		adkEvent := map[string]any{bridge.KeyEvent: map[string]any{
			"agent": hostile, "run_path": []any{map[string]any{"agent": hostile}, map[string]any{"agent": hostile}},
			"role": "assistant", "error": hostile,
			"message": map[string]any{"content": hostile, "tool_calls": []any{
				map[string]any{"function": map[string]any{"name": hostile, "arguments": hostile}}}},
			"action": map[string]any{"transfer_to_agent": map[string]any{"dest_agent_name": hostile}},
		}}
		art := a2a.Artifact{ArtifactID: "a", Name: hostile, Parts: []a2a.Part{a2a.TextPart(hostile)}}
		for _, ev := range []a2a.Event{
			status(a2a.TaskStateWorking, hostile, nil),
			a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, false, false),
			a2a.NewArtifactUpdate(req.TaskID, req.ContextID, art, true, true),
			status(a2a.TaskStateWorking, "", adkEvent),
			status(a2a.TaskStateInputRequired, hostile, nil),
		} {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (hostileAgent) Cancel(context.Context, *a2a.Task) error { return nil }

// hostileTaskID is the id of the task a hostile agent lists.
const hostileTaskID = "t" + hostile

// startHostile serves hostileAgent under a hostile card, with a task of
// hostile ids and texts already stored.
func startHostile(t *testing.T) string {
	t.Helper()
	ln, url := a2atest.Listen(t)
	card := &a2a.AgentCard{
		Name: hostile, Description: hostile, Version: "1",
		SupportedInterfaces: []a2a.AgentInterface{{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version}},
		Capabilities:        a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:   []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
	}
	msg := a2a.NewTextMessage(a2a.RoleUser, hostile)
	stored := &a2a.Task{
		ID: hostileTaskID, ContextID: "c" + hostile,
		Status:    a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: a2a.NewTextMessage(a2a.RoleAgent, hostile), Timestamp: time.Now()},
		History:   []a2a.Message{*msg},
		Artifacts: []a2a.Artifact{{ArtifactID: "a", Name: hostile, Parts: []a2a.Part{a2a.TextPart(hostile)}}},
	}
	tasks := &taskstore.Memory{}
	if _, err := tasks.Create(context.Background(), taskstore.Entry{Task: stored, Seq: 1}); err != nil {
		t.Fatal(err)
	}
	h := a2atest.NewHandler(t, server.Config{Card: card, Executor: hostileAgent{}, Tasks: tasks})
	a2atest.ServeOn(t, ln, h, jsonrpcserver.Config{})
	return url
}

// What ask, agents, tasks and watch print of a hostile agent's strings
// reaches the terminal escaped.
func TestCommandsPrintSafely(t *testing.T) {
	url := startHostile(t)
	topology := filepath.Join(t.TempDir(), "topology.yaml")
	if err := os.WriteFile(topology, fmt.Appendf(nil, "version: 1\nagents: {evil: %q}\nentry: {agent: evil}\n", url), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  func(ctx context.Context, out *strings.Builder) error
	}{
		{"ask", func(ctx context.Context, out *strings.Builder) error {
			return ask(ctx, []string{"--gateway", url, "--answer", "yes", "hello"}, strings.NewReader(""), out)
		}},
		{"agents", func(ctx context.Context, out *strings.Builder) error {
			return agents(ctx, []string{"--topology", topology, "--gateway", url}, out)
		}},
		{"tasks list", func(ctx context.Context, out *strings.Builder) error {
			return tasks(ctx, []string{"--agent", url, "list"}, out)
		}},
		{"tasks get", func(ctx context.Context, out *strings.Builder) error {
			return tasks(ctx, []string{"--agent", url, "get", hostileTaskID}, out)
		}},
		{"watch", func(_ context.Context, out *strings.Builder) error {
			v := &watchView{w: out, renderers: map[string]*renderer{}}
			for _, ev := range []a2a.Event{
				a2a.NewStatusUpdate("t", "c", a2a.TaskStateWorking, a2a.NewTextMessage(a2a.RoleAgent, hostile)),
				a2a.NewArtifactUpdate("t", "c", a2a.Artifact{ArtifactID: "a", Name: hostile, Parts: []a2a.Part{a2a.TextPart(hostile)}}, false, true),
				a2a.NewStatusUpdate("t", "c", a2a.TaskStateFailed, a2a.NewTextMessage(a2a.RoleAgent, hostile)),
			} {
				v.show(natsstore.WatchedEvent{Agent: "agent" + hostile, TaskID: hostile, ContextID: hostile, Event: ev})
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out strings.Builder
			if err := tt.run(ctx, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			terminalSafe(t, tt.name, out.String())
		})
	}
}
