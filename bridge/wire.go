// Package bridge joins the agent kit and the protocol: Executor serves any
// adk.Agent as an A2A agent (one task, one Runner run), and RemoteAgent
// makes any A2A agent an adk.Agent, so transfer, workflows, interrupts,
// cancellation and session values span processes. It is the only package
// that imports both adk and a2a.
//
// ADK events travel as A2A events a plain client understands (answers as
// artifacts, streamed as appended chunks; tool calls and results as WORKING
// status messages) with the ADK facts in metadata under keys that start
// with MetadataPrefix; docs/bridge.md documents them.
package bridge

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/internal/fastjson"
)

// MetadataPrefix starts every metadata key the bridge writes.
const MetadataPrefix = "a2amesh.adk."

// The metadata keys.
const (
	// KeyEvent, on a status or artifact update, describes the ADK event it
	// carries (eventMeta).
	KeyEvent = MetadataPrefix + "event"
	// KeyRun, on a request, is what the caller's run gives the remote one
	// (runMeta).
	KeyRun = MetadataPrefix + "run"
	// KeyResult, on a task's final status update, is what the run leaves
	// for its caller (resultMeta).
	KeyResult = MetadataPrefix + "result"
	// KeyPoints, on the message of an INPUT_REQUIRED status, lists the
	// interrupted points ([]adk.InterruptPoint).
	KeyPoints = MetadataPrefix + "points"
)

// eventMeta describes one ADK event.
type eventMeta struct {
	Agent   string        `json:"agent,omitempty"`
	RunPath []adk.RunStep `json:"run_path,omitempty"`
	// Role and ToolName are the MessageVariant's.
	Role     schema.Role `json:"role,omitempty"`
	ToolName string      `json:"tool_name,omitempty"`
	// Streaming marks a streamed message; its artifact chunks are the
	// stream's text chunks.
	Streaming bool `json:"streaming,omitempty"`
	// Message is the whole message (on an artifact's last chunk: all but
	// the text the chunks carried).
	Message *schema.Message `json:"message,omitempty"`
	// StreamError ends a streamed message that failed.
	StreamError string `json:"stream_error,omitempty"`
	// Output says the event has a message output (an event may have only
	// an action or a customized output).
	Output           bool             `json:"output,omitempty"`
	CustomizedOutput json.RawMessage  `json:"customized_output,omitempty"`
	Action           *adk.AgentAction `json:"action,omitempty"`
	Error            string           `json:"error,omitempty"`
}

// runMeta is what a caller's run sends with its request.
type runMeta struct {
	// RunPath is the remote agent's RunPath in the caller's run.
	RunPath []adk.RunStep `json:"run_path,omitempty"`
	// Callers are the caller's agents the remote agent may transfer to.
	Callers []adk.CallerAgent `json:"callers,omitempty"`
	// SessionValues are the caller's (adk.MarshalSessionValues).
	SessionValues json.RawMessage `json:"session_values,omitempty"`
	// Input is the remote agent's whole input; the message carries only
	// the request's text.
	Input []*schema.Message `json:"input,omitempty"`
	// Streaming asks for streamed model output.
	Streaming bool `json:"streaming,omitempty"`
	// Resume, on a message to an INPUT_REQUIRED task, holds the inputs by
	// interrupt point id.
	Resume map[string]any `json:"resume,omitempty"`
	// ResumeTask, on a new task, is an earlier task whose run this one
	// resumes from its checkpoint: the server lost that task (a restart
	// with tasks in memory, an expiry) but kept the checkpoint. The new
	// task must be in the earlier one's context.
	ResumeTask string `json:"resume_task,omitempty"`
}

// The longest ids run metadata may name.
const (
	// maxTaskIDBytes bounds resume_task, a task of this server, whose ids
	// (a2a.NewID) have 36 bytes.
	maxTaskIDBytes = 128
	// maxPointIDBytes bounds the ids of resume inputs: interrupted points,
	// named by their agents' RunPath and a tool call id.
	maxPointIDBytes = 4096
)

// check refuses run metadata no caller of ours sends.
func (m *runMeta) check() error {
	if len(m.ResumeTask) > maxTaskIDBytes {
		return fmt.Errorf("%s: resume_task has %d bytes; a task id has at most %d", KeyRun, len(m.ResumeTask), maxTaskIDBytes)
	}
	for id := range m.Resume {
		if len(id) > maxPointIDBytes {
			return fmt.Errorf("%s: a resume input's id has %d bytes; an interrupted point's id has at most %d", KeyRun, len(id), maxPointIDBytes)
		}
	}
	for i, m := range m.Input {
		if m == nil {
			return fmt.Errorf("%s: input message %d is null", KeyRun, i)
		}
	}
	for i, s := range m.RunPath {
		if s.AgentName == "" {
			return fmt.Errorf("%s: run_path step %d has no agent", KeyRun, i)
		}
	}
	for i, c := range m.Callers {
		if c.Name == "" {
			return fmt.Errorf("%s: caller %d has no name", KeyRun, i)
		}
	}
	return nil
}

// resultMeta is what a finished or interrupted run leaves its caller.
type resultMeta struct {
	// SessionValues are the values the run set or changed.
	SessionValues json.RawMessage `json:"session_values,omitempty"`
	// Interrupt, on INPUT_REQUIRED, is what the run waits for.
	Interrupt *adk.InterruptInfo `json:"interrupt,omitempty"`
}

// metaValue reads a metadata value as a T: it arrives as plain JSON values
// after the wire, or as the Go value within a process.
func metaValue[T any](m map[string]any, key string) (T, bool, error) {
	var v T
	raw, ok := m[key]
	if !ok || raw == nil {
		return v, false, nil
	}
	if t, ok := raw.(T); ok {
		return t, true, nil
	}
	if fastjson.Enabled {
		if t, ok := fromPlain[T](raw); ok {
			return t, true, nil
		}
	}
	b, err := fastjson.AppendAny(nil, raw)
	if err != nil {
		return v, false, fmt.Errorf("metadata %s: %w", key, err)
	}
	if err := fastjson.Unmarshal(b, &v); err != nil {
		return v, false, fmt.Errorf("metadata %s: %w", key, err)
	}
	return v, true, nil
}

// toA2AMessage renders an ADK message for a plain A2A reader: its text, and
// for tool calls and results a line that says what happened.
func toA2AMessage(agent string, m *schema.Message) *a2a.Message {
	var parts []a2a.Part
	if text := m.Text(); text != "" && m.Role != schema.Tool {
		parts = append(parts, a2a.TextPart(text))
	}
	for _, tc := range m.ToolCalls {
		parts = append(parts, a2a.TextPart(fmt.Sprintf("[%s] calls %s(%s)", agent, tc.Function.Name, tc.Function.Arguments)))
	}
	if m.Role == schema.Tool {
		parts = append(parts, a2a.TextPart(fmt.Sprintf("[%s] %s returned: %s", agent, m.ToolName, m.Text())))
	}
	if len(parts) == 0 {
		parts = append(parts, a2a.TextPart(fmt.Sprintf("[%s]", agent)))
	}
	return a2a.NewMessage(a2a.RoleAgent, parts...)
}

// fromA2AMessage turns an A2A message into ADK input: text parts become
// content; files and data become multi-part content.
func fromA2AMessage(m *a2a.Message) *schema.Message {
	role := schema.User
	if m.Role == a2a.RoleAgent {
		role = schema.Assistant
	}
	out := &schema.Message{Role: role}
	var text []string
	for _, p := range m.Parts {
		switch p.Kind() {
		case a2a.PartKindText:
			text = append(text, p.Text)
		case a2a.PartKindURL:
			out.MultiContent = append(out.MultiContent, schema.ContentPart{Type: fileKind(p.MediaType), URL: p.URL, MIMEType: p.MediaType})
		case a2a.PartKindRaw:
			out.MultiContent = append(out.MultiContent, schema.ContentPart{Type: fileKind(p.MediaType),
				URL: "data:" + p.MediaType + ";base64," + base64.StdEncoding.EncodeToString(p.Raw), MIMEType: p.MediaType})
		case a2a.PartKindData:
			text = append(text, string(p.Data))
		}
	}
	out.Content = strings.Join(text, "\n")
	return out
}

func fileKind(mediaType string) schema.ContentPartType {
	if strings.HasPrefix(mediaType, "image/") {
		return schema.ContentImageURL
	}
	return schema.ContentFileURL
}

// infoText renders what an interrupt asks as text.
func infoText(info any) string {
	switch v := info.(type) {
	case nil:
		return "input required"
	case string:
		return v
	}
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Sprint(info)
	}
	return string(b)
}
