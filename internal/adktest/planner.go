package adktest

import (
	"context"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/prebuilt/planexecute"
)

// Planner returns a plan-execute agent, PlannerAgent, on the offline model
// with an executor that has no tools and at most 4 iterations: what the
// tests of "the request after a transfer" give a router to transfer to,
// in process and across hops.
func Planner(t testing.TB) adk.Agent {
	t.Helper()
	ctx := context.Background()
	m := offline.New()
	p, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	e, err := planexecute.NewExecutor(ctx, &planexecute.ExecutorConfig{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	r, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	a, err := planexecute.New(ctx, &planexecute.Config{Name: "PlannerAgent",
		Description: "Plans multi-step tasks and carries them out step by step: calculations and research",
		Planner:     p, Executor: e, Replanner: r, MaxIterations: 4})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
