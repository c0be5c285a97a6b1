package schema

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// ConcatMessages joins the chunks of a streamed message into one message:
// contents are concatenated; tool-call chunks with the same Index are
// merged (ids and types taken from the first chunk that has them, names
// and argument fragments concatenated), calls without an Index kept as
// they come; the last reported finish reason and usage win; Extra maps are
// merged. Chunks from different roles are an error.
func ConcatMessages(chunks []*Message) (*Message, error) {
	switch len(chunks) {
	case 0:
		return nil, errors.New("schema: no message chunks to concatenate")
	case 1:
		return chunks[0], nil
	}
	out := &Message{}
	var content strings.Builder
	var calls []ToolCall
	byIndex := map[int]int{} // tool call index -> position in calls
	var args []*strings.Builder
	for i, c := range chunks {
		if c == nil {
			return nil, fmt.Errorf("schema: message chunk %d is nil", i)
		}
		if c.Role != "" {
			if out.Role != "" && out.Role != c.Role {
				return nil, fmt.Errorf("schema: message chunks of roles %q and %q cannot be concatenated", out.Role, c.Role)
			}
			out.Role = c.Role
		}
		content.WriteString(c.Content)
		out.MultiContent = append(out.MultiContent, c.MultiContent...)
		out.Name = first(out.Name, c.Name)
		out.ToolCallID = first(out.ToolCallID, c.ToolCallID)
		out.ToolName = first(out.ToolName, c.ToolName)
		for _, tc := range c.ToolCalls {
			if tc.Index == nil {
				calls = append(calls, tc)
				args = append(args, nil)
				continue
			}
			at, seen := byIndex[*tc.Index]
			if !seen {
				at = len(calls)
				byIndex[*tc.Index] = at
				idx := *tc.Index
				calls = append(calls, ToolCall{Index: &idx})
				args = append(args, new(strings.Builder))
			}
			merged := &calls[at]
			merged.ID = first(merged.ID, tc.ID)
			merged.Type = first(merged.Type, tc.Type)
			merged.Function.Name += tc.Function.Name
			args[at].WriteString(tc.Function.Arguments)
		}
		if m := c.ResponseMeta; m != nil {
			if out.ResponseMeta == nil {
				out.ResponseMeta = &ResponseMeta{}
			}
			out.ResponseMeta.FinishReason = last(out.ResponseMeta.FinishReason, m.FinishReason)
			if m.Usage != nil {
				out.ResponseMeta.Usage = m.Usage
			}
		}
		if len(c.Extra) > 0 {
			if out.Extra == nil {
				out.Extra = make(map[string]any, len(c.Extra))
			}
			maps.Copy(out.Extra, c.Extra)
		}
	}
	out.Content = content.String()
	for i := range calls {
		if args[i] != nil {
			calls[i].Function.Arguments = args[i].String()
		}
	}
	if len(calls) > 0 {
		slices.SortStableFunc(calls, func(a, b ToolCall) int {
			switch {
			case a.Index == nil || b.Index == nil:
				return 0
			case *a.Index < *b.Index:
				return -1
			case *a.Index > *b.Index:
				return 1
			}
			return 0
		})
		out.ToolCalls = calls
	}
	return out, nil
}

// ConcatMessageStream reads a stream to its end, closes it, and joins its
// chunks.
func ConcatMessageStream(s *StreamReader[*Message]) (*Message, error) {
	defer s.Close()
	var chunks []*Message
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		chunks = append(chunks, m)
	}
	return ConcatMessages(chunks)
}

func first(have, next string) string {
	if have != "" {
		return have
	}
	return next
}

func last(have, next string) string {
	if next != "" {
		return next
	}
	return have
}

// SplitMessage splits msg into the chunks a streaming endpoint would send,
// the inverse of ConcatMessages, for stand-in models that stream: the text
// in up to pieces parts, then for each tool call a chunk with its id, name
// and the first half of its arguments and a chunk with the rest, then a
// chunk with the finish reason and usage.
func SplitMessage(msg *Message, pieces int) []*Message {
	var out []*Message
	text := []rune(msg.Content)
	for i, n := 0, len(text); i < pieces && n > 0; i++ {
		if part := string(text[i*n/pieces : (i+1)*n/pieces]); part != "" {
			out = append(out, &Message{Role: msg.Role, Content: part})
		}
	}
	for i, tc := range msg.ToolCalls {
		half := len(tc.Function.Arguments) / 2
		head := ToolCall{Index: &i, ID: tc.ID, Type: tc.Type,
			Function: FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments[:half]}}
		rest := ToolCall{Index: &i, Function: FunctionCall{Arguments: tc.Function.Arguments[half:]}}
		out = append(out,
			&Message{Role: msg.Role, ToolCalls: []ToolCall{head}},
			&Message{Role: msg.Role, ToolCalls: []ToolCall{rest}})
	}
	meta := msg.ResponseMeta
	if meta == nil {
		reason := "stop"
		if len(msg.ToolCalls) > 0 {
			reason = "tool_calls"
		}
		meta = &ResponseMeta{FinishReason: reason}
	}
	return append(out, &Message{Role: msg.Role, ResponseMeta: meta, Name: msg.Name, Extra: msg.Extra})
}
