package adk

import (
	"context"
	"slices"
)

// AgentRunOption tunes one run. Options made by WrapImplSpecificOptFn reach
// the agent implementations that understand them (see
// GetImplSpecificOptions); DesignateAgent narrows an option to named
// agents. The zero value does nothing.
type AgentRunOption struct {
	implSpecific any // a func(*T) for some options type T
	common       func(*runOptions)
	agents       []string
}

// runOptions are the options the framework itself reads.
type runOptions struct {
	sessionValues map[string]any
	checkPointID  string
	resume        map[string]any // input by interrupt point id
	runPath       []RunStep
	callers       []CallerAgent
	onEnd         func(ctx context.Context)
}

// WithRunEnd calls fn when the run ends, on the run's goroutine, before its
// iterator ends, with a context of the run: GetSessionValues and
// MarshalSessionValues read the run's final session values there.
func WithRunEnd(fn func(ctx context.Context)) AgentRunOption {
	return AgentRunOption{common: func(o *runOptions) { o.onEnd = fn }}
}

// WithRunPath makes a run continue a RunPath begun elsewhere: its root
// agent's RunPath is path (whose last step names the root as the caller
// knows it), and every agent below extends it. A run that serves a remote
// caller uses it so its events and interrupt points fit the caller's tree.
func WithRunPath(path []RunStep) AgentRunOption {
	return AgentRunOption{common: func(o *runOptions) { o.runPath = path }}
}

// WithCallerAgents gives the run's root agent more agents to transfer to:
// agents of a caller's tree, such as the caller's parent and siblings of
// the root. A transfer to one of them ends the run with the transfer
// action, for the caller to carry out.
func WithCallerAgents(agents ...CallerAgent) AgentRunOption {
	return AgentRunOption{common: func(o *runOptions) { o.callers = agents }}
}

// WrapImplSpecificOptFn makes an option of fn, for agents whose options
// type is T.
func WrapImplSpecificOptFn[T any](fn func(*T)) AgentRunOption {
	return AgentRunOption{implSpecific: fn}
}

// GetImplSpecificOptions applies to base (a new T when nil) every option in
// opts made for T, in order, and returns it.
func GetImplSpecificOptions[T any](base *T, opts ...AgentRunOption) *T {
	if base == nil {
		base = new(T)
	}
	for _, o := range opts {
		if fn, ok := o.implSpecific.(func(*T)); ok {
			fn(base)
		}
	}
	return base
}

// DesignateAgent returns the option limited to the named agents; other
// agents of the run ignore it.
func (o AgentRunOption) DesignateAgent(names ...string) AgentRunOption {
	o.agents = slices.Concat(o.agents, names)
	return o
}

// WithSessionValues sets session values before the run starts; agents read
// them with GetSessionValue and instructions refer to them as {key}.
func WithSessionValues(values map[string]any) AgentRunOption {
	return AgentRunOption{common: func(o *runOptions) { o.sessionValues = values }}
}

func commonOptions(opts []AgentRunOption) runOptions {
	var o runOptions
	for _, opt := range opts {
		if opt.common != nil {
			opt.common(&o)
		}
	}
	return o
}

// optionsFor returns the options that apply to the named agent. It returns
// opts itself when all do, which is the common case.
func optionsFor(name string, opts []AgentRunOption) []AgentRunOption {
	keep := func(o AgentRunOption) bool { return len(o.agents) == 0 || slices.Contains(o.agents, name) }
	for i, o := range opts {
		if !keep(o) {
			out := slices.Clone(opts[:i])
			for _, o := range opts[i+1:] {
				if keep(o) {
					out = append(out, o)
				}
			}
			return out
		}
	}
	return opts
}
