package adk

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// SequentialAgentConfig configures a Sequential agent.
type SequentialAgentConfig struct {
	Name        string
	Description string
	SubAgents   []Agent
}

// ParallelAgentConfig configures a Parallel agent.
type ParallelAgentConfig struct {
	Name        string
	Description string
	SubAgents   []Agent
}

// LoopAgentConfig configures a Loop agent.
type LoopAgentConfig struct {
	Name        string
	Description string
	SubAgents   []Agent
	// MaxIterations caps the passes over the sub-agents; 0 means no cap.
	MaxIterations int
}

// NewSequentialAgent returns an agent that runs its sub-agents one after
// another; each sees what the ones before it produced. It stops after a
// sub-agent that fails or exits.
func NewSequentialAgent(ctx context.Context, cfg *SequentialAgentConfig) (Agent, error) {
	if cfg == nil {
		return nil, errors.New("adk: NewSequentialAgent needs a config")
	}
	return newWorkflow(ctx, cfg.Name, cfg.Description, cfg.SubAgents, sequential, 0)
}

// NewParallelAgent returns an agent that runs its sub-agents at once, each
// on a goroutine of its own, and ends when all have ended. A sub-agent that
// fails or panics does not stop the others. While they run, sub-agents see
// only the history from before the Parallel agent; afterwards, whatever
// follows sees all they produced, grouped sub-agent by sub-agent.
func NewParallelAgent(ctx context.Context, cfg *ParallelAgentConfig) (Agent, error) {
	if cfg == nil {
		return nil, errors.New("adk: NewParallelAgent needs a config")
	}
	return newWorkflow(ctx, cfg.Name, cfg.Description, cfg.SubAgents, parallel, 0)
}

// NewLoopAgent returns an agent that runs its sub-agents in order, again
// and again, until one fails, exits or breaks the loop (BreakLoopAction),
// or MaxIterations passes are done.
func NewLoopAgent(ctx context.Context, cfg *LoopAgentConfig) (Agent, error) {
	if cfg == nil {
		return nil, errors.New("adk: NewLoopAgent needs a config")
	}
	if cfg.MaxIterations < 0 {
		return nil, fmt.Errorf("adk: loop agent %s: MaxIterations is negative", cfg.Name)
	}
	return newWorkflow(ctx, cfg.Name, cfg.Description, cfg.SubAgents, loop, cfg.MaxIterations)
}

type workflowMode int

const (
	sequential workflowMode = iota
	parallel
	loop
)

// workflowAgent runs its sub-agents, the steps, in a fixed pattern. Steps
// cannot transfer back to the workflow.
type workflowAgent struct {
	name, desc    string
	mode          workflowMode
	maxIterations int
	steps         []*flowAgent
}

func newWorkflow(ctx context.Context, name, desc string, subAgents []Agent, mode workflowMode, maxIterations int) (Agent, error) {
	if name == "" {
		return nil, errors.New("adk: a workflow agent needs a name")
	}
	w := &workflowAgent{name: name, desc: desc, mode: mode, maxIterations: maxIterations}
	steps := make([]Agent, len(subAgents))
	for i, s := range subAgents {
		if s == nil {
			continue // setSubAgents reports it
		}
		step, err := AgentWithOptions(ctx, toFlowAgent(ctx, s), WithDisallowTransferToParent())
		if err != nil {
			return nil, err
		}
		steps[i] = step
	}
	fa, err := setSubAgents(ctx, &flowAgent{agent: w, name: name, desc: desc}, steps)
	if err != nil {
		return nil, err
	}
	w.steps = fa.subAgents
	return fa, nil
}

func (w *workflowAgent) Name(context.Context) string        { return w.name }
func (w *workflowAgent) Description(context.Context) string { return w.desc }

func (w *workflowAgent) Run(ctx context.Context, input *AgentInput, opts ...AgentRunOption) *AsyncIterator[*AgentEvent] {
	return spawn(w.name, func(emit emitFunc) { w.runInline(ctx, input, opts, emit) })
}

// runInline runs the steps. The steps build their input from the run's
// history, so input is not used; ctx is the workflow's own run context,
// made by the flowAgent that wraps it.
func (w *workflowAgent) runInline(ctx context.Context, _ *AgentInput, opts []AgentRunOption, emit emitFunc) {
	st := stateOf(ctx)
	if st == nil || len(st.path) == 0 {
		emit(&AgentEvent{AgentName: w.name, Err: fmt.Errorf("adk: workflow %s must run inside its flow agent", w.name)})
		return
	}
	switch w.mode {
	case sequential:
		w.runSteps(ctx, st, 1, opts, emit)
	case loop:
		w.runSteps(ctx, st, w.maxIterations, opts, emit)
	case parallel:
		w.runParallel(ctx, st, opts, emit)
	}
}

// runSteps runs the steps in order, passes times over (0: until stopped).
// Each step's RunPath extends the one before it, so every step sees what
// the earlier ones produced.
func (w *workflowAgent) runSteps(ctx context.Context, st *runState, passes int, opts []AgentRunOption, emit emitFunc) {
	path := st.path
	for pass := 0; passes == 0 || pass < passes; pass++ {
		for _, step := range w.steps {
			if err := ctx.Err(); err != nil {
				emit(&AgentEvent{AgentName: w.name, Err: fmt.Errorf("workflow %s: %w", w.name, err)})
				return
			}
			stop, brk := false, false
			mark := st.session.mark()
			step.runInline(withState(ctx, &runState{session: st.session, path: path}), nil, opts, func(ev *AgentEvent) {
				if ev.Err != nil {
					stop = true
				}
				if act := ev.Action; act != nil {
					if act.Exit || act.Interrupted != nil {
						stop = true
					}
					if b := act.BreakLoop; b != nil && w.mode == loop && !b.Done {
						b.Done, b.CurrentIterations = true, pass
						brk = true
					}
				}
				emit(ev)
			})
			path = appendPath(path, step.name)
			st.session.settle(mark, path, nil)
			if stop || brk {
				return
			}
		}
	}
}

func (w *workflowAgent) runParallel(ctx context.Context, st *runState, opts []AgentRunOption, emit emitFunc) {
	var mu sync.Mutex
	locked := func(ev *AgentEvent) {
		mu.Lock()
		defer mu.Unlock()
		emit(ev)
	}
	mark := st.session.mark()
	var wg sync.WaitGroup
	names := make([]string, len(w.steps))
	for i, step := range w.steps {
		names[i] = step.name
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					locked(&AgentEvent{AgentName: step.name, RunPath: appendPath(st.path, step.name),
						Err: &PanicError{Agent: step.name, Value: p, Stack: debug.Stack()}})
				}
			}()
			step.runInline(ctx, nil, opts, locked)
		}()
	}
	wg.Wait()
	st.session.settle(mark, st.path, names)
}
