package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/bridge"
)

// eventMeta is the part of the bridge's event metadata the renderer shows.
type eventMeta struct {
	Agent   string `json:"agent"`
	RunPath []struct {
		Agent string `json:"agent"`
	} `json:"run_path"`
	Role     string `json:"role"`
	ToolName string `json:"tool_name"`
	Message  *struct {
		Content   string `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"message"`
	Action *struct {
		Exit            bool `json:"exit"`
		TransferToAgent *struct {
			Dest string `json:"dest_agent_name"`
		} `json:"transfer_to_agent"`
		BreakLoop *struct{} `json:"break_loop"`
	} `json:"action"`
	Error string `json:"error"`
}

func readMeta(m map[string]any) (*eventMeta, bool) {
	raw, ok := m[bridge.KeyEvent]
	if !ok {
		return nil, false
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, false
	}
	var em eventMeta
	if json.Unmarshal(b, &em) != nil {
		return nil, false
	}
	return &em, true
}

// renderer writes a task's events as lines indented by RunPath: who said
// what, which tools ran, where control went. Artifact chunks print as they
// come, on one line. Everything an event carries is printed through safe
// or safeLine: it comes from agents and the people using them.
type renderer struct {
	w io.Writer
	// open is the artifact being printed chunk by chunk.
	open string
	// prefix starts every line (watch puts the task there).
	prefix string
	// indent continues the open artifact's lines.
	indent string
}

func (r *renderer) line(depth int, who, text string) {
	r.close()
	fmt.Fprintf(r.w, "%s%s%s %s\n", r.prefix, strings.Repeat("  ", max(depth, 0)), safeLine(who), safe(text))
}

func (r *renderer) close() {
	if r.open != "" {
		fmt.Fprintln(r.w)
		r.open = ""
	}
}

func depthOf(m *eventMeta) int { return len(m.RunPath) - 1 }

func who(m *eventMeta, fallback string) string {
	if m != nil && m.Agent != "" {
		return "[" + m.Agent + "]"
	}
	return "[" + fallback + "]"
}

// event renders one event; agent names the producer when no metadata does.
func (r *renderer) event(ev a2a.Event, agent string) {
	switch e := ev.(type) {
	case *a2a.Task:
		// The stream's first event: the task itself, not news.
	case *a2a.Message:
		r.line(0, "["+agent+"]", e.Text())
	case *a2a.TaskArtifactUpdateEvent:
		m, ok := readMeta(e.Metadata)
		text := safe(e.Artifact.Text())
		if e.Append && r.open == e.Artifact.ArtifactID {
			fmt.Fprint(r.w, strings.ReplaceAll(text, "\n", "\n"+r.indent))
		} else {
			r.close()
			depth := 0
			if ok {
				depth = depthOf(m)
			}
			lead := r.prefix + strings.Repeat("  ", max(depth, 0))
			r.indent = lead + "  "
			fmt.Fprintf(r.w, "%s%s %s", lead, safeLine(who(m, agent)), strings.ReplaceAll(text, "\n", "\n"+r.indent))
			r.open = e.Artifact.ArtifactID
		}
		if e.LastChunk {
			r.close()
		}
	case *a2a.TaskStatusUpdateEvent:
		m, ok := readMeta(e.Metadata)
		switch {
		case ok:
			r.adk(m)
		case e.Status.State == a2a.TaskStateWorking || e.Status.State == a2a.TaskStateSubmitted:
			if e.Status.Message != nil {
				r.line(0, "["+agent+"]", e.Status.Message.Text())
			}
		}
		if s := e.Status.State; s.Terminal() || s == a2a.TaskStateInputRequired {
			text := strings.ToLower(stateName(s))
			if e.Status.Message != nil && e.Status.Message.Text() != "" {
				text += ": " + e.Status.Message.Text() // as the agent wrote it
			}
			r.line(0, "·", text)
		}
	}
}

// adk renders an ADK event carried in a status update.
func (r *renderer) adk(m *eventMeta) {
	d := depthOf(m)
	if msg := m.Message; msg != nil {
		if m.Role == "tool" {
			r.line(d, who(m, ""), "← "+m.ToolName+": "+oneLine(msg.Content))
		} else {
			if msg.Content != "" {
				r.line(d, who(m, ""), oneLine(msg.Content))
			}
			for _, tc := range msg.ToolCalls {
				r.line(d, who(m, ""), "→ "+tc.Function.Name+" "+tc.Function.Arguments)
			}
		}
	}
	if a := m.Action; a != nil {
		switch {
		case a.TransferToAgent != nil:
			r.line(d, who(m, ""), "⇢ transfers to "+a.TransferToAgent.Dest)
		case a.Exit:
			r.line(d, who(m, ""), "⇥ exits")
		case a.BreakLoop != nil:
			r.line(d, who(m, ""), "⇥ ends the loop")
		}
	}
	if m.Error != "" {
		r.line(d, who(m, ""), "✗ "+m.Error)
	}
}

// oneLine returns s on one line, cut after 400 bytes (at a rune's
// start), fit for a terminal (safeLine).
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 400 {
		cut := 400
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return safeLine(strings.ReplaceAll(s, "\n", " ⏎ "))
}
