package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// testBound bounds every wait of a run in these tests.
const testBound = 10 * time.Second

// worker is an agent served over A2A for a composition to call: a model
// agent that follows its script, and a record of the transfer targets
// each of its runs was offered (the callers a RemoteAgent sends).
type worker struct {
	url string
	mu  sync.Mutex
	// runs holds, per run, the names of the agents it may transfer to.
	runs [][]string
}

func (w *worker) offered() [][]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.runs)
}

type recordingExecutor struct {
	server.AgentExecutor
	w *worker
}

func (e recordingExecutor) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	var meta struct {
		Callers []adk.CallerAgent `json:"callers"`
	}
	if b, err := json.Marshal(req.Metadata[bridge.KeyRun]); err == nil {
		_ = json.Unmarshal(b, &meta)
	}
	names := []string{}
	for _, c := range meta.Callers {
		names = append(names, c.Name)
	}
	e.w.mu.Lock()
	e.w.runs = append(e.w.runs, names)
	e.w.mu.Unlock()
	return e.AgentExecutor.Execute(ctx, req)
}

// serveWorker serves a model agent named name whose model answers by
// script (nil: it says "<name> done").
func serveWorker(t *testing.T, name string, script modeltest.Script) *worker {
	t.Helper()
	ctx := context.Background()
	if script == nil {
		script = func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
			return modeltest.Answer(name + " done"), nil
		}
	}
	a, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: "the " + name + " agent", Model: modeltest.FromScript(script)})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	ln, url := a2atest.Listen(t)
	w := &worker{url: url}
	a2atest.ServeOn(t, ln, a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, a, url), Executor: recordingExecutor{exec, w}}), jsonrpcserver.Config{})
	return w
}

// transfers returns a script that transfers to the agents in turn, one
// per call.
func transfers(to ...string) modeltest.Script {
	return func(_ context.Context, call int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if call >= len(to) {
			return modeltest.Answer("nowhere to go"), nil
		}
		return modeltest.CallTool(adk.TransferToAgentToolName, fmt.Sprintf(`{"agent_name":%q}`, to[call])), nil
	}
}

// build parses the topology (its agents are the workers' keys) and builds
// it.
func build(t *testing.T, workers map[string]*worker, entry string) adk.Agent {
	t.Helper()
	var agents []string
	for key, w := range workers {
		agents = append(agents, fmt.Sprintf("%s: %q", key, w.url))
	}
	top, err := ParseTopology([]byte("version: 1\nagents: {" + strings.Join(agents, ", ") + "}\nentry: " + entry))
	if err != nil {
		t.Fatal(err)
	}
	// A client of the test's own, whose connections it closes.
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	a, err := top.Build(context.Background(), Config{Model: modeltest.New(), Remote: bridge.RemoteConfig{HTTPClient: hc}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// run runs the composition on a query and returns its events; after
// maxEvents events it cancels the run (a loop that never ends), and it
// fails the test if the run outlives testBound.
func run(t *testing.T, a adk.Agent, query string, maxEvents int) []*adk.AgentEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	it := adk.NewRunner(ctx, adk.RunnerConfig{Agent: a}).Query(ctx, query)
	done := make(chan []*adk.AgentEvent, 1)
	go func() {
		var evs []*adk.AgentEvent
		for {
			ev, ok := it.Next()
			if !ok {
				done <- evs
				return
			}
			if evs = append(evs, ev); len(evs) == maxEvents {
				cancel()
			}
		}
	}()
	select {
	case evs := <-done:
		return evs
	case <-time.After(testBound):
		cancel()
		<-done
		t.Fatalf("the run did not end within %s", testBound)
		return nil
	}
}

// said lists "agent: text" for the answers of evs, and "agent error:
// ..." for their errors.
func said(evs []*adk.AgentEvent) []string {
	var out []string
	for _, ev := range evs {
		if ev.Err != nil {
			out = append(out, ev.AgentName+" error: "+ev.Err.Error())
		}
		if mv := ev.Output; mv != nil && mv.MessageOutput != nil && mv.MessageOutput.Role == schema.Assistant && mv.MessageOutput.Message != nil {
			if m := mv.MessageOutput.Message; m.Content != "" {
				out = append(out, ev.AgentName+": "+m.Content)
			}
		}
	}
	return out
}

// TestBuildAlias: an alias renames the agent in the composition: its own
// name, and the name its parent and sub-agents know it by for transfers.
func TestBuildAlias(t *testing.T) {
	workers := map[string]*worker{"a": serveWorker(t, "A", transfers("Bee")), "b": serveWorker(t, "B", nil)}
	a := build(t, workers, "{agent: a, alias: Ay, subAgents: [{agent: b, alias: Bee}]}")
	if got := a.Name(context.Background()); got != "Ay" {
		t.Errorf("the entry is named %q, want its alias Ay", got)
	}
	if got := said(run(t, a, "hello", 100)); !slices.Equal(got, []string{"B: B done"}) {
		t.Errorf("the run said %q, want B's answer after the transfer to Bee", got)
	}
	for key, want := range map[string][]string{"a": {"Bee"}, "b": {"Ay"}} {
		if got := workers[key].offered(); len(got) != 1 || !slices.Equal(got[0], want) {
			t.Errorf("%s was offered %v, want [%v]", key, got, want)
		}
	}
}

// TestBuildDisallowTransferToParent: a sub-agent whose node sets
// disallowTransferToParent is not offered its parent; its sibling is.
func TestBuildDisallowTransferToParent(t *testing.T) {
	workers := map[string]*worker{
		"a": serveWorker(t, "A", transfers("B", "C")),
		"b": serveWorker(t, "B", nil),
		"c": serveWorker(t, "C", nil),
	}
	a := build(t, workers, "{agent: a, subAgents: [{agent: b, disallowTransferToParent: true}, {agent: c}]}")
	for _, want := range []string{"B: B done", "C: C done"} {
		if got := said(run(t, a, "hello", 100)); !slices.Contains(got, want) {
			t.Fatalf("the run said %q, want %q", got, want)
		}
	}
	for key, want := range map[string][]string{"a": {"B", "C"}, "b": {}, "c": {"A"}} {
		got := workers[key].offered()
		if len(got) == 0 || !slices.Equal(got[len(got)-1], want) {
			t.Errorf("%s was offered %v, want %v last", key, got, want)
		}
	}
}

// TestBuildLoopMaxIterations: a loop's maxIterations caps its passes (a
// loop without one would go on until cancelled).
func TestBuildLoopMaxIterations(t *testing.T) {
	workers := map[string]*worker{"a": serveWorker(t, "A", nil), "b": serveWorker(t, "B", nil)}
	a := build(t, workers, "{loop: {name: L, maxIterations: 3, steps: [{agent: a}, {agent: b}]}}")
	if got := a.Name(context.Background()); got != "L" {
		t.Errorf("the loop is named %q", got)
	}
	evs := run(t, a, "again", 20)
	want := []string{"A: A done", "B: B done", "A: A done", "B: B done", "A: A done", "B: B done"}
	if got := said(evs); !slices.Equal(got, want) {
		t.Errorf("the loop said %q, want %q", got, want)
	}
	for key, w := range workers {
		if n := len(w.offered()); n != 3 {
			t.Errorf("%s ran %d times, want 3", key, n)
		}
	}
}

// TestBuildWorkflows: sequential and parallel nodes run their remote
// steps under the names the file gives them.
func TestBuildWorkflows(t *testing.T) {
	workers := map[string]*worker{"a": serveWorker(t, "A", nil), "b": serveWorker(t, "B", nil), "c": serveWorker(t, "C", nil)}
	a := build(t, workers, "{sequential: {name: S, steps: [{agent: a}, {parallel: {name: P, steps: [{agent: b}, {agent: c}]}}]}}")
	if got := a.Name(context.Background()); got != "S" {
		t.Errorf("the sequence is named %q", got)
	}
	got := said(run(t, a, "go", 100))
	if len(got) != 3 || got[0] != "A: A done" || !slices.Contains(got, "B: B done") || !slices.Contains(got, "C: C done") {
		t.Errorf("the run said %q, want A, then B and C", got)
	}
}

// TestBuildBinding: a node's binding is the only one its agent is called
// over, so an agent whose card does not list it cannot be composed, and
// the error says what was asked for.
func TestBuildBinding(t *testing.T) {
	w := serveWorker(t, "A", nil)
	top, err := ParseTopology([]byte(fmt.Sprintf("version: 1\nagents: {a: %q}\nentry: {agent: a, binding: HTTP+JSON}", w.url)))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	_, err = top.Build(context.Background(), Config{Model: modeltest.New(), Remote: bridge.RemoteConfig{HTTPClient: hc}})
	if err == nil || !strings.Contains(err.Error(), "offers no HTTP+JSON 1.0 interface") {
		t.Fatalf("Build = %v, want the agent refused for lacking HTTP+JSON", err)
	}
}
