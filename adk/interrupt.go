package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// InterruptInfo is what an interrupted agent leaves for its caller.
type InterruptInfo struct {
	// Data is what the interruption asks: what to show a person. With
	// several interrupted points, it is the first one's Info.
	Data any `json:"data,omitempty"`
	// Points are the places that stopped to wait for input. Resume gives
	// each its input with ResumeWith(point.ID, input).
	Points []*InterruptPoint `json:"points,omitempty"`

	// state is a custom agent's own state, from NewInterruptEvent.
	state any
}

// InterruptPoint is one place of a run that stopped to wait for input: a
// tool call, or an agent.
type InterruptPoint struct {
	// ID names the point in ResumeWith. It is the agent's RunPath joined
	// by "/", then "#" and the tool call's id for a tool; for a point
	// inside an agent used as a tool, the tool call's ID, ">" and the
	// point's ID within that agent's run.
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	RunPath []RunStep `json:"run_path"`
	// Tool names the tool, when a tool call interrupted.
	Tool string `json:"tool,omitempty"`
	// Info is what the point asks.
	Info any `json:"info,omitempty"`
}

// ErrInterrupted is what Interrupt and StatefulInterrupt return; a tool
// returns it to stop its call.
var ErrInterrupted = errors.New("adk: interrupted, waiting for input")

// Interrupt stops the tool call ctx belongs to and asks for input: the
// tool returns the error Interrupt gives. info is what to show a person.
// The agent emits an event whose Action.Interrupted lists the point; the
// Runner keeps a checkpoint; Runner.Resume runs the call again, and there
// GetResumeData returns the input aimed at it.
func Interrupt(ctx context.Context, info any) error {
	return StatefulInterrupt(ctx, info, nil)
}

// StatefulInterrupt is Interrupt for a tool that needs state to continue:
// state (JSON-encodable) comes back through GetInterruptState when the call
// runs again.
func StatefulInterrupt(ctx context.Context, info, state any) error {
	c, ok := ctx.Value(toolCallKey{}).(*toolCall)
	if !ok {
		return ErrNotInToolCall
	}
	p := &pendingInterrupt{info: info}
	if state != nil {
		raw, err := json.Marshal(state)
		if err != nil {
			return fmt.Errorf("adk: the state of an interrupted tool call cannot be saved: %w", err)
		}
		p.state = raw
	}
	c.interrupt = p
	return ErrInterrupted
}

// GetInterruptState returns the state the tool call ctx belongs to saved
// when it interrupted; ok is false on a call that was not interrupted
// before or saved none.
func GetInterruptState[T any](ctx context.Context) (state T, ok bool, err error) {
	c, inCall := ctx.Value(toolCallKey{}).(*toolCall)
	if !inCall || len(c.resumedState) == 0 {
		return state, false, nil
	}
	if err := json.Unmarshal(c.resumedState, &state); err != nil {
		return state, false, fmt.Errorf("adk: the saved state of tool call %s: %w", c.id(), err)
	}
	return state, true, nil
}

// WasInterrupted reports whether the tool call ctx belongs to is running
// again after it interrupted.
func WasInterrupted(ctx context.Context) bool {
	c, ok := ctx.Value(toolCallKey{}).(*toolCall)
	return ok && c.resumed
}

// GetResumeData returns the input the resume aimed at the tool call ctx
// belongs to (see ResumeWith); ok is false when there is none or it is not
// a T.
func GetResumeData[T any](ctx context.Context) (data T, ok bool) {
	c, inCall := ctx.Value(toolCallKey{}).(*toolCall)
	st := stateOf(ctx)
	if !inCall || st == nil || st.resume == nil {
		return data, false
	}
	v, found := st.resume[c.id()]
	if !found {
		return data, false
	}
	return convert[T](v)
}

// convert returns v as a T: as it is, or, for a value that came as JSON
// (across a process boundary), decoded into T.
func convert[T any](v any) (T, bool) {
	if t, ok := v.(T); ok {
		return t, true
	}
	var t T
	raw, err := json.Marshal(v)
	if err != nil {
		return t, false
	}
	return t, json.Unmarshal(raw, &t) == nil
}

// ResumeWith aims input at the interrupted point id (InterruptPoint.ID) of
// the run Runner.Resume continues.
func ResumeWith(id string, input any) AgentRunOption {
	return AgentRunOption{common: func(o *runOptions) {
		if o.resume == nil {
			o.resume = map[string]any{}
		}
		o.resume[id] = input
	}}
}

// WithCheckPointID names the checkpoint the Runner keeps if the run
// interrupts; Runner.Resume takes the same id.
func WithCheckPointID(id string) AgentRunOption {
	return AgentRunOption{common: func(o *runOptions) { o.checkPointID = id }}
}

// NewInterruptEvent returns the event with which an agent that is not one
// of this package's interrupts: info is what to show, state
// (JSON-encodable) is what the agent needs to continue and comes back in
// ResumeInfo.State. The agent ends its run after it.
func NewInterruptEvent(info, state any) *AgentEvent {
	return &AgentEvent{Action: &AgentAction{Interrupted: &InterruptInfo{Data: info, state: state}}}
}

// ResumableAgent is an agent that can continue after it interrupted.
type ResumableAgent interface {
	Agent
	// Resume continues the run that ended with the agent's interrupt
	// event.
	Resume(ctx context.Context, info *ResumeInfo, opts ...AgentRunOption) *AsyncIterator[*AgentEvent]
}

// ResumeInfo is what a ResumableAgent resumes with.
type ResumeInfo struct {
	EnableStreaming bool
	// State is the JSON of the state given to NewInterruptEvent.
	State json.RawMessage
	// Data is the input the resume aimed at the agent; nil when none.
	Data any
	// PointID is the agent's InterruptPoint.ID.
	PointID string
	// Inputs are all the inputs of this resume by point id, for agents that
	// pass them on (a remote agent resumes the points of its own run).
	Inputs map[string]any
}

// pendingInterrupt is what a tool call leaves when it interrupts.
type pendingInterrupt struct {
	info  any
	state json.RawMessage
	// points, for an agent used as a tool, are the points inside its run.
	points []*InterruptPoint
}

// pointID names an interrupted point: prefix (for runs inside agent tools),
// the RunPath, and the tool call id when a tool interrupted.
func pointID(prefix string, path []RunStep, callID string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for i, s := range path {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(s.AgentName)
	}
	if callID != "" {
		b.WriteByte('#')
		b.WriteString(callID)
	}
	return b.String()
}

// frame is what an interrupted agent keeps to continue: one node of the
// tree of interrupted agents a checkpoint holds. Exactly one field is set.
type frame struct {
	Flow     *flowFrame     `json:"flow,omitempty"`
	Chat     *chatFrame     `json:"chat,omitempty"`
	Steps    *stepsFrame    `json:"steps,omitempty"`
	Parallel *parallelFrame `json:"parallel,omitempty"`
	Custom   *customFrame   `json:"custom,omitempty"`
}

// flowFrame: the flow's own agent was interrupted (Inner), or the agent it
// transferred to (TransferTo, Target).
type flowFrame struct {
	Inner      *frame `json:"inner,omitempty"`
	TransferTo string `json:"transfer_to,omitempty"`
	Target     *frame `json:"target,omitempty"`
}

// chatFrame: a ChatModelAgent stopped in a turn of tool calls.
type chatFrame struct {
	// Messages is the model's input so far, ending with the assistant
	// message whose tool calls the turn runs.
	Messages  []*schema.Message `json:"messages"`
	Iteration int               `json:"iteration"`
	Calls     []callFrame       `json:"calls"`
}

// callFrame is one tool call of an interrupted turn: finished (Result) or
// interrupted (State).
type callFrame struct {
	Result      *schema.Message `json:"result,omitempty"`
	Action      *AgentAction    `json:"action,omitempty"`
	Interrupted bool            `json:"interrupted,omitempty"`
	State       json.RawMessage `json:"state,omitempty"`
}

// stepsFrame: a Sequential or Loop agent stopped in step Step of pass Pass;
// Mark is where that step's history starts.
type stepsFrame struct {
	Pass  int    `json:"pass"`
	Step  int    `json:"step"`
	Mark  int    `json:"mark"`
	Inner *frame `json:"inner"`
}

// parallelFrame: the branches that stopped (nil for those that finished);
// Mark is where the Parallel agent's history starts.
type parallelFrame struct {
	Mark     int      `json:"mark"`
	Branches []*frame `json:"branches"`
}

// customFrame: an agent that is not one of this package's interrupted with
// NewInterruptEvent.
type customFrame struct {
	State json.RawMessage `json:"state,omitempty"`
}
