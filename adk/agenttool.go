package adk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// NewAgentTool makes agent a tool another agent's model can call. A call
// runs agent on the request alone, in a run of its own that shares the
// caller's session values, and returns its final message; a run that
// fails returns the failure to the model.
//
// The tool is named after the agent. Its description is the agent's; when
// the agent declares skills (SkillsOf), the description is on one line and
// the skills follow on lines of their own, as a transfer instruction lists
// them under an agent (TransferTargetsHeader), so that a model chooses
// the tool by what the agent declares, as it chooses whom to transfer to.
func NewAgentTool(ctx context.Context, agent Agent) tool.Tool {
	fa := toFlowAgent(ctx, agent)
	desc := fa.desc
	if skills := SkillsOf(ctx, fa); len(skills) > 0 {
		var b strings.Builder
		b.WriteString(oneLine(desc))
		writeSkills(&b, skills)
		desc = b.String()
	}
	return &agentTool{agent: fa, info: &schema.ToolInfo{
		Name: fa.name,
		Desc: desc,
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"request": {Type: "string", Description: "what to ask " + fa.name},
		}),
	}}
}

type agentTool struct {
	agent *flowAgent
	info  *schema.ToolInfo
}

func (t *agentTool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// agentToolState is what an agent tool keeps when the agent it runs is
// interrupted: that run's history and frame (its values are the caller's).
type agentToolState struct {
	Session sessionRecord `json:"session"`
	Frame   *frame        `json:"frame"`
}

func (t *agentTool) Run(ctx context.Context, arguments string) (string, error) {
	c, inCall := ctx.Value(toolCallKey{}).(*toolCall)
	outer := stateOf(ctx)
	var vals *values
	inner := &runState{}
	if outer != nil {
		vals = outer.session.values
		inner.resume = outer.resume
	}
	if inCall {
		inner.prefix = c.id() + ">"
	}

	var answer *MessageVariant
	var failure error
	var points []*InterruptPoint
	collect := func(ev *AgentEvent) {
		switch {
		case ev.Err != nil:
			failure = ev.Err
		case ev.Action != nil && ev.Action.Interrupted != nil:
			points = append(points, ev.Action.Interrupted.Points...)
		case ev.Output != nil && ev.Output.MessageOutput != nil:
			answer = ev.Output.MessageOutput
		}
	}

	var f *frame
	if saved, ok, err := GetInterruptState[agentToolState](ctx); err != nil {
		return "", err
	} else if ok {
		if err := validate(&saved.Session, saved.Frame); err != nil {
			return "", err
		}
		s, err := restoreSession(&saved.Session, nil, vals)
		if err != nil {
			return "", err
		}
		inner.session = s
		f = t.agent.resumeInline(withState(ctx, inner), saved.Frame, nil, collect)
	} else {
		var args struct {
			Request string `json:"request"`
		}
		if err := json.Unmarshal([]byte(arguments), &args); err != nil {
			return "", fmt.Errorf("%s needs {\"request\": \"...\"}: %w", t.info.Name, err)
		}
		in := &AgentInput{Messages: []*schema.Message{schema.UserMessage(args.Request)}}
		inner.session = newSession(vals, in)
		f = t.agent.runInline(withState(ctx, inner), in, nil, collect)
	}

	if f != nil {
		if !inCall {
			return "", fmt.Errorf("agent %s was interrupted outside a ChatModelAgent's tool call", t.info.Name)
		}
		rec, err := inner.session.snapshot(nil) // the caller's checkpoint has the values
		if err != nil {
			return "", err
		}
		raw, err := json.Marshal(&agentToolState{Session: rec, Frame: f})
		if err != nil {
			return "", err
		}
		info := any(nil)
		if len(points) > 0 {
			info = points[0].Info
		}
		c.interrupt = &pendingInterrupt{info: info, state: raw, points: points}
		return "", ErrInterrupted
	}
	if failure != nil {
		return "", failure
	}
	if answer == nil {
		return "", fmt.Errorf("agent %s gave no answer", t.info.Name)
	}
	msg, err := answer.GetMessage()
	if err != nil {
		return "", fmt.Errorf("agent %s: %w", t.info.Name, err)
	}
	return msg.Text(), nil
}
