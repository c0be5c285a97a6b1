// Package modeltest is a scripted model.ChatModel for tests and
// benchmarks: it answers from a script, records what it was asked, and
// streams its answers in several chunks, with tool-call arguments split
// across deltas the way real endpoints send them.
package modeltest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Script decides the reply to a call: the call's number (from 0), the
// conversation, and the tools bound to the model.
type Script func(ctx context.Context, call int, input []*schema.Message, tools []*schema.ToolInfo) (*schema.Message, error)

// Call is one recorded call.
type Call struct {
	Input []*schema.Message
	Tools []*schema.ToolInfo
}

// Model is a scripted model. Models returned by WithTools share its script
// and its record.
type Model struct {
	shared *shared
	tools  []*schema.ToolInfo
}

type shared struct {
	script Script
	record bool

	mu    sync.Mutex
	n     int
	calls []Call
}

// ErrScriptEnded is what a model made by New returns when asked more often
// than it has replies.
var ErrScriptEnded = errors.New("modeltest: the script has no more replies")

// New returns a model that gives the replies in order, one per call, and
// records its calls.
func New(replies ...*schema.Message) *Model {
	return FromScript(func(_ context.Context, call int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if call >= len(replies) {
			return nil, fmt.Errorf("%w (call %d, %d replies)", ErrScriptEnded, call+1, len(replies))
		}
		return replies[call], nil
	})
}

// FromScript returns a model that answers with script and records its
// calls.
func FromScript(script Script) *Model {
	return &Model{shared: &shared{script: script, record: true}}
}

// Unrecorded returns a model that answers with script and keeps no record,
// for benchmarks.
func Unrecorded(script Script) *Model {
	return &Model{shared: &shared{script: script}}
}

// Calls returns the calls made so far, in order.
func (m *Model) Calls() []Call {
	m.shared.mu.Lock()
	defer m.shared.mu.Unlock()
	return append([]Call(nil), m.shared.calls...)
}

// WithTools returns a model bound to tools, sharing m's script and record.
func (m *Model) WithTools(tools []*schema.ToolInfo) (model.ChatModel, error) {
	return &Model{shared: m.shared, tools: tools}, nil
}

func (m *Model) reply(ctx context.Context, input []*schema.Message) (*schema.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := m.shared
	s.mu.Lock()
	call := s.n
	s.n++
	if s.record {
		s.calls = append(s.calls, Call{Input: append([]*schema.Message(nil), input...), Tools: m.tools})
	}
	s.mu.Unlock()
	msg, err := s.script(ctx, call, input, m.tools)
	if err != nil {
		return nil, err
	}
	if msg.Role == "" {
		cp := *msg
		cp.Role = schema.Assistant
		msg = &cp
	}
	return msg, nil
}

// Generate returns the script's reply.
func (m *Model) Generate(ctx context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	return m.reply(ctx, input)
}

// Stream returns the script's reply in chunks (schema.SplitMessage with
// three pieces).
func (m *Model) Stream(ctx context.Context, input []*schema.Message, _ ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.reply(ctx, input)
	if err != nil {
		return nil, err
	}
	return schema.FromSlice(schema.SplitMessage(msg, 3)), nil
}

// Answer returns an assistant message with text and no tool calls.
func Answer(text string) *schema.Message { return schema.AssistantMessage(text, nil) }

// CallTool returns an assistant message that calls one tool; the call's id
// is "call_" and the tool's name.
func CallTool(name, arguments string) *schema.Message {
	return schema.AssistantMessage("", []schema.ToolCall{ToolCall("call_"+name, name, arguments)})
}

// ToolCall returns a tool call.
func ToolCall(id, name, arguments string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: arguments}}
}
