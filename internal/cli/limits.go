package cli

import (
	"time"

	"github.com/a2amesh/a2amesh/a2a/server"
)

// LimitFlags are the flags of an A2A server's limits that an operator
// tunes (server.Limits has the rest), with mesh-wide environment variables:
// a mesh's agents usually share them.
type LimitFlags struct {
	MaxRuns, MaxTasks *int
	InputTimeout      *time.Duration
	AllowedHosts      *string
}

// ServerLimits defines the limit flags on f.
func ServerLimits(f *Flags) *LimitFlags {
	return &LimitFlags{
		MaxRuns: f.IntEnv("max-runs", "A2AMESH_MAX_RUNS", server.DefaultMaxRuns,
			"most runs of the agent at once (a message that starts or continues a task, until it settles); more wait, then are refused with a retryable error; with a real model, also a bound on spending"),
		MaxTasks: f.IntEnv("max-tasks", "A2AMESH_MAX_TASKS", server.DefaultMaxLiveTasks,
			"most unfinished tasks (working or waiting for input) held; a new task beyond it is refused with a retryable error"),
		InputTimeout: f.DurationEnv("input-timeout", "A2AMESH_INPUT_TIMEOUT", server.DefaultInputTimeout,
			"how long a task may wait for input before it is canceled, and its checkpoint dropped"),
		AllowedHosts: f.StringEnv("allowed-hosts", "A2AMESH_ALLOWED_HOSTS", "",
			"comma-separated host[:port] names requests may be addressed to (Host, Origin), * for any; empty: the card's URL and the listening address"),
	}
}

// Limits returns the server limits the flags give.
func (l *LimitFlags) Limits() server.Limits {
	return server.Limits{MaxRuns: *l.MaxRuns, MaxLiveTasks: *l.MaxTasks, InputTimeout: *l.InputTimeout}
}

// Hosts returns the allowed hosts the flag lists.
func (l *LimitFlags) Hosts() []string { return SplitList(*l.AllowedHosts) }
