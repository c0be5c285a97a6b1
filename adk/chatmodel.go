package adk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/adk/tool"
)

// ErrMaxIterations is what a ChatModelAgent fails with when its model has
// not given a final answer after MaxIterations calls.
var ErrMaxIterations = errors.New("adk: too many model calls without a final answer")

// DefaultMaxIterations is how many times a ChatModelAgent calls its model in
// one run when its config does not say.
const DefaultMaxIterations = 20

// GenModelInput makes a model's input from the agent's instruction (with
// its placeholders filled) and its input.
type GenModelInput func(ctx context.Context, instruction string, input *AgentInput) ([]*schema.Message, error)

// ToolsConfig lists the tools a ChatModelAgent's model may call.
type ToolsConfig struct {
	Tools []tool.Tool
	// ReturnDirectly names tools whose result ends the agent's run and is
	// its answer.
	ReturnDirectly map[string]bool
}

// ChatModelAgentConfig configures a ChatModelAgent.
type ChatModelAgentConfig struct {
	Name        string
	Description string
	// Instruction is the system message. {key} is replaced by the session
	// value key ({{ and }} stand for braces); a placeholder without a value
	// fails the run.
	Instruction string
	Model       model.ChatModel
	ToolsConfig ToolsConfig
	// GenModelInput replaces the default input: the instruction as a
	// system message, then the agent's input.
	GenModelInput GenModelInput
	// Exit, when set, is a tool that ends the run with its result, as an
	// Exit action (see ExitTool).
	Exit tool.Tool
	// OutputKey, when set, names the session value the final answer is
	// stored in.
	OutputKey string
	// MaxIterations caps the model calls of one run; 0 means
	// DefaultMaxIterations.
	MaxIterations int
}

// ChatModelAgent is a ReAct agent: it calls its model, runs the tools the
// model asks for, gives it their results, and repeats until the model
// answers without calling a tool. Each model message and each tool result
// is an event. With sub-agents or a parent it can transfer to, it gets a
// transfer_to_agent tool and an instruction that lists where it can
// transfer.
type ChatModelAgent struct {
	cfg ChatModelAgentConfig

	mu             sync.Mutex // guards the tree fields until the first run
	subAgents      []Agent
	parent         Agent
	disallowParent bool
	frozen         bool

	prep    sync.Once
	ready   *preparedAgent
	prepErr error
	targets []CallerAgent // its transfer targets in its tree
}

// preparedAgent is what the first run works out from the config and the
// agent's place in its tree.
type preparedAgent struct {
	model          model.ChatModel
	tools          *tool.Node // nil without tools
	returnDirectly map[string]bool
	transfer       string // the transfer instruction, if the agent can transfer
}

// NewChatModelAgent returns an agent for cfg.
func NewChatModelAgent(_ context.Context, cfg *ChatModelAgentConfig) (*ChatModelAgent, error) {
	switch {
	case cfg == nil:
		return nil, errors.New("adk: ChatModelAgent needs a config")
	case cfg.Name == "":
		return nil, errors.New("adk: ChatModelAgent needs a name")
	case cfg.Model == nil:
		return nil, fmt.Errorf("adk: ChatModelAgent %s needs a model", cfg.Name)
	case cfg.MaxIterations < 0:
		return nil, fmt.Errorf("adk: ChatModelAgent %s: MaxIterations is negative", cfg.Name)
	}
	return &ChatModelAgent{cfg: *cfg}, nil
}

func (a *ChatModelAgent) Name(context.Context) string        { return a.cfg.Name }
func (a *ChatModelAgent) Description(context.Context) string { return a.cfg.Description }

// OnSetSubAgents records the agents a can transfer to.
func (a *ChatModelAgent) OnSetSubAgents(_ context.Context, subAgents []Agent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.frozen {
		return errors.New("the agent has run; set its sub-agents before its first run")
	}
	if len(a.subAgents) > 0 {
		return errors.New("the sub-agents are already set")
	}
	a.subAgents = subAgents
	return nil
}

// OnSetAsSubAgent records the agent a can transfer back to.
func (a *ChatModelAgent) OnSetAsSubAgent(_ context.Context, parent Agent) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.frozen {
		return errors.New("the agent has run; make it a sub-agent before its first run")
	}
	if a.parent != nil {
		return fmt.Errorf("it is already a sub-agent of %s", a.parent.Name(context.Background()))
	}
	a.parent = parent
	return nil
}

// OnDisallowTransferToParent keeps a from offering its parent as a
// transfer target.
func (a *ChatModelAgent) OnDisallowTransferToParent(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.frozen {
		return errors.New("the agent has run; disallow transfer to its parent before its first run")
	}
	a.disallowParent = true
	return nil
}

// prepare works out, on the first run, the agent's tools and transfer
// targets from its config and its place in its tree.
func (a *ChatModelAgent) prepare(ctx context.Context) (*preparedAgent, error) {
	a.prep.Do(func() {
		a.mu.Lock()
		a.frozen = true
		var targets []CallerAgent
		for _, t := range a.subAgents {
			targets = append(targets, CallerAgent{Name: t.Name(ctx), Description: t.Description(ctx), Skills: SkillsOf(ctx, t)})
		}
		if a.parent != nil && !a.disallowParent {
			targets = append(targets, CallerAgent{Name: a.parent.Name(ctx), Description: a.parent.Description(ctx),
				Skills: SkillsOf(ctx, a.parent)})
		}
		a.mu.Unlock()
		a.ready, a.prepErr = a.build(ctx, targets)
		a.targets = targets
	})
	return a.ready, a.prepErr
}

// forRun returns what the agent works with in the run ctx belongs to: as
// prepared, or, as the root of a run with caller agents, with those added
// to its transfer targets.
func (a *ChatModelAgent) forRun(ctx context.Context) (*preparedAgent, error) {
	p, err := a.prepare(ctx)
	if err != nil {
		return nil, err
	}
	st := stateOf(ctx)
	if st == nil || len(st.callers) == 0 {
		return p, nil
	}
	return a.build(ctx, append(a.targets[:len(a.targets):len(a.targets)], st.callers...))
}

func (a *ChatModelAgent) build(ctx context.Context, targets []CallerAgent) (*preparedAgent, error) {
	p := &preparedAgent{model: a.cfg.Model, returnDirectly: map[string]bool{}}
	tools := a.cfg.ToolsConfig.Tools
	for name, direct := range a.cfg.ToolsConfig.ReturnDirectly {
		p.returnDirectly[name] = direct
	}
	if a.cfg.Exit != nil {
		tools = append(tools[:len(tools):len(tools)], a.cfg.Exit)
		info, err := a.cfg.Exit.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("adk: agent %s: exit tool: %w", a.cfg.Name, err)
		}
		p.returnDirectly[info.Name] = true
	}
	if len(targets) > 0 {
		names := make([]string, len(targets))
		for i, t := range targets {
			names[i] = t.Name
		}
		tools = append(tools[:len(tools):len(tools)], transferTool{targets: names})
		p.transfer = transferInstruction(targets)
	}
	if len(tools) > 0 {
		node, err := tool.NewNode(ctx, tools)
		if err != nil {
			return nil, fmt.Errorf("adk: agent %s: %w", a.cfg.Name, err)
		}
		m, err := a.cfg.Model.WithTools(node.Infos())
		if err != nil {
			return nil, fmt.Errorf("adk: agent %s: bind tools: %w", a.cfg.Name, err)
		}
		p.tools, p.model = node, m
	}
	return p, nil
}

// chatModelOptions are the run options a ChatModelAgent reads.
type chatModelOptions struct {
	modelOptions []model.Option
}

// WithChatModelOptions passes options to the model calls of ChatModelAgents.
func WithChatModelOptions(opts ...model.Option) AgentRunOption {
	return WrapImplSpecificOptFn(func(o *chatModelOptions) { o.modelOptions = append(o.modelOptions, opts...) })
}

// Run runs the agent on its own, outside any agent tree.
func (a *ChatModelAgent) Run(ctx context.Context, input *AgentInput, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	return spawn(a.cfg.Name, func(emit emitFunc) { a.runInline(ctx, input, opts, emit) })
}

// runInline runs the agent; it returns its frame when a tool call
// interrupted.
func (a *ChatModelAgent) runInline(ctx context.Context, input *AgentInput, opts []AgentRunOption, emit emitFunc) *frame {
	p, err := a.forRun(ctx)
	if err != nil {
		a.fail(emit, err)
		return nil
	}
	if input == nil {
		input = &AgentInput{}
	}
	instruction, err := fillInstruction(ctx, a.cfg.Instruction)
	if err != nil {
		a.fail(emit, fmt.Errorf("adk: instruction of %s: %w", a.cfg.Name, err))
		return nil
	}
	if p.transfer != "" {
		if instruction != "" {
			instruction += "\n\n"
		}
		instruction += p.transfer
	}
	var msgs []*schema.Message
	if a.cfg.GenModelInput != nil {
		if msgs, err = a.cfg.GenModelInput(ctx, instruction, input); err != nil {
			a.fail(emit, fmt.Errorf("adk: model input of %s: %w", a.cfg.Name, err))
			return nil
		}
	} else {
		msgs = make([]*schema.Message, 0, len(input.Messages)+5)
		if instruction != "" {
			msgs = append(msgs, schema.SystemMessage(instruction))
		}
		msgs = append(msgs, input.Messages...)
	}
	r := &react{a: a, p: p, o: GetImplSpecificOptions[chatModelOptions](nil, opts...), streaming: input.EnableStreaming, emit: emit}
	return r.loop(ctx, msgs, 0, nil)
}

// resumeInline continues the turn of tool calls that was interrupted.
func (a *ChatModelAgent) resumeInline(ctx context.Context, f *frame, opts []AgentRunOption, emit emitFunc) *frame {
	p, err := a.forRun(ctx)
	if err != nil {
		a.fail(emit, err)
		return nil
	}
	cf := f.Chat
	if cf == nil || len(cf.Messages) == 0 || len(cf.Calls) != len(cf.Messages[len(cf.Messages)-1].ToolCalls) {
		a.fail(emit, fmt.Errorf("%w: agent %s has no turn to resume", ErrBadCheckPoint, a.cfg.Name))
		return nil
	}
	streaming := false
	if st := stateOf(ctx); st != nil {
		streaming = st.session.streaming
	}
	r := &react{a: a, p: p, o: GetImplSpecificOptions[chatModelOptions](nil, opts...), streaming: streaming, emit: emit}
	return r.loop(ctx, cf.Messages, cf.Iteration, cf.Calls)
}

func (a *ChatModelAgent) fail(emit emitFunc, err error) {
	emit(&AgentEvent{AgentName: a.cfg.Name, Err: err})
}

// react is one run of a ChatModelAgent's loop.
type react struct {
	a         *ChatModelAgent
	p         *preparedAgent
	o         *chatModelOptions
	streaming bool
	emit      emitFunc
}

// loop calls the model and runs the tools it asks for until it answers.
// With pending set, it first finishes the turn of tool calls that msgs ends
// with.
func (r *react) loop(ctx context.Context, msgs []*schema.Message, iter int, pending []callFrame) *frame {
	a := r.a
	maxIter := a.cfg.MaxIterations
	if maxIter == 0 {
		maxIter = DefaultMaxIterations
	}
	for ; ; iter++ {
		prior := pending
		pending = nil
		if prior == nil {
			if iter >= maxIter {
				a.fail(r.emit, fmt.Errorf("agent %s: %w (MaxIterations is %d)", a.cfg.Name, ErrMaxIterations, maxIter))
				return nil
			}
			if err := ctx.Err(); err != nil {
				a.fail(r.emit, fmt.Errorf("agent %s: %w", a.cfg.Name, err))
				return nil
			}
			msg, err := a.callModel(ctx, r.p.model, msgs, r.streaming, r.o.modelOptions, r.emit)
			if err != nil {
				a.fail(r.emit, fmt.Errorf("agent %s: model: %w", a.cfg.Name, err))
				return nil
			}
			msgs = append(msgs, msg)
			if len(msg.ToolCalls) == 0 {
				a.storeOutput(ctx, msg.Content)
				return nil
			}
			if r.p.tools == nil {
				a.fail(r.emit, fmt.Errorf("agent %s: the model called %s, but the agent has no tools", a.cfg.Name, msg.ToolCalls[0].Function.Name))
				return nil
			}
		}
		results, f, done, err := r.turn(ctx, msgs, iter, prior)
		switch {
		case err != nil:
			a.fail(r.emit, fmt.Errorf("agent %s: %w", a.cfg.Name, err))
			return nil
		case f != nil:
			return f
		case done:
			return nil
		}
		msgs = append(msgs, results...)
	}
}

// turn runs the tool calls of the assistant message msgs ends with (on a
// resumed turn, prior holds the calls that had finished) and emits their
// results. It returns the results in call order; or the agent's frame when
// a call interrupted; or done when a result ends the run (a tool that
// returns directly, or a transfer, exit or interrupt action).
func (r *react) turn(ctx context.Context, msgs []*schema.Message, iter int, prior []callFrame) (results []*schema.Message, f *frame, done bool, err error) {
	a := r.a
	toolCalls := msgs[len(msgs)-1].ToolCalls
	var path []RunStep
	prefix := ""
	if st := stateOf(ctx); st != nil {
		path, prefix = st.path, st.prefix
	} else {
		path = []RunStep{{AgentName: a.cfg.Name}}
	}

	// The calls to run now: all of them, or on a resumed turn those without
	// a result.
	run, idx := toolCalls, []int(nil)
	if prior != nil {
		run = nil
		for i := range prior {
			if prior[i].Result == nil {
				run = append(run, toolCalls[i])
				idx = append(idx, i)
			}
		}
	}
	at := func(k int) int {
		if idx == nil {
			return k
		}
		return idx[k]
	}
	slots := make([]toolCall, len(run))
	for k := range slots {
		slots[k] = toolCall{path: path, prefix: prefix, callID: run[k].ID}
		if prior != nil {
			slots[k].resumed, slots[k].resumedState = prior[at(k)].Interrupted, prior[at(k)].State
		}
	}
	ran, err := r.p.tools.Run(ctx, run, func(ctx context.Context, k int) context.Context {
		return context.WithValue(ctx, toolCallKey{}, &slots[k])
	})
	if err != nil {
		return nil, nil, false, err
	}

	interrupted := false
	for k := range slots {
		if slots[k].interrupt != nil {
			interrupted = true
			break
		}
	}
	if interrupted || prior != nil {
		results, f, done, err := r.settleTurn(msgs, iter, toolCalls, prior, slots, ran, at)
		if f != nil || err != nil {
			return nil, f, false, err
		}
		return results, nil, r.finishTurn(ctx, results) || done, nil
	}

	for k, res := range ran {
		r.emit(toolEvent(a.cfg.Name, res, slots[k].action))
		if act := slots[k].action; act != nil && (act.Exit || act.TransferToAgent != nil || act.Interrupted != nil) {
			done = true
		}
	}
	return ran, nil, r.finishTurn(ctx, ran) || done, nil
}

// settleTurn ends a turn that was resumed or interrupted: it emits the
// results of the calls that finished now and merges them with those that
// had finished before, in call order.
func (r *react) settleTurn(msgs []*schema.Message, iter int, toolCalls []schema.ToolCall, prior []callFrame, slots []toolCall,
	ran []*schema.Message, at func(int) int) (results []*schema.Message, f *frame, done bool, err error) {
	a := r.a
	calls := prior
	if calls == nil {
		calls = make([]callFrame, len(toolCalls))
	}
	var points []*InterruptPoint
	for k := range slots {
		i, slot := at(k), &slots[k]
		if p := slot.interrupt; p != nil {
			calls[i] = callFrame{Interrupted: true, State: p.state}
			if len(p.points) > 0 {
				points = append(points, p.points...)
			} else {
				points = append(points, &InterruptPoint{ID: slot.id(), Agent: a.cfg.Name, RunPath: slot.path, Tool: toolCalls[i].Function.Name, Info: p.info})
			}
			continue
		}
		calls[i] = callFrame{Result: ran[k], Action: slot.action}
		r.emit(toolEvent(a.cfg.Name, ran[k], slot.action))
	}
	if len(points) > 0 {
		r.emit(&AgentEvent{AgentName: a.cfg.Name, Action: &AgentAction{Interrupted: &InterruptInfo{Data: points[0].Info, Points: points}}})
		return nil, &frame{Chat: &chatFrame{Messages: msgs, Iteration: iter, Calls: calls}}, false, nil
	}
	results = make([]*schema.Message, len(calls))
	for i := range calls {
		results[i] = calls[i].Result
		if act := calls[i].Action; act != nil && (act.Exit || act.TransferToAgent != nil || act.Interrupted != nil) {
			done = true
		}
	}
	return results, nil, done, nil
}

// finishTurn stores the answer of a tool that returns directly and reports
// whether there was one.
func (r *react) finishTurn(ctx context.Context, results []*schema.Message) bool {
	for _, res := range results {
		if r.p.returnDirectly[res.ToolName] {
			r.a.storeOutput(ctx, res.Content)
			return true
		}
	}
	return false
}

// messageEvent returns an event carrying a whole message, made in one
// allocation.
func messageEvent(agent string, msg *schema.Message, role schema.Role, toolName string) *AgentEvent {
	b := &struct {
		ev  AgentEvent
		out AgentOutput
		mv  MessageVariant
	}{}
	b.mv = MessageVariant{Message: msg, Role: role, ToolName: toolName}
	b.out.MessageOutput = &b.mv
	b.ev = AgentEvent{AgentName: agent, Output: &b.out}
	return &b.ev
}

func toolEvent(agent string, result *schema.Message, action *AgentAction) *AgentEvent {
	ev := messageEvent(agent, result, schema.Tool, result.ToolName)
	ev.Action = action
	return ev
}

// callModel asks the model for its next message and emits it, streamed when
// streaming.
func (a *ChatModelAgent) callModel(ctx context.Context, m model.ChatModel, msgs []*schema.Message, streaming bool, opts []model.Option, emit emitFunc) (reply *schema.Message, err error) {
	ctx, done := modelCall(ctx, a.cfg.Name, m, opts)
	defer func() { done(reply, err) }()
	if !streaming {
		msg, err := m.Generate(ctx, msgs, opts...)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			return nil, errors.New("the model returned no message")
		}
		emit(messageEvent(a.cfg.Name, msg, schema.Assistant, ""))
		return msg, nil
	}
	stream, err := m.Stream(ctx, msgs, opts...)
	if err != nil {
		return nil, err
	}
	copies := stream.Copy(2)
	emit(&AgentEvent{AgentName: a.cfg.Name, Output: &AgentOutput{MessageOutput: &MessageVariant{
		IsStreaming: true, MessageStream: copies[0], Role: schema.Assistant,
	}}})
	return schema.ConcatMessageStream(copies[1])
}

func (a *ChatModelAgent) storeOutput(ctx context.Context, answer string) {
	if a.cfg.OutputKey != "" {
		AddSessionValue(ctx, a.cfg.OutputKey, answer)
	}
}

// toolCall is a tool call's side of the conversation with its agent.
type toolCall struct {
	path         []RunStep // the agent's
	prefix       string    // the run's point id prefix
	callID       string
	resumed      bool            // the call runs again after it interrupted
	resumedState json.RawMessage // the state it saved then
	action       *AgentAction    // set by SendToolGenAction
	interrupt    *pendingInterrupt
}

// id is the call's interrupt point id; it is made only when needed.
func (c *toolCall) id() string { return pointID(c.prefix, c.path, c.callID) }

type toolCallKey struct{}

// ErrNotInToolCall is what SendToolGenAction returns for a context that is
// not a ChatModelAgent's tool call.
var ErrNotInToolCall = errors.New("adk: not in a ChatModelAgent's tool call")

// SendToolGenAction attaches action to the result of the tool call ctx
// belongs to. A transfer, exit or interrupt action ends the agent's run
// once the turn's tool calls are done.
func SendToolGenAction(ctx context.Context, action *AgentAction) error {
	c, ok := ctx.Value(toolCallKey{}).(*toolCall)
	if !ok {
		return ErrNotInToolCall
	}
	c.action = action
	return nil
}

// fillInstruction replaces {key} placeholders with session values.
func fillInstruction(ctx context.Context, instruction string) (string, error) {
	if !strings.ContainsAny(instruction, "{}") {
		return instruction, nil
	}
	var b strings.Builder
	for i := 0; i < len(instruction); {
		c := instruction[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(instruction) && instruction[i+1] == c:
			b.WriteByte(c)
			i += 2
			continue
		case c == '{':
			if end := strings.IndexByte(instruction[i+1:], '}'); end > 0 && isKey(instruction[i+1:i+1+end]) {
				key := instruction[i+1 : i+1+end]
				v, ok := GetSessionValue(ctx, key)
				if !ok {
					return "", fmt.Errorf("no session value for {%s}", key)
				}
				b.WriteString(formatValue(v))
				i += end + 2
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

func isKey(s string) bool {
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '.' || r == '-'):
		default:
			return false
		}
	}
	return s != ""
}

// formatValue renders a session value for an instruction: text as it is,
// anything else as JSON, which models read well.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case fmt.Stringer:
		return v.String()
	}
	if b, err := json.Marshal(v); err == nil {
		return string(b)
	}
	return fmt.Sprint(v)
}
