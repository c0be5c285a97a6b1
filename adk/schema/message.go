// Package schema holds what agents, models and tools exchange: messages
// (roles, text and multi-part content, tool calls, usage), streams of
// message chunks and their concatenation, and tool descriptions with their
// JSON-schema parameters.
package schema

import (
	"fmt"
	"strings"
)

// Role is who wrote a message.
type Role string

// The roles of a conversation.
const (
	System    Role = "system"
	User      Role = "user"
	Assistant Role = "assistant"
	Tool      Role = "tool"
)

// Message is one message of a conversation with a model.
type Message struct {
	Role Role `json:"role"`
	// Content is the text of the message.
	Content string `json:"content,omitempty"`
	// MultiContent holds content of several kinds (text, images, files)
	// for models that take it; Content and MultiContent may both be set.
	MultiContent []ContentPart `json:"multi_content,omitempty"`
	// Name optionally names the participant that wrote the message.
	Name string `json:"name,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// ResponseMeta is what the model reported about its reply.
	ResponseMeta *ResponseMeta `json:"response_meta,omitempty"`
	// Extra carries provider- or application-specific values.
	Extra map[string]any `json:"extra,omitempty"`
}

// ContentPartType tells what a ContentPart holds.
type ContentPartType string

// Kinds of content part.
const (
	ContentText     ContentPartType = "text"
	ContentImageURL ContentPartType = "image_url"
	ContentFileURL  ContentPartType = "file_url"
)

// ContentPart is one piece of a multi-part message.
type ContentPart struct {
	Type ContentPartType `json:"type"`
	Text string          `json:"text,omitempty"`
	// URL locates an image or file; it may be a data: URL.
	URL string `json:"url,omitempty"`
	// MIMEType describes what URL points to, when known.
	MIMEType string `json:"mime_type,omitempty"`
}

// ToolCall is a call of a tool that a model asks for.
type ToolCall struct {
	// Index orders the calls of one message; in a stream it says which
	// call a chunk continues. nil outside streams.
	Index *int   `json:"index,omitempty"`
	ID    string `json:"id,omitempty"`
	// Type is "function", the only kind today.
	Type     string       `json:"type,omitempty"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names a tool and carries its arguments as JSON text.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ResponseMeta is what a model reported about a reply.
type ResponseMeta struct {
	// FinishReason is why the model stopped: "stop", "tool_calls",
	// "length", ...
	FinishReason string `json:"finish_reason,omitempty"`
	Usage        *Usage `json:"usage,omitempty"`
}

// Usage counts the tokens of a model call.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// SystemMessage returns a system message.
func SystemMessage(content string) *Message { return &Message{Role: System, Content: content} }

// UserMessage returns a user message.
func UserMessage(content string) *Message { return &Message{Role: User, Content: content} }

// AssistantMessage returns an assistant message with optional tool calls.
func AssistantMessage(content string, toolCalls []ToolCall) *Message {
	return &Message{Role: Assistant, Content: content, ToolCalls: toolCalls}
}

// ToolMessage returns the result of a tool call.
func ToolMessage(content, toolCallID, toolName string) *Message {
	return &Message{Role: Tool, Content: content, ToolCallID: toolCallID, ToolName: toolName}
}

// String renders the message for logs and debugging.
func (m *Message) String() string {
	var b strings.Builder
	b.WriteString(string(m.Role))
	if m.ToolName != "" {
		fmt.Fprintf(&b, "(%s)", m.ToolName)
	}
	b.WriteString(": ")
	b.WriteString(m.Content)
	for _, tc := range m.ToolCalls {
		fmt.Fprintf(&b, " [call %s(%s)]", tc.Function.Name, tc.Function.Arguments)
	}
	return b.String()
}

// Text returns the message's text: Content, then the text parts of
// MultiContent.
func (m *Message) Text() string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var b strings.Builder
	b.WriteString(m.Content)
	for _, p := range m.MultiContent {
		if p.Type == ContentText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
