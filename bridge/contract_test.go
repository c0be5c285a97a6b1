package bridge_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

// Tests of the cross-process contract (DESIGN.md), point by point.

type askIn struct {
	Question string `json:"question"`
}

// twoHops serves Booker (whose ask_user tool interrupts) and, in front of
// it, Front: a router that transfers to Booker as a remote agent. The
// caller reaches Front remotely too: caller -> Front -> Booker.
func twoHops(t *testing.T, bookerTool func(ctx context.Context, in askIn) (string, error)) (front *bridge.RemoteAgent, bookerURL string) {
	t.Helper()
	ctx := context.Background()
	booker := agent(t, "Booker", "Books trips", modeltest.FromScript(func(_ context.Context, _ int, in []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if last := in[len(in)-1]; last.Role == schema.Tool {
			return answer("Booked: " + last.Content), nil
		}
		return callTool("ask_user", `{"question":"Which day?"}`), nil
	}), mustTool(t, "ask_user", "Ask the person", bookerTool))
	bookerURL = serveAgent(t, booker)
	routerModel := modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		return callTool(adk.TransferToAgentToolName, `{"agent_name":"Booker"}`), nil
	})
	frontTree, err := adk.SetSubAgents(ctx, agent(t, "Front", "Takes requests", routerModel), []adk.Agent{remote(t, bookerURL)})
	if err != nil {
		t.Fatal(err)
	}
	return remote(t, serveAgent(t, frontTree)), bookerURL
}

func ask(ctx context.Context, in askIn) (string, error) {
	if typed, ok := adk.GetResumeData[string](ctx); ok {
		return in.Question + " " + typed, nil
	}
	return "", adk.Interrupt(ctx, "please answer: "+in.Question)
}

// Point 3 (RunPath crosses processes) and 5 (interrupt and resume through
// two hops, also with a new caller Runner on the same store).
func TestInterruptResumeThroughTwoHops(t *testing.T) {
	ctx := context.Background()
	front, _ := twoHops(t, ask)
	store := &adk.MemoryCheckPointStore{}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: front, CheckPointStore: store})
	evs := adktest.Drain(t, r.Query(ctx, "book a trip", adk.WithCheckPointID("gw-task")))
	adktest.Expect(t, evs,
		`Front [Front] calls transfer_to_agent{"agent_name":"Booker"}`,
		`Front [Front] tool transfer_to_agent: successfully transferred to agent [Booker] => transfer Booker`,
		`Booker [Front Booker] calls ask_user{"question":"Which day?"}`,
		`Front [Front] => interrupted`,
	)
	info := adktest.Interrupted(t, evs)
	p := info.Points[0]
	if p.ID != "Front/Booker#call_ask_user" || p.Info != "please answer: Which day?" || p.Agent != "Booker" {
		t.Fatalf("point %+v", p)
	}
	// A new Runner on the same store (the caller restarted) resumes.
	r2 := adk.NewRunner(ctx, adk.RunnerConfig{Agent: front, CheckPointStore: store})
	it, err := r2.Resume(ctx, "gw-task", adk.ResumeWith(p.ID, "Friday"))
	if err != nil {
		t.Fatal(err)
	}
	adktest.Expect(t, adktest.Drain(t, it),
		`Booker [Front Booker] tool ask_user: Which day? Friday`,
		`Booker [Front Booker] says "Booked: Which day? Friday"`,
	)
}

// Point 6: cancelling the caller cancels the remote tasks, two hops down.
func TestCancelThroughTwoHops(t *testing.T) {
	started := make(chan struct{})
	var once sync.Once
	front, bookerURL := twoHops(t, func(ctx context.Context, _ askIn) (string, error) {
		once.Do(func() { close(started) })
		<-ctx.Done()
		return "", ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: front})
	it := r.Query(ctx, "book")
	<-started
	cancel()
	evs := adktest.Drain(t, it)
	last := evs[len(evs)-1]
	if last.Err == nil || !errors.Is(last.Err, context.Canceled) && !strings.Contains(last.Err.Error(), "cancel") {
		t.Fatalf("last event %s", adktest.Describe(last))
	}
	// The Booker task, two hops away, ends CANCELED.
	c, err := client.New(context.Background(), bookerURL, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tasks) == 1 && res.Tasks[0].Status.State == a2a.TaskStateCanceled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("booker tasks: %d, first %+v %s", len(res.Tasks), res.Tasks[0].Status, res.Tasks[0].Status.Message.Text())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Point 7: session values go to the remote agent, its changes come back.
func TestSessionValuesBothWays(t *testing.T) {
	ctx := context.Background()
	book := mustTool(t, "book", "books", func(ctx context.Context, _ struct{}) (string, error) {
		city, _ := adk.GetSessionValue(ctx, "city")
		adk.AddSessionValue(ctx, "booking", map[string]any{"city": city, "ref": "B-17"})
		return "booked " + city.(string), nil
	})
	url := serveAgent(t, agent(t, "Booker", "books", modeltest.New(callTool("book", `{}`), answer("done")), book))
	var seen any
	after := &probe{name: "After", run: func(ctx context.Context) { seen, _ = adk.GetSessionValue(ctx, "booking") }}
	seq, err := adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: "Seq", SubAgents: []adk.Agent{remote(t, url), after}})
	if err != nil {
		t.Fatal(err)
	}
	adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: seq}).Query(ctx, "go", adk.WithSessionValues(map[string]any{"city": "Rome"})))
	if b, ok := seen.(map[string]any); !ok || b["city"] != "Rome" || b["ref"] != "B-17" {
		t.Fatalf("session value after the remote agent: %#v", seen)
	}
}

// probe is a custom agent that calls run and answers "ok".
type probe struct {
	name string
	run  func(ctx context.Context)
}

func (p *probe) Name(context.Context) string        { return p.name }
func (p *probe) Description(context.Context) string { return "probe" }
func (p *probe) Run(ctx context.Context, _ *adk.AgentInput, _ ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	p.run(ctx)
	gen.Send(adk.EventFromMessage(schema.AssistantMessage("ok", nil), nil, schema.Assistant, ""))
	gen.Close()
	return it
}

// Point 8: a dead remote agent is an error event naming it and its URL.
func TestDeadRemoteAgent(t *testing.T) {
	ctx := context.Background()
	ln, url := a2atest.Listen(t)
	a := agent(t, "Gone", "goes away", modeltest.New(answer("x")))
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	h := a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, a, url), Executor: exec})
	srv, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx, ln, time.Second) }()
	r := remote(t, url)
	stop()
	<-served
	_ = h.Close(ctx)

	start := time.Now()
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: r}).Query(ctx, "hi"))
	last := evs[len(evs)-1]
	if last.Err == nil || !strings.Contains(last.Err.Error(), "Gone") || !strings.Contains(last.Err.Error(), url) {
		t.Fatalf("events %q", adktest.DescribeAll(evs))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the failure took %v", d)
	}
}

// Point 8: a stream cut mid-way is resumed from the last event seen,
// nothing lost or repeated.
func TestCutStreamIsResumed(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(callTool("get_weather", `{"city":"Oslo"}`), answer(strings.Repeat("long answer ", 50)))
	a := agent(t, "WeatherAgent", "weather", m, weatherTool(t))
	// The card sends clients through the proxy.
	ln, _ := a2atest.Listen(t)
	proxy, cut := cuttingProxy(t, ln.Addr().String(), 1500)
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	a2atest.ServeOn(t, ln, a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, a, "http://"+proxy+"/"), Executor: exec}), jsonrpcserver.Config{})
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}} // one request, one connection
	r, err := bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: "http://" + proxy + "/", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: r, EnableStreaming: true}).Query(ctx, "weather in Oslo"))
	adktest.Expect(t, evs,
		`WeatherAgent [WeatherAgent] calls get_weather{"city":"Oslo"}`,
		`WeatherAgent [WeatherAgent] tool get_weather: the temperature in Oslo is 25°C`,
		`WeatherAgent [WeatherAgent] says "`+strings.Repeat("long answer ", 50)+`"`,
	)
	if !cut.Load() {
		t.Fatal("the proxy never cut the stream")
	}
}

// cuttingProxy forwards TCP to target, but cuts the first streaming
// request's connection after limit bytes of response.
func cuttingProxy(t *testing.T, target string, limit int64) (string, *atomic.Bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cut := new(atomic.Bool)
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			streaming := make(chan bool, 1)
			wg.Add(2)
			go func() {
				defer wg.Done()
				defer out.Close()
				buf := make([]byte, 64<<10)
				n, _ := in.Read(buf)
				streaming <- strings.Contains(string(buf[:n]), "text/event-stream") && strings.Contains(string(buf[:n]), "POST")
				_, _ = out.Write(buf[:n])
				_, _ = io.Copy(out, in)
			}()
			go func() {
				defer wg.Done()
				defer in.Close()
				if <-streaming && cut.CompareAndSwap(false, true) {
					_, _ = io.CopyN(in, out, limit)
					return // the client sees the stream break here
				}
				_, _ = io.Copy(in, out)
			}()
		}
	}()
	return ln.Addr().String(), cut
}

// Point 5 after a restart: the remote server comes back with its tasks
// gone (they were in memory) but its checkpoints on disk; the resume goes
// through as a new task that continues the run.
func TestResumeAfterTheRemoteRestarts(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ln, url := a2atest.Listen(t)
	addr := ln.Addr().String()
	start := func(ln net.Listener) (stop func()) {
		store, err := checkpoint.NewFile(dir)
		if err != nil {
			t.Fatal(err)
		}
		booker := bookerAgent(t)
		tasks := new(taskstore.Memory) // the process's: gone with it
		exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: booker, CheckPointStore: store, Tasks: tasks})
		if err != nil {
			t.Fatal(err)
		}
		h := a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, booker, url), Executor: exec, Tasks: tasks})
		srv, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
		if err != nil {
			t.Fatal(err)
		}
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = srv.Serve(sctx, ln, 100*time.Millisecond) }()
		return func() { cancel(); <-done; _ = h.Close(ctx) }
	}
	stop := start(ln)
	booker := remote(t, url)
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: booker, CheckPointStore: &adk.MemoryCheckPointStore{}})
	p := adktest.Interrupted(t, adktest.Drain(t, r.Query(ctx, "book", adk.WithCheckPointID("cp")))).Points[0]
	stop()
	booker.Client().CloseIdleConnections() // a dead process's connections are gone

	// The restarted agent comes back on its address, as a process would;
	// Go's listeners reuse an address left in TIME_WAIT, so this only
	// waits out a slow close.
	var ln2 net.Listener
	var err error
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ln2, err = net.Listen("tcp", addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's address %s cannot be listened on again: %v", addr, err)
		}
	}
	defer start(ln2)()
	it, err := r.Resume(ctx, "cp", adk.ResumeWith(p.ID, "Sunday"))
	if err != nil {
		t.Fatal(err)
	}
	adktest.Expect(t, adktest.Drain(t, it),
		`Booker [Booker] tool ask_user: Which day? Sunday`,
		`Booker [Booker] says "Booked: Which day? Sunday"`,
	)
}
