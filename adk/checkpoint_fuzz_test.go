package adk_test

import (
	"context"
	"errors"
	"testing"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
)

// fuzzTree is a tree with every kind of frame: a flow that transferred, a
// loop step, parallel branches and chat turns.
func fuzzTree(t testing.TB, store adk.CheckPointStore) *adk.Runner {
	ctx := context.Background()
	script := func(_ context.Context, _ int, in []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if len(in) > 0 && in[len(in)-1] != nil && in[len(in)-1].Role == schema.Tool {
			return answer("done"), nil
		}
		return callTool("ask_user", `{"question":"?"}`), nil
	}
	branch := func(name string) adk.Agent {
		return newAgent(t, name, "", "", modeltest.FromScript(script), askTool(t))
	}
	par, err := adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: "Par", SubAgents: []adk.Agent{branch("A"), branch("B")}})
	if err != nil {
		t.Fatal(err)
	}
	lp, err := adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: "Loop", SubAgents: []adk.Agent{par}, MaxIterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	router := newAgent(t, "Router", "", "", modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		return callTool(adk.TransferToAgentToolName, `{"agent_name":"Loop"}`), nil
	}))
	root, err := adk.SetSubAgents(ctx, router, []adk.Agent{lp})
	if err != nil {
		t.Fatal(err)
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: root, CheckPointStore: store})
}

// FuzzResume feeds damaged checkpoints to Resume: it may refuse them or
// end the run with an error event, but nothing panics, in the Runner or in
// the run.
func FuzzResume(f *testing.F) {
	ctx := context.Background()
	seed := &adk.MemoryCheckPointStore{}
	drain(f, fuzzTree(f, seed).Query(ctx, "go", adk.WithCheckPointID("cp"), adk.WithSessionValues(map[string]any{"n": 1, "s": "x"})))
	data, ok, _ := seed.Get(ctx, "cp")
	if !ok {
		f.Fatal("no seed checkpoint")
	}
	f.Add(data)
	f.Add([]byte(`{"version":1,"session":{"input":[null]},"frame":{"flow":{"inner":{"chat":{"messages":[null],"calls":[{}]}}}}}`))
	f.Add([]byte(`{"version":1,"session":{},"frame":{"flow":{"transfer_to":"Loop","target":{"flow":{"inner":{"steps":{"step":7,"inner":{}}}}}}}}`))
	f.Add([]byte(`{"version":1,"session":{"history":[{"agent":"A","path":null,"message":null}]},"frame":{"flow":{"transfer_to":"Loop","target":{"flow":{"inner":{"steps":{"inner":{"flow":{"inner":{"parallel":{"mark":-5,"branches":[{},null]}}}}}}}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		store := &adk.MemoryCheckPointStore{}
		if err := store.Set(ctx, "cp", data); err != nil {
			t.Fatal(err)
		}
		it, err := fuzzTree(t, store).Resume(ctx, "cp", adk.ResumeWith("Router/Loop/Par/A#call_ask_user", "yes"))
		if err != nil {
			if !errors.Is(err, adk.ErrBadCheckPoint) {
				t.Fatalf("refused with %v, not ErrBadCheckPoint", err)
			}
			return
		}
		for ev, ok := it.Next(); ok; ev, ok = it.Next() {
			var pe *adk.PanicError
			if errors.As(ev.Err, &pe) {
				t.Fatalf("panic: %v\n%s", pe.Value, pe.Stack)
			}
		}
	})
}
