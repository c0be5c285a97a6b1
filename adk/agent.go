// Package adk is a2amesh's agent development kit, in the style of CloudWeGo
// Eino's ADK. It owns the Agent interface and the event stream an agent run
// produces, the Runner that drives a run with its session values and
// history, the ReAct ChatModelAgent, transfer between agents, the workflow
// agents (sequential, parallel, loop), and agents used as tools.
//
// A run is one goroutine: agents of this package run inline on it, one
// after another as transfers and workflow steps hand over, and only
// Parallel adds goroutines (one per branch). Events reach the caller
// through an unbounded queue, so a slow or absent reader never blocks an
// agent.
//
// A run reports through the telemetry.Telemetry its context carries
// (telemetry.NewContext; an A2A server puts its own in every task run's
// context): a span for each agent's run, chat model call (with its token
// usage), tool call and transfer, children of the context's span, and the
// model metrics. A run whose context carries none reports nothing.
//
// The package knows nothing of HTTP or A2A; the bridge package maps runs to
// A2A tasks.
package adk

import (
	"context"
	"fmt"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// Agent is something that answers: a model with tools, a workflow, a remote
// agent. Implementations are safe for concurrent runs.
type Agent interface {
	// Name identifies the agent among the agents it can transfer to; it is
	// what transfer_to_agent names.
	Name(ctx context.Context) string
	// Description tells other agents (and their models) what the agent is
	// good at.
	Description(ctx context.Context) string
	// Run starts a run and returns its events. The iterator ends when the
	// run does; a run that fails ends with an event whose Err is set.
	// Cancelling ctx ends the run.
	Run(ctx context.Context, input *AgentInput, opts ...AgentRunOption) *AsyncIterator[*AgentEvent]
}

// OnSubAgents is implemented by agents that need to know where they sit in
// an agent tree: ChatModelAgent uses it to offer transfer_to_agent. The
// methods are called by SetSubAgents and AgentWithConfig before any run.
type OnSubAgents interface {
	OnSetSubAgents(ctx context.Context, subAgents []Agent) error
	OnSetAsSubAgent(ctx context.Context, parent Agent) error
	OnDisallowTransferToParent(ctx context.Context) error
}

// AgentInput is what an agent is asked.
type AgentInput struct {
	Messages []*schema.Message
	// EnableStreaming asks for streamed model output where the agent can
	// stream; events then carry message streams.
	EnableStreaming bool
}

// RunStep is one agent on a RunPath.
type RunStep struct {
	AgentName string `json:"agent"`
}

func (s RunStep) String() string { return s.AgentName }

// AgentEvent is one thing that happened in a run: a message (whole or
// streamed), an action, or an error. Exactly one of Output and Err is
// usually set; Action may come with Output.
type AgentEvent struct {
	// AgentName is the agent that produced the event.
	AgentName string
	// RunPath is the chain of agents that led to the event: the root
	// agent first, then every agent transferred to or run as a workflow
	// step, ending with the producer. It is shared between events and must
	// not be modified.
	RunPath []RunStep

	Output *AgentOutput
	Action *AgentAction
	// Err is why the run failed; it is the last event of its agent.
	Err error

	// recorded is set once the event's message is in the run's history.
	recorded bool
}

// CallerAgent is an agent of a caller's agent tree that a run's root agent
// may transfer to (see WithCallerAgents).
type CallerAgent struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Skills are what the agent declares (SkillsOf); the transfer
	// instruction lists them under the agent.
	Skills []Skill `json:"skills,omitempty"`
}

// AgentOutput is what an event carries.
type AgentOutput struct {
	MessageOutput *MessageVariant
	// CustomizedOutput is for agents that produce something other than
	// messages.
	CustomizedOutput any
}

// MessageVariant is a message, either whole or as a stream of chunks.
type MessageVariant struct {
	IsStreaming bool
	// Message is set when IsStreaming is false.
	Message *schema.Message
	// MessageStream is set when IsStreaming is true; the reader of the
	// event owns it and should Close it.
	MessageStream *schema.StreamReader[*schema.Message]

	// Role is the message's role: Assistant for model output, Tool for a
	// tool's result.
	Role schema.Role
	// ToolName names the tool when Role is Tool.
	ToolName string
}

// GetMessage returns the whole message: Message, or the concatenation of
// the stream, which it reads to the end and closes.
func (v *MessageVariant) GetMessage() (*schema.Message, error) {
	if !v.IsStreaming {
		return v.Message, nil
	}
	if v.MessageStream == nil {
		return nil, fmt.Errorf("adk: streaming message output without a stream")
	}
	return schema.ConcatMessageStream(v.MessageStream)
}

// AgentAction is what an agent asks of the agents around it.
type AgentAction struct {
	// Exit ends the run of the agent and of the workflow it is a step of.
	Exit bool `json:"exit,omitempty"`
	// Interrupted says the agent stopped to wait for input.
	Interrupted *InterruptInfo `json:"interrupted,omitempty"`
	// TransferToAgent hands the conversation to another agent when the
	// producing agent ends.
	TransferToAgent *TransferToAgentAction `json:"transfer_to_agent,omitempty"`
	// BreakLoop ends the nearest enclosing Loop agent.
	BreakLoop *BreakLoopAction `json:"break_loop,omitempty"`
	// CustomizedAction is for application-defined actions; the framework
	// passes it on untouched.
	CustomizedAction any `json:"customized_action,omitempty"`
}

// TransferToAgentAction names the agent to hand over to.
type TransferToAgentAction struct {
	DestAgentName string `json:"dest_agent_name"`
}

// BreakLoopAction ends a Loop agent. The Loop that handles it sets Done and
// CurrentIterations, so enclosing loops ignore it.
type BreakLoopAction struct {
	// From names the agent that asked for the break.
	From string `json:"from"`
	Done bool   `json:"done,omitempty"`
	// CurrentIterations is the iteration (counting from 0) that was
	// broken.
	CurrentIterations int `json:"current_iterations,omitempty"`
}

// NewExitAction returns an action that ends the run.
func NewExitAction() *AgentAction { return &AgentAction{Exit: true} }

// NewTransferToAgentAction returns an action that hands over to the named
// agent.
func NewTransferToAgentAction(dest string) *AgentAction {
	return &AgentAction{TransferToAgent: &TransferToAgentAction{DestAgentName: dest}}
}

// NewBreakLoopAction returns an action that ends the enclosing Loop agent.
func NewBreakLoopAction(agentName string) *AgentAction {
	return &AgentAction{BreakLoop: &BreakLoopAction{From: agentName}}
}

// EventFromMessage returns an event carrying msg, or stream when msg is nil.
func EventFromMessage(msg *schema.Message, stream *schema.StreamReader[*schema.Message], role schema.Role, toolName string) *AgentEvent {
	return &AgentEvent{Output: &AgentOutput{MessageOutput: &MessageVariant{
		IsStreaming:   msg == nil && stream != nil,
		Message:       msg,
		MessageStream: stream,
		Role:          role,
		ToolName:      toolName,
	}}}
}

// ErrorEvent returns an event that reports err.
func ErrorEvent(err error) *AgentEvent { return &AgentEvent{Err: err} }
