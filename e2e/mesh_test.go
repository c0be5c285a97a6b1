package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
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
	overEveryBinding(t, testRouterToWeatherAndTheFailedRoute)
}

func testRouterToWeatherAndTheFailedRoute(t *testing.T, m *mesh) {
	_, router := m.service("router")
	_, weather := m.service("weather")
	_, chat := m.service("chat")
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Mesh}
agents: {router: %q, weather: %q, chat: %q}
entry: {agent: router, subAgents: [{agent: weather}, {agent: chat}]}
`, router, weather, chat))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: m.remote(gw)})
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

	// Every event went to NATS, in order, per task, and nothing else:
	// what the stream holds of each task is exactly what its agent's own
	// log replays, event for event.
	eventsOn(t, ctx, m, map[string]string{"Mesh": gw, "RouterAgent": router, "WeatherAgent": weather, "ChatAgent": chat})
}

// eventsOn checks that the mesh's NATS events stream holds every event of
// every task of the agents (card name: URL), in order, and no other: for
// each task the events its agent replays from its own log (SubscribeToTask
// after event 0), the same events with the same numbers.
func eventsOn(t *testing.T, ctx context.Context, m *mesh, agents map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	encode := func(ev a2a.Event) string {
		b, err := a2a.AppendJSON(nil, a2a.Wrap(ev))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := map[string][]string{} // agent/task: its events, in order
	total := 0
	for agent, url := range agents {
		c := newClient(t, url)
		list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
		if err != nil {
			t.Fatalf("ListTasks on %s: %v", agent, err)
		}
		for _, task := range list.Tasks {
			key := agent + "/" + task.ID
			for ev, err := range c.Resubscribe(ctx, task.ID, "0") {
				if err != nil {
					t.Fatalf("%s's log: %v", key, err)
				}
				if ev.ID != strconv.Itoa(len(want[key])+1) {
					t.Fatalf("%s's log: event %s after %d", key, ev.ID, len(want[key]))
				}
				want[key] = append(want[key], encode(ev.Event))
			}
			total += len(want[key])
		}
	}
	nc, js, err := natsstore.Connect(ctx, m.nats, natsstore.ConnConfig{Name: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The services publish what they log within natsstore.PublishDelay
	// (20 ms): a few seconds is plenty to read it all.
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	got := map[string][]string{}
	n := 0
	for we, err := range natsstore.Watch(wctx, js, time.Now().Add(-time.Hour)) {
		if err != nil {
			t.Fatal(err)
		}
		key := we.Agent + "/" + we.TaskID
		if we.Seq != uint64(len(got[key])+1) {
			t.Fatalf("%s: event %d after %d", key, we.Seq, len(got[key]))
		}
		got[key] = append(got[key], encode(we.Event))
		if n++; n == total {
			break
		}
	}
	if n != total {
		t.Fatalf("NATS has %d of the %d events the agents logged (%d tasks)", n, total, len(want))
	}
	for key, evs := range want {
		if !slices.Equal(got[key], evs) {
			t.Fatalf("%s: NATS has\n  %s\nits agent logged\n  %s", key, strings.Join(got[key], "\n  "), strings.Join(evs, "\n  "))
		}
	}
	if len(got) != len(want) {
		t.Fatalf("NATS has events of %d tasks, the agents logged %d", len(got), len(want))
	}
	st, err := js.Stream(ctx, natsstore.EventsStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(total) {
		t.Fatalf("the stream holds %d messages; want the %d events", info.State.Msgs, total)
	}
	t.Logf("NATS holds the %d events of the %d tasks, as their agents logged them", total, len(want))
}

func TestSupervisorReportAcrossProcesses(t *testing.T) {
	overEveryBinding(t, testSupervisorReportAcrossProcesses)
}

func testSupervisorReportAcrossProcesses(t *testing.T, m *mesh) {
	_, research := m.service("research")
	_, writer := m.service("writer")
	_, sup := m.service("supervisor", "--research-url", research, "--writer-url", writer)
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Reports}
agents: {supervisor: %q}
entry: {agent: supervisor}
`, sup))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: m.remote(gw)}).Query(ctx, "Research checkpoints and write a report"))
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
	overEveryBinding(t, testPlanExecuteWithARemoteExecutor)
}

func testPlanExecuteWithARemoteExecutor(t *testing.T, m *mesh) {
	_, math := m.service("math")
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
gateway: {name: Plans}
agents: {math: %q}
entry: {planExecute: {name: TripPlanner, executor: {agent: math}, maxIterations: 5}}
`, math))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: m.remote(gw)}).Query(ctx, "Plan: calculate 2 + 3, then calculate 4 * 5"))
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
		text != "[offline model] calculate 2 + 3: 2 + 3 = 5\ncalculate 4 * 5: 4 * 5 = 20" {
		t.Fatalf("last %s", adktest.Describe(last))
	}
}

func TestSequentialAndParallelOverRemoteAgents(t *testing.T) {
	overEveryBinding(t, testSequentialAndParallelOverRemoteAgents)
}

func testSequentialAndParallelOverRemoteAgents(t *testing.T, m *mesh) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: m.remote(seq)}).Query(ctx, "Research the gateway"))
	last := evs[len(evs)-1]
	if last.AgentName != "WriterAgent" || !slices.Equal(last.RunPath, []adk.RunStep{{AgentName: "Mesh"}, {AgentName: "ResearchAgent"}, {AgentName: "WriterAgent"}}) ||
		!strings.Contains(last.Output.MessageOutput.Message.Content, "Building on what ResearchAgent said") {
		t.Fatalf("the writer did not build on the research:\n  %s", strings.Join(adktest.DescribeAll(evs), "\n  "))
	}

	evs = adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: m.remote(par)}).Query(ctx, "Calculate 6 * 7 in Paris"))
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
	overEveryBinding(t, testInterruptResumedThroughTheGatewayAfterRestarts)
}

func testInterruptResumedThroughTheGatewayAfterRestarts(t *testing.T, m *mesh) {
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

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	store, err := checkpoint.NewFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	caller := m.remote(gw)
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(ctx, url, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// stream starts a question on the gateway in the background and returns
// the task id as soon as the gateway names it; the stream ends with ctx
// at the latest.
func stream(t *testing.T, ctx context.Context, c *client.Client, text string) (taskID string, done <-chan []client.Event) {
	t.Helper()
	ids := make(chan string, 1)
	out := make(chan []client.Event, 1)
	go func() {
		var evs []client.Event
		for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)}) {
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

// within waits for ch to close, failing the test after limit.
func within(t *testing.T, ch <-chan struct{}, limit time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(limit):
		t.Fatalf("waited %v for %s", limit, what)
	}
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
func TestCancelAtTheGateway(t *testing.T) { overEveryBinding(t, testCancelAtTheGateway) }

func testCancelAtTheGateway(t *testing.T, m *mesh) {
	endpoint, asked := slowWeather(t)
	_, router := m.service("router")
	_, weather := m.service("weather", "--weather-endpoint", endpoint)
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
agents: {router: %q, weather: %q}
entry: {agent: router, subAgents: [{agent: weather}]}
`, router, weather))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := newClient(t, gw)
	id, done := stream(t, ctx, c, "What's the weather in Oslo?")
	within(t, asked, 30*time.Second, "the weather tool to be called")
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case evs := <-done:
		if s, _ := finalState(evs); s != a2a.TaskStateCanceled {
			t.Fatalf("the gateway task ended %s", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gateway's stream goes on 10 s after the cancel")
	}
	wc := newClient(t, weather)
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := wc.ListTasks(ctx, &a2a.ListTasksRequest{})
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
func TestWorkerKilledMidStream(t *testing.T) { overEveryBinding(t, testWorkerKilledMidStream) }

func testWorkerKilledMidStream(t *testing.T, m *mesh) {
	endpoint, asked := slowWeather(t)
	_, router := m.service("router")
	weatherProc, weather := m.service("weather", "--weather-endpoint", endpoint)
	_, gw := m.gateway(fmt.Sprintf(`
version: 1
agents: {router: %q, weather: %q}
entry: {agent: router, subAgents: [{agent: weather}]}
`, router, weather))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := newClient(t, gw)
	_, done := stream(t, ctx, c, "What's the weather in Oslo?")
	within(t, asked, 30*time.Second, "the weather tool to be called")
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
