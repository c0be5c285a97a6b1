package adk

import "github.com/a2amesh/a2amesh/adk/schema"

// ContextMessageKey is the schema.Message.Extra key that marks a context
// message: a user message that retells, for the agent reading it, what
// another agent said or did ("For context: [RouterAgent] said: ...").
// Its value is the name of the agent whose message it retells, a string.
// An agent's default input (see AgentConfig.HistoryRewriter) marks every message it
// rewrites so; a HistoryRewriter that retells other agents' messages
// should mark them too, or they count as the person's words.
//
// The mark is a key of Extra, not a field of schema.Message, because it is
// this package's fact about a message, not the model's: schema stays the
// model's vocabulary, and Extra already goes wherever a message goes (the
// run's history, checkpoints, the run input a bridge.RemoteAgent sends to
// another process, stream concatenation) while model clients leave it
// out of what they send the provider. The text prefix "For context:" is
// for the model and is not the mark: a person may start a message with it.
const ContextMessageKey = "a2amesh.adk.context"

// IsContext reports whether m is a context message: whether its Extra
// holds ContextMessageKey with a non-empty string (the retold agent's
// name). Text alone never makes a message context.
func IsContext(m *schema.Message) bool {
	if m == nil {
		return false
	}
	agent, _ := m.Extra[ContextMessageKey].(string)
	return agent != ""
}

// UserRequest returns the person's request among msgs: the last user
// message that is not context (IsContext), or nil when there is none.
//
// Any agent's input may end in context after the request: an agent that a
// transfer reached, in this process or another, gets the run's input and
// then what the agents before it said and did, rewritten as user messages;
// a run started by a caller in another process (bridge.Executor) begins
// with that caller's whole input, context included, so RunInput holds it
// too. Earlier turns of a conversation come before the request and are not
// part of it. Agents that act on "what was asked" rather than on the whole
// conversation take it from here.
func UserRequest(msgs []*schema.Message) *schema.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m != nil && m.Role == schema.User && !IsContext(m) {
			return m
		}
	}
	return nil
}
