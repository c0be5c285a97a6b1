// Package planexecute is the plan-execute-replan pattern: a planner turns
// the request into a plan (steps), an executor carries out the first open
// step with its tools, and a replanner records the result and either
// revises the steps that remain or answers. The plan and the executed
// steps live in session values (PlanKey, ExecutedStepsKey), so tools and
// instructions can read them. It is built from a Sequential agent (the
// planner, then the loop) and a Loop agent (executor, replanner).
package planexecute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// Session value keys.
const (
	// PlanKey holds the Plan: the steps still to do, the next one first.
	PlanKey = "plan"
	// ExecutedStepsKey holds the []ExecutedStep done so far, in order.
	ExecutedStepsKey = "executed_steps"
	// ExecutedStepKey holds the executor's answer for the step it just did.
	ExecutedStepKey = "executed_step"
)

// Plan is the steps still to do.
type Plan struct {
	Steps []string `json:"steps"`
}

// ExecutedStep is a step done and what came of it.
type ExecutedStep struct {
	Step   string `json:"step"`
	Result string `json:"result"`
}

// The tools the planner's and the replanner's models call.
const (
	PlanToolName    = "plan"
	RespondToolName = "respond"
)

var (
	planTool = &schema.ToolInfo{
		Name: PlanToolName,
		Desc: "Give the plan: the steps that remain to reach the objective, in order, each one task.",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"steps": {Type: "array", Description: "the steps, in order", Items: &schema.JSONSchema{Type: "string"}},
		}),
	}
	respondTool = &schema.ToolInfo{
		Name: RespondToolName,
		Desc: "Respond to the user with the final answer once the objective is reached.",
		Params: schema.ObjectSchema(map[string]*schema.JSONSchema{
			"response": {Type: "string", Description: "the final answer to the objective, built from the results of the steps"},
		}),
	}
)

// Config configures a plan-execute-replan agent.
type Config struct {
	// Name and Description of the whole; "PlanExecute" by default.
	Name, Description string
	Planner           adk.Agent
	Executor          adk.Agent
	Replanner         adk.Agent
	// MaxIterations caps the executor+replanner rounds; 0 means 10.
	MaxIterations int
}

// New returns Sequential(Planner, Loop(Executor, Replanner)).
func New(ctx context.Context, cfg *Config) (adk.Agent, error) {
	if cfg == nil || cfg.Planner == nil || cfg.Executor == nil || cfg.Replanner == nil {
		return nil, errors.New("planexecute: the config needs a Planner, an Executor and a Replanner")
	}
	name := cfg.Name
	if name == "" {
		name = "PlanExecute"
	}
	iterations := cfg.MaxIterations
	if iterations == 0 {
		iterations = 10
	}
	// Whatever the executor is (a ChatModelAgent here, an agent in another
	// process), it is asked for the next step and its answer is recorded.
	executor, err := adk.AgentWithConfig(ctx, cfg.Executor, adk.AgentConfig{HistoryRewriter: stepInput, OutputKey: ExecutedStepKey})
	if err != nil {
		return nil, err
	}
	loop, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{
		Name: "ExecuteReplan", Description: "executes the plan step by step, revising it after each step",
		SubAgents: []adk.Agent{executor, cfg.Replanner}, MaxIterations: iterations,
	})
	if err != nil {
		return nil, err
	}
	desc := cfg.Description
	if desc == "" {
		desc = "plans the steps to the objective, carries them out one by one and revises the plan as it goes"
	}
	return adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: name, Description: desc, SubAgents: []adk.Agent{cfg.Planner, loop}})
}

// PlannerConfig configures the planner.
type PlannerConfig struct {
	// Name is "Planner" by default.
	Name  string
	Model model.ChatModel
	// Instruction replaces the default system message.
	Instruction string
}

const plannerInstruction = "You plan. Break the objective into the smallest list of concrete steps that reach it, " +
	"each one task a single agent with tools can do, and give them with the plan tool."

// NewPlanner returns an agent that asks its model for a plan through the
// plan tool and stores it under PlanKey.
func NewPlanner(_ context.Context, cfg *PlannerConfig) (adk.Agent, error) {
	if cfg == nil || cfg.Model == nil {
		return nil, errors.New("planexecute: the planner needs a model")
	}
	m, err := cfg.Model.WithTools([]*schema.ToolInfo{planTool})
	if err != nil {
		return nil, fmt.Errorf("planexecute: planner: %w", err)
	}
	return &planner{name: or(cfg.Name, "Planner"), instruction: or(cfg.Instruction, plannerInstruction), model: m}, nil
}

type planner struct {
	name, instruction string
	model             model.ChatModel
}

func (p *planner) Name(context.Context) string { return p.name }
func (p *planner) Description(context.Context) string {
	return "breaks the objective into steps"
}

func (p *planner) Run(ctx context.Context, input *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	return respond(func() (*adk.AgentEvent, error) {
		msgs := []*schema.Message{schema.SystemMessage(p.instruction), schema.UserMessage("Make a plan for: " + objective(ctx, input))}
		msg, err := p.model.Generate(ctx, msgs)
		if err != nil {
			return nil, fmt.Errorf("planner %s: %w", p.name, err)
		}
		plan, ok, err := planFrom(msg)
		if err != nil {
			return nil, fmt.Errorf("planner %s: %w", p.name, err)
		}
		if !ok || len(plan.Steps) == 0 {
			return nil, fmt.Errorf("planner %s: the model gave no plan (it must call %s)", p.name, PlanToolName)
		}
		adk.AddSessionValues(ctx, map[string]any{PlanKey: plan, ExecutedStepsKey: []ExecutedStep{}})
		return message("Plan:\n"+numbered(plan.Steps), nil), nil
	})
}

// ExecutorConfig configures the executor.
type ExecutorConfig struct {
	// Name is "Executor" by default.
	Name          string
	Model         model.ChatModel
	ToolsConfig   adk.ToolsConfig
	Instruction   string
	MaxIterations int
}

const executorInstruction = "You carry out one step of a plan with your tools and report what came of it."

// NewExecutor returns a ChatModelAgent with tools for the executor's
// place. Any agent can be the executor: New gives it, as its input, the
// objective, the plan and the steps done, and asks for the next step; its
// answer becomes the step's result. Its tools may interrupt; the run
// resumes in the step.
func NewExecutor(ctx context.Context, cfg *ExecutorConfig) (adk.Agent, error) {
	if cfg == nil || cfg.Model == nil {
		return nil, errors.New("planexecute: the executor needs a model")
	}
	return adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: or(cfg.Name, "Executor"), Description: "carries out the next step of the plan",
		Instruction: or(cfg.Instruction, executorInstruction), Model: cfg.Model, ToolsConfig: cfg.ToolsConfig,
		MaxIterations: cfg.MaxIterations,
	})
}

// stepInput is the executor's input: where the plan stands, then the step
// to do now as a message of its own, so that the step is the request the
// executor's model reads and hands on (to an agent it calls as a tool, a
// plain A2A agent in the executor's place), with no words about the plan
// around it.
func stepInput(ctx context.Context, _ []*adk.HistoryEntry) ([]*schema.Message, error) {
	plan, _ := adk.SessionValue[Plan](ctx, PlanKey)
	if len(plan.Steps) == 0 {
		return nil, errors.New("there is no plan step to carry out")
	}
	done, _ := adk.SessionValue[[]ExecutedStep](ctx, ExecutedStepsKey)
	return []*schema.Message{
		schema.UserMessage(situation(objective(ctx, nil), plan, done) + "\n\nCarry out the next step now; the next message is that step."),
		schema.UserMessage(plan.Steps[0]),
	}, nil
}

// ReplannerConfig configures the replanner.
type ReplannerConfig struct {
	// Name is "Replanner" by default.
	Name        string
	Model       model.ChatModel
	Instruction string
}

const replannerInstruction = "You review a plan as it is carried out. When the objective is reached, respond with the " +
	"final answer; otherwise give the steps that remain with the plan tool, changed as the results so far require."

// NewReplanner returns an agent that records the step the executor did,
// then asks its model either to revise the steps that remain (the plan
// tool) or to answer (the respond tool), which ends the loop. With no step
// left it may only answer.
func NewReplanner(_ context.Context, cfg *ReplannerConfig) (adk.Agent, error) {
	if cfg == nil || cfg.Model == nil {
		return nil, errors.New("planexecute: the replanner needs a model")
	}
	both, err := cfg.Model.WithTools([]*schema.ToolInfo{planTool, respondTool})
	if err != nil {
		return nil, fmt.Errorf("planexecute: replanner: %w", err)
	}
	only, err := cfg.Model.WithTools([]*schema.ToolInfo{respondTool})
	if err != nil {
		return nil, fmt.Errorf("planexecute: replanner: %w", err)
	}
	return &replanner{name: or(cfg.Name, "Replanner"), instruction: or(cfg.Instruction, replannerInstruction), both: both, only: only}, nil
}

type replanner struct {
	name, instruction string
	both, only        model.ChatModel
}

func (r *replanner) Name(context.Context) string { return r.name }
func (r *replanner) Description(context.Context) string {
	return "records each step's result and revises the plan or answers"
}

func (r *replanner) Run(ctx context.Context, input *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	return respond(func() (*adk.AgentEvent, error) {
		plan, _ := adk.SessionValue[Plan](ctx, PlanKey)
		if len(plan.Steps) == 0 {
			return nil, fmt.Errorf("replanner %s: there is no plan step to record", r.name)
		}
		done, _ := adk.SessionValue[[]ExecutedStep](ctx, ExecutedStepsKey)
		result, _ := adk.SessionValue[string](ctx, ExecutedStepKey)
		done = append(done[:len(done):len(done)], ExecutedStep{Step: plan.Steps[0], Result: result})
		remaining := Plan{Steps: plan.Steps[1:]}
		adk.AddSessionValues(ctx, map[string]any{ExecutedStepsKey: done, PlanKey: remaining})

		m, ask := r.both, "Revise the plan if the results require it. These steps remain:\n"+bullets(remaining.Steps)+
			"\nCall "+PlanToolName+" with the steps that remain, or "+RespondToolName+" if the objective is reached."
		if len(remaining.Steps) == 0 {
			m, ask = r.only, "Every step is done. Respond with the final answer to the objective, built from the results of the steps:\n"+results(done)
		}
		msgs := []*schema.Message{
			schema.SystemMessage(r.instruction),
			schema.UserMessage(situation(objective(ctx, input), Plan{Steps: append([]string{plan.Steps[0]}, remaining.Steps...)}, done)),
			schema.UserMessage(ask),
		}
		msg, err := m.Generate(ctx, msgs)
		if err != nil {
			return nil, fmt.Errorf("replanner %s: %w", r.name, err)
		}
		revised, ok, err := planFrom(msg)
		if err != nil {
			return nil, fmt.Errorf("replanner %s: %w", r.name, err)
		}
		if ok && len(revised.Steps) > 0 {
			adk.AddSessionValue(ctx, PlanKey, revised)
			return message("Revised plan:\n"+numbered(revised.Steps), nil), nil
		}
		answer, err := responseFrom(msg)
		if err != nil {
			return nil, fmt.Errorf("replanner %s: %w", r.name, err)
		}
		if answer == "" {
			answer = results(done)
		}
		return message(answer, adk.NewBreakLoopAction(r.name)), nil
	})
}

// respond runs fn on a goroutine and returns its event, or its error as an
// event.
func respond(fn func() (*adk.AgentEvent, error)) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	go func() {
		defer gen.Close()
		ev, err := fn()
		if err != nil {
			ev = adk.ErrorEvent(err)
		}
		gen.Send(ev)
	}()
	return it
}

func message(text string, action *adk.AgentAction) *adk.AgentEvent {
	ev := adk.EventFromMessage(schema.AssistantMessage(text, nil), nil, schema.Assistant, "")
	ev.Action = action
	return ev
}

// planFrom reads a plan tool call; ok is false when msg has none.
func planFrom(msg *schema.Message) (plan Plan, ok bool, err error) {
	for _, tc := range msg.ToolCalls {
		if tc.Function.Name == PlanToolName {
			if err := json.Unmarshal([]byte(tc.Function.Arguments), &plan); err != nil {
				return plan, false, fmt.Errorf("the plan's arguments: %w", err)
			}
			return plan, true, nil
		}
	}
	return plan, false, nil
}

// responseFrom reads a respond tool call, or else takes the message's text.
func responseFrom(msg *schema.Message) (string, error) {
	for _, tc := range msg.ToolCalls {
		if tc.Function.Name == RespondToolName {
			var args struct {
				Response string `json:"response"`
			}
			if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
				return "", fmt.Errorf("the response's arguments: %w", err)
			}
			return args.Response, nil
		}
	}
	return msg.Text(), nil
}

// objective is what the person asked: the request of the run's input
// (adk.UserRequest), not the context that follows it when the agent was
// reached by a transfer, nor earlier turns; the agent's own input outside
// a run.
func objective(ctx context.Context, input *adk.AgentInput) string {
	msgs := adk.RunInput(ctx)
	if msgs == nil && input != nil {
		msgs = input.Messages
	}
	if m := adk.UserRequest(msgs); m != nil {
		return m.Text()
	}
	return ""
}

func situation(objective string, plan Plan, done []ExecutedStep) string {
	s := "Objective: " + objective + "\nPlan:\n" + numbered(plan.Steps)
	if len(done) > 0 {
		s += "\nDone so far:\n" + results(done)
	}
	return s
}

func numbered(steps []string) string {
	var b strings.Builder
	for i, s := range steps {
		fmt.Fprintf(&b, "%d. %s\n", i+1, s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func bullets(steps []string) string {
	var b strings.Builder
	for _, s := range steps {
		b.WriteString("- " + s + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// results lists the steps done and their results, a result of several
// lines indented under its step so that the list stays one item a step.
func results(done []ExecutedStep) string {
	var b strings.Builder
	for _, d := range done {
		lines := strings.Split(strings.TrimSpace(d.Result), "\n")
		b.WriteString("- " + d.Step + ": " + lines[0] + "\n")
		for _, l := range lines[1:] {
			if strings.TrimSpace(l) != "" {
				l = "  " + l
			}
			b.WriteString(l + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func or(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
