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
		step, err := AgentWithConfig(ctx, toFlowAgent(ctx, s), AgentConfig{DisallowTransferToParent: true})
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
func (w *workflowAgent) runInline(ctx context.Context, _ *AgentInput, opts []AgentRunOption, emit emitFunc) *frame {
	st := w.state(ctx, emit)
	if st == nil {
		return nil
	}
	switch w.mode {
	case sequential:
		return w.runSteps(ctx, st, 1, 0, 0, nil, opts, emit)
	case loop:
		return w.runSteps(ctx, st, w.maxIterations, 0, 0, nil, opts, emit)
	default:
		return w.runParallel(ctx, st, nil, opts, emit)
	}
}

// resumeInline continues the step, or the branches, that were interrupted.
func (w *workflowAgent) resumeInline(ctx context.Context, f *frame, opts []AgentRunOption, emit emitFunc) *frame {
	st := w.state(ctx, emit)
	if st == nil {
		return nil
	}
	switch {
	case w.mode == parallel && f.Parallel != nil && len(f.Parallel.Branches) == len(w.steps):
		return w.runParallel(ctx, st, f.Parallel, opts, emit)
	case w.mode != parallel && f.Steps != nil && f.Steps.Step < len(w.steps) && f.Steps.Inner != nil:
		passes := 1
		if w.mode == loop {
			passes = w.maxIterations
		}
		return w.runSteps(ctx, st, passes, f.Steps.Pass, f.Steps.Step, f.Steps, opts, emit)
	}
	emit(&AgentEvent{AgentName: w.name, Err: fmt.Errorf("%w: workflow %s has no step to resume", ErrBadCheckPoint, w.name)})
	return nil
}

func (w *workflowAgent) state(ctx context.Context, emit emitFunc) *runState {
	st := stateOf(ctx)
	if st == nil || len(st.path) == 0 {
		emit(&AgentEvent{AgentName: w.name, Err: fmt.Errorf("adk: workflow %s must run inside its flow agent", w.name)})
		return nil
	}
	return st
}

// runSteps runs the steps in order, passes times over (0: until stopped),
// from step of pass; resumed, when not nil, is the frame of that step. Each
// step's RunPath extends the one before it, so every step sees what the
// earlier ones produced.
func (w *workflowAgent) runSteps(ctx context.Context, st *runState, passes, pass, step int, resumed *stepsFrame,
	opts []AgentRunOption, emit emitFunc) *frame {
	path := st.path
	for p := 0; p <= pass; p++ {
		for i, s := range w.steps {
			if p == pass && i == step {
				break
			}
			path = appendPath(path, s.name)
		}
	}
	for ; passes == 0 || pass < passes; pass, step = pass+1, 0 {
		for ; step < len(w.steps); step++ {
			s := w.steps[step]
			if err := ctx.Err(); err != nil {
				emit(&AgentEvent{AgentName: w.name, Err: fmt.Errorf("workflow %s: %w", w.name, err)})
				return nil
			}
			stop, brk := false, false
			stepEmit := func(ev *AgentEvent) {
				if ev.Err != nil {
					stop = true
				}
				if act := ev.Action; act != nil {
					if act.Exit {
						stop = true
					}
					if b := act.BreakLoop; b != nil && w.mode == loop && !b.Done {
						b.Done, b.CurrentIterations = true, pass
						brk = true
					}
				}
				emit(ev)
			}
			stepCtx := withState(ctx, st.at(path))
			var mark int
			var f *frame
			if resumed != nil {
				mark = resumed.Mark
				f = s.resumeInline(stepCtx, resumed.Inner, opts, stepEmit)
				resumed = nil
			} else {
				mark = st.session.mark()
				f = s.runInline(stepCtx, nil, opts, stepEmit)
			}
			if f != nil {
				return &frame{Steps: &stepsFrame{Pass: pass, Step: step, Mark: mark, Inner: f}}
			}
			path = appendPath(path, s.name)
			st.session.settle(mark, path, nil)
			if stop || brk {
				return nil
			}
		}
	}
	return nil
}

// runParallel runs every step on a goroutine of its own; resumed, when not
// nil, holds the frames of the branches to resume (the others finished).
func (w *workflowAgent) runParallel(ctx context.Context, st *runState, resumed *parallelFrame, opts []AgentRunOption, emit emitFunc) *frame {
	var mu sync.Mutex
	locked := func(ev *AgentEvent) {
		mu.Lock()
		defer mu.Unlock()
		emit(ev)
	}
	var mark int
	if resumed != nil {
		mark = resumed.Mark
	} else {
		mark = st.session.mark()
	}
	frames := make([]*frame, len(w.steps))
	var wg sync.WaitGroup
	names := make([]string, len(w.steps))
	for i, step := range w.steps {
		names[i] = step.name
		if resumed != nil && resumed.Branches[i] == nil {
			continue // it finished before the interrupt
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					locked(&AgentEvent{AgentName: step.name, RunPath: appendPath(st.path, step.name),
						Err: &PanicError{Agent: step.name, Value: p, Stack: debug.Stack()}})
				}
			}()
			if resumed != nil {
				frames[i] = step.resumeInline(ctx, resumed.Branches[i], opts, locked)
			} else {
				frames[i] = step.runInline(ctx, nil, opts, locked)
			}
		}()
	}
	wg.Wait()
	for _, f := range frames {
		if f != nil {
			// The finished branches' history stays in their lanes until all
			// have finished.
			return &frame{Parallel: &parallelFrame{Mark: mark, Branches: frames}}
		}
	}
	st.session.settle(mark, st.path, names)
	return nil
}
