package adk

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/a2amesh/a2amesh/adk/schema"
)

// TransferToAgentToolName is the name of the tool a ChatModelAgent's model
// calls to hand the conversation to another agent.
const TransferToAgentToolName = "transfer_to_agent"

// TransferTargetsHeader opens the list of agents in a transfer instruction.
// Each agent follows on a line of its own, then each of its skills
// (SkillsOf) on indented lines under it:
//
//	Agents you can transfer to:
//	- AgentName: the agent's description
//	  Skill "Skill name": the skill's description
//	    Tags: tag, another tag
//	    Examples: "an example request", "another"
//
// The skill's name (its ID when it has no name) and its examples are
// quoted as Go string literals (strconv.Quote); the Tags and Examples
// lines are left out when empty, the ": description" too; every other
// text has its white space collapsed onto the one line. A line that starts
// with "- " is an agent; a skill's lines belong to the agent above them.
const TransferTargetsHeader = "Agents you can transfer to:"

// The prefixes of a skill's lines in a transfer instruction.
const (
	skillPrefix    = "  Skill "
	tagsPrefix     = "    Tags: "
	examplesPrefix = "    Examples: "
)

// transferInstruction tells a model when and how to transfer, and to whom.
func transferInstruction(targets []CallerAgent) string {
	var b strings.Builder
	b.WriteString("You work in a team of agents. Answer the request yourself when it fits what you do. " +
		"When another agent's description or skills fit it better, call " + TransferToAgentToolName +
		" with that agent's name, and write nothing else.\n")
	b.WriteString(TransferTargetsHeader)
	for _, t := range targets {
		fmt.Fprintf(&b, "\n- %s: %s", t.Name, oneLine(t.Description))
		writeSkills(&b, t.Skills)
	}
	return b.String()
}

// writeSkills writes the lines of skills, each on a line of its own after
// a line break, as TransferTargetsHeader documents them under an agent.
func writeSkills(b *strings.Builder, skills []Skill) {
	for _, s := range skills {
		name := s.Name
		if name == "" {
			name = s.ID
		}
		b.WriteString("\n" + skillPrefix + strconv.Quote(oneLine(name)))
		if d := oneLine(s.Description); d != "" {
			b.WriteString(": " + d)
		}
		var tags []string
		for _, tag := range s.Tags {
			if tag = oneLine(tag); tag != "" {
				tags = append(tags, tag)
			}
		}
		if len(tags) > 0 {
			b.WriteString("\n" + tagsPrefix + strings.Join(tags, ", "))
		}
		if len(s.Examples) > 0 {
			quoted := make([]string, len(s.Examples))
			for i, e := range s.Examples {
				quoted[i] = strconv.Quote(e)
			}
			b.WriteString("\n" + examplesPrefix + strings.Join(quoted, ", "))
		}
	}
}

// oneLine collapses the white space of s, line breaks included, into
// single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// transferTool is the transfer_to_agent tool. It names the agents it can
// reach in its schema; the flow checks the name, so a model that picks
// another gets an error event naming both agents.
type transferTool struct{ targets []string }

func (t transferTool) Info(context.Context) (*schema.ToolInfo, error) {
	enum := make([]any, len(t.targets))
	for i, n := range t.targets {
		enum[i] = n
	}
	return &schema.ToolInfo{
		Name: TransferToAgentToolName,
		Desc: "Hand the conversation over to another agent, which answers from here on.",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"agent_name": {Type: "string", Description: "the name of the agent to transfer to", Enum: enum},
		}),
	}, nil
}

func (t transferTool) Run(ctx context.Context, arguments string) (string, error) {
	var args struct {
		AgentName string `json:"agent_name"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil || args.AgentName == "" {
		return "", fmt.Errorf("%s needs {\"agent_name\": \"<one of %s>\"}", TransferToAgentToolName, strings.Join(t.targets, ", "))
	}
	if err := SendToolGenAction(ctx, NewTransferToAgentAction(args.AgentName)); err != nil {
		return "", err
	}
	return TransferResult(args.AgentName), nil
}

// TransferResult is the tool result of a transfer to agent: "successfully
// transferred to agent [agent]".
func TransferResult(agent string) string {
	return "successfully transferred to agent [" + agent + "]"
}

// transferMessages returns the assistant message that calls
// transfer_to_agent for to and the tool's result, as a model and the tool
// would produce them.
func transferMessages(to string) (call, result *schema.Message) {
	id := "transfer_" + uuid.NewString()
	args, _ := json.Marshal(map[string]string{"agent_name": to}) // a map of strings always encodes
	call = schema.AssistantMessage("", []schema.ToolCall{{ID: id, Type: "function",
		Function: schema.FunctionCall{Name: TransferToAgentToolName, Arguments: string(args)}}})
	return call, schema.ToolMessage(TransferResult(to), id, TransferToAgentToolName)
}

// DeterministicTransferConfig configures AgentWithDeterministicTransferTo.
type DeterministicTransferConfig struct {
	Agent Agent
	// ToAgentNames are the agents to transfer to, in order; the last one
	// runs. Each must be reachable from Agent (a sub-agent or its parent).
	ToAgentNames []string
}

// AgentWithDeterministicTransferTo returns cfg.Agent made to transfer to
// cfg.ToAgentNames whenever it ends on its own (not failing, exiting,
// interrupting or transferring itself): for each name it emits the
// assistant message that calls transfer_to_agent and the result
// "successfully transferred to agent [name]" with the transfer action, as
// if its model had asked for it. It holds for resumed runs too. When
// cfg.Agent came from SetSubAgents, AgentWithConfig or a workflow
// constructor, the transfer is set on it in place.
func AgentWithDeterministicTransferTo(ctx context.Context, cfg *DeterministicTransferConfig) Agent {
	fa := toFlowAgent(ctx, cfg.Agent)
	fa.transferTo = append([]string(nil), cfg.ToAgentNames...)
	return fa
}

// ExitToolName is the name of ExitTool.
const ExitToolName = "exit"

// ExitTool is a tool that ends a ChatModelAgent's run with an Exit action;
// its final_result argument is the agent's answer. Give it as
// ChatModelAgentConfig.Exit; in a Loop agent it ends the loop.
type ExitTool struct{}

func (ExitTool) Info(context.Context) (*schema.ToolInfo, error) {
	return &schema.ToolInfo{
		Name: ExitToolName,
		Desc: "Finish: end the work and give the final result.",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"final_result": {Type: "string", Description: "the final result"},
		}),
	}, nil
}

func (ExitTool) Run(ctx context.Context, arguments string) (string, error) {
	var args struct {
		FinalResult string `json:"final_result"`
	}
	if err := json.Unmarshal([]byte(arguments), &args); err != nil {
		return "", fmt.Errorf("%s needs {\"final_result\": \"...\"}: %w", ExitToolName, err)
	}
	if err := SendToolGenAction(ctx, NewExitAction()); err != nil {
		return "", err
	}
	return args.FinalResult, nil
}
