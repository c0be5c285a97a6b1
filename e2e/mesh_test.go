package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/internal/adktest"
	"github.com/a2amesh/a2amesh/natsstore"
)

// The seed scenarios across processes, with the offline model.

func TestRouterToWeatherAndTheFailedRoute(t *testing.T) {
	m := newMesh(t)
	_, router := m.service("router")
	_, weather := m.service("weather")
	_, chat := m.service("chat")
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Mesh}
agents: {router: %q, weather: %q, chat: %q}
entry: {agent: router, subAgents: [{agent: weather}, {agent: chat}]}
`, router, weather, chat))
	ctx := context.Background()
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, gw)})
	const offline = "the weather service is offline (no endpoint is configured), so the weather in Beijing is unknown"
	adktest.Expect(t, adktest.Drain(t, r.Query(ctx, "What's the weather in Beijing?")),
		`RouterAgent [Mesh] calls transfer_to_agent{"agent_name":"WeatherAgent"}`,
		`RouterAgent [Mesh] tool transfer_to_agent: successfully transferred to agent [WeatherAgent] => transfer WeatherAgent`,
		`WeatherAgent [Mesh WeatherAgent] calls get_weather{"city":"Beijing"}`,
		`WeatherAgent [Mesh WeatherAgent] tool get_weather: `+offline,
		`WeatherAgent [Mesh WeatherAgent] says "[offline model] `+offline+`"`,
	)
	adktest.Expect(t, adktest.Drain(t, r.Query(ctx, "Book me a flight")),
		`RouterAgent [Mesh] says "[offline model] You asked: Book me a flight"`)

	// Every event went to NATS, in order, per task.
	nc, js, err := natsstore.Connect(m.nats, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	last := map[string]uint64{}
	agents := map[string]bool{}
	for we, err := range natsstore.Watch(wctx, js, time.Now().Add(-time.Hour)) {
		if err != nil {
			t.Fatal(err)
		}
		key := we.Agent + "/" + we.TaskID
		if we.Seq != last[key]+1 {
			t.Fatalf("%s: event %d after %d", key, we.Seq, last[key])
		}
		last[key] = we.Seq
		agents[we.Agent] = true
		if len(agents) == 3 && agents["Mesh"] && agents["RouterAgent"] && agents["WeatherAgent"] {
			break
		}
	}
	if len(agents) != 3 || !agents["Mesh"] {
		t.Fatalf("events from %v", agents)
	}
}

func TestSupervisorReportAcrossProcesses(t *testing.T) {
	m := newMesh(t)
	_, research := m.service("research")
	_, writer := m.service("writer")
	_, sup := m.service("supervisor", "--research-url", research, "--writer-url", writer)
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Reports}
agents: {supervisor: %q}
entry: {agent: supervisor}
`, sup))
	ctx := context.Background()
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, gw)}).Query(ctx, "Research checkpoints and write a report"))
	want := []string{"SupervisorAgent->ResearchAgent", "ResearchAgent->SupervisorAgent", "SupervisorAgent->WriterAgent", "WriterAgent->SupervisorAgent"}
	if got := transfers(evs); !slices.Equal(got, want) {
		t.Fatalf("transfers %v in\n  %s", got, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
	var searched bool
	for _, ev := range evs {
		if ev.AgentName == "ResearchAgent" && ev.Output != nil && ev.Output.MessageOutput.ToolName == "search_docs" {
			searched = strings.Contains(ev.Output.MessageOutput.Message.Content, "docs/")
		}
	}
	last := evs[len(evs)-1]
	if !searched || last.AgentName != "SupervisorAgent" || last.Err != nil ||
		!slices.Equal(last.RunPath, []adk.RunStep{{AgentName: "Reports"}, {AgentName: "ResearchAgent"}, {AgentName: "SupervisorAgent"},
			{AgentName: "WriterAgent"}, {AgentName: "SupervisorAgent"}}) {
		t.Fatalf("searched %v, last %s", searched, adktest.Describe(last))
	}
}

func TestPlanExecuteWithARemoteExecutor(t *testing.T) {
	m := newMesh(t)
	_, math := m.service("math")
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Plans}
agents: {math: %q}
entry: {planExecute: {name: TripPlanner, executor: {agent: math}, maxIterations: 5}}
`, math))
	ctx := context.Background()
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, gw)}).Query(ctx, "Plan: calculate 2 + 3, then calculate 4 * 5"))
	var calls []string
	for _, ev := range evs {
		if ev.Err != nil {
			t.Fatalf("%s", adktest.Describe(ev))
		}
		if ev.AgentName == "MathAgent" && ev.Output != nil && ev.Output.MessageOutput.ToolName == "calculate" {
			calls = append(calls, ev.Output.MessageOutput.Message.Content)
		}
	}
	if !slices.Equal(calls, []string{"2 + 3 = 5", "4 * 5 = 20"}) {
		t.Fatalf("the remote executor calculated %q in\n  %s", calls, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
	last := evs[len(evs)-1]
	text := last.Output.MessageOutput.Message.Content
	if last.AgentName != "Replanner" || last.Action == nil || last.Action.BreakLoop == nil ||
		!strings.Contains(text, "calculate 2 + 3: [offline model] 2 + 3 = 5") || !strings.Contains(text, "4 * 5 = 20") {
		t.Fatalf("last %s", adktest.Describe(last))
	}
}

func TestSequentialAndParallelOverRemoteAgents(t *testing.T) {
	m := newMesh(t)
	_, research := m.service("research")
	_, writer := m.service("writer")
	_, weather := m.service("weather")
	_, math := m.service("math")
	_, seq := m.gateway(fmt.Sprintf(`
version: 1
agents: {research: %q, writer: %q}
entry: {sequential: {name: Pipeline, steps: [{agent: research}, {agent: writer}]}}
`, research, writer))
	_, par := m.gateway(fmt.Sprintf(`
version: 1
agents: {weather: %q, math: %q}
entry: {parallel: {name: Both, steps: [{agent: weather}, {agent: math}]}}
`, weather, math))
	ctx := context.Background()

	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, seq)}).Query(ctx, "Research the gateway"))
	last := evs[len(evs)-1]
	if last.AgentName != "WriterAgent" || !slices.Equal(last.RunPath, []adk.RunStep{{AgentName: "Mesh"}, {AgentName: "ResearchAgent"}, {AgentName: "WriterAgent"}}) ||
		!strings.Contains(last.Output.MessageOutput.Message.Content, "Building on what ResearchAgent said") {
		t.Fatalf("the writer did not build on the research:\n  %s", strings.Join(adktest.DescribeAll(evs), "\n  "))
	}

	evs = adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote(t, par)}).Query(ctx, "Calculate 6 * 7 in Paris"))
	var answers []string
	for _, ev := range evs {
		if ev.Output != nil && ev.Output.MessageOutput.Role == "assistant" && ev.Output.MessageOutput.Message.Content != "" {
			answers = append(answers, ev.AgentName)
		}
	}
	slices.Sort(answers)
	if !slices.Equal(answers, []string{"MathAgent", "WeatherAgent"}) {
		t.Fatalf("answers from %v in\n  %s", answers, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
}

// An interrupt in a remote worker is resumed through the gateway, even after
// the gateway and then the worker restarted (their tasks were in memory,
// their checkpoints on disk).
func TestInterruptResumedThroughTheGatewayAfterRestarts(t *testing.T) {
	m := newMesh(t)
	_, router := m.service("router")
	writerAddr, gwAddr := freeAddr(t), freeAddr(t)
	writerProc, writer := m.serviceAt("writer", writerAddr)
	topology := fmt.Sprintf(`
version: 1
gateway: {name: Mesh}
agents: {router: %q, writer: %q}
entry: {agent: router, subAgents: [{agent: writer}]}
`, router, writer)
	gwProc, gw := m.gatewayAt(gwAddr, topology)

	ctx := context.Background()
	store, err := checkpoint.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caller := remote(t, gw)
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: caller, CheckPointStore: store})
	evs := adktest.Drain(t, r.Query(ctx, "Ask me who the report is for, then write it", adk.WithCheckPointID("task-1")))
	info := adktest.Interrupted(t, evs)
	p := info.Points[0]
	if p.Agent != "WriterAgent" || !strings.HasPrefix(p.ID, "Mesh/WriterAgent#") {
		t.Fatalf("point %+v in\n  %s", p, strings.Join(adktest.DescribeAll(evs), "\n  "))
	}

	gwProc.stop(true)
	m.gatewayAt(gwAddr, topology)
	writerProc.stop(true)
	m.serviceAt("writer", writerAddr)
	caller.Client().CloseIdleConnections()

	it, err := r.Resume(ctx, "task-1", adk.ResumeWith(p.ID, "the board"))
	if err != nil {
		t.Fatal(err)
	}
	evs = adktest.Drain(t, it)
	last := evs[len(evs)-1]
	if last.AgentName != "WriterAgent" || last.Err != nil ||
		!strings.Contains(last.Output.MessageOutput.Message.Content, "the person answered: the board") {
		t.Fatalf("after the restarts:\n  %s", strings.Join(adktest.DescribeAll(evs), "\n  "))
	}
}

// slowWeather is a weather endpoint that answers only when released, and
// tells when it was asked.
func slowWeather(t *testing.T) (url string, asked <-chan struct{}) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(ch) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = w.Write([]byte("sunny"))
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL, ch
}

func newClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// stream starts a question on the gateway in the background and returns
// the task id as soon as the gateway names it.
func stream(t *testing.T, c *client.Client, text string) (taskID string, done <-chan []client.Event) {
	t.Helper()
	ids := make(chan string, 1)
	out := make(chan []client.Event, 1)
	go func() {
		var evs []client.Event
		for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)}) {
			if err != nil {
				break
			}
			if id, _ := ev.Event.TaskIDs(); id != "" && len(evs) == 0 {
				ids <- id
			}
			evs = append(evs, ev)
		}
		out <- evs
	}()
	select {
	case id := <-ids:
		return id, out
	case <-time.After(30 * time.Second):
		t.Fatal("no task")
	}
	return "", nil
}

func finalState(evs []client.Event) (a2a.TaskState, string) {
	for i := len(evs) - 1; i >= 0; i-- {
		if s, ok := a2a.StateOf(evs[i].Event); ok {
			text := ""
			if u, ok := evs[i].Event.(*a2a.TaskStatusUpdateEvent); ok && u.Status.Message != nil {
				text = u.Status.Message.Text()
			}
			return s, text
		}
	}
	return "", ""
}

// Cancel at the gateway ends the remote tasks CANCELED.
func TestCancelAtTheGateway(t *testing.T) {
	m := newMesh(t)
	endpoint, asked := slowWeather(t)
	_, router := m.service("router")
	_, weather := m.service("weather", "--weather-endpoint", endpoint)
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
agents: {router: %q, weather: %q}
entry: {agent: router, subAgents: [{agent: weather}]}
`, router, weather))
	c := newClient(t, gw)
	id, done := stream(t, c, "What's the weather in Oslo?")
	<-asked
	if _, err := c.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: id}); err != nil {
		t.Fatal(err)
	}
	if s, _ := finalState(<-done); s != a2a.TaskStateCanceled {
		t.Fatalf("the gateway task ended %s", s)
	}
	wc := newClient(t, weather)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := wc.ListTasks(context.Background(), &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tasks) == 1 && res.Tasks[0].Status.State == a2a.TaskStateCanceled {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the weather task: %+v", res.Tasks[0].Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A worker killed mid-stream is a clear failure, in bounded time.
func TestWorkerKilledMidStream(t *testing.T) {
	m := newMesh(t)
	endpoint, asked := slowWeather(t)
	_, router := m.service("router")
	weatherProc, weather := m.service("weather", "--weather-endpoint", endpoint)
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
agents: {router: %q, weather: %q}
entry: {agent: router, subAgents: [{agent: weather}]}
`, router, weather))
	c := newClient(t, gw)
	_, done := stream(t, c, "What's the weather in Oslo?")
	<-asked
	start := time.Now()
	weatherProc.stop(true)
	var evs []client.Event
	select {
	case evs = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("no end a minute after the worker died")
	}
	s, text := finalState(evs)
	if s != a2a.TaskStateFailed || !strings.Contains(text, "WeatherAgent") || !strings.Contains(text, weather) {
		t.Fatalf("ended %s: %s", s, text)
	}
	t.Logf("the failure reached the client %v after the kill", time.Since(start).Round(time.Millisecond))
}

// `a2amesh up` starts the whole mesh on the default addresses, answers
// through the gateway, and stops cleanly on Ctrl-C.
func TestUp(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(binary, "up", "--data-dir", dir, "--nats-port", "-1")
	out := &strings.Builder{}
	var mu sync.Mutex
	cmd.Stdout = writerFunc(func(b []byte) { mu.Lock(); out.Write(b); mu.Unlock() })
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		up := strings.Contains(out.String(), "the mesh is up")
		mu.Unlock()
		if up {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not up:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ask := exec.Command(binary, "ask", "Calculate (17 + 25) * 3")
	answer, err := ask.CombinedOutput()
	if err != nil || !strings.Contains(string(answer), "(17 + 25) * 3 = 126") || !strings.Contains(string(answer), "[MathAgent]") {
		t.Fatalf("ask: %v\n%s", err, answer)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("up ended with %v:\n%s", waitErr, out)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("up did not stop:\n%s", out)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }
