package adk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// NewAgentTool makes agent a tool another agent's model can call. A call
// runs agent on the request alone, in a run of its own that shares the
// caller's session values, and returns its final message; a run that
// fails returns the failure to the model.
func NewAgentTool(ctx context.Context, agent Agent) tool.Tool {
	fa := toFlowAgent(ctx, agent)
	return &agentTool{agent: fa, info: &schema.ToolInfo{
		Name: fa.name,
		Desc: fa.desc,
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

func (t *agentTool) Run(ctx context.Context, arguments string) (string, error) {
	var args struct {
		Request string `json:"request"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "", fmt.Errorf("%s needs {\"request\": \"...\"}: %w", t.info.Name, err)
	}
	var vals *values
	if st := stateOf(ctx); st != nil {
		vals = st.session.values
	}
	in := &AgentInput{Messages: []*schema.Message{schema.UserMessage(args.Request)}}
	ctx = withState(ctx, &runState{session: newSession(vals, in)})

	var answer *MessageVariant
	var failure error
	t.agent.runInline(ctx, in, nil, func(ev *AgentEvent) {
		switch {
		case ev.Err != nil:
			failure = ev.Err
		case ev.Output != nil && ev.Output.MessageOutput != nil:
			answer = ev.Output.MessageOutput
		}
	})
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
