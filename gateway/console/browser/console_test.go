package browser_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/tool"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/router"
	"github.com/a2amesh/a2amesh/services/weather"
)

// bound is how long one step of the browser test may take: the mesh's
// processes share a busy machine with a race-enabled test and a browser.
const bound = time.Minute

// chromium returns Debian's chromium, failing the test without it unless
// A2AMESH_ALLOW_SKIP names chromium.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if strings.Contains(os.Getenv("A2AMESH_ALLOW_SKIP"), "chromium") {
		t.Skip("no chromium on PATH, and A2AMESH_ALLOW_SKIP names chromium")
	}
	t.Fatal("the console's browser test needs Debian's chromium on PATH: apt-get install chromium (or set A2AMESH_ALLOW_SKIP=chromium to skip)")
	return ""
}

// artifacts returns the directory the test keeps its screenshots in:
// $A2AMESH_ARTIFACTS/console, or a new one under the temporary directory.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("A2AMESH_ARTIFACTS")
	var err error
	if dir != "" {
		dir = filepath.Join(dir, "console")
		err = os.MkdirAll(dir, 0o755)
	} else {
		dir, err = os.MkdirTemp("", "a2amesh-console-")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// serveAgent serves agent with its events published to NATS at natsURL,
// until the test ends, and returns its URL.
func serveAgent(t *testing.T, agent adk.Agent, natsURL string) string {
	t.Helper()
	return start(t, func(ctx context.Context) (*serve.Server, error) {
		return serve.New(ctx, agent, serve.Config{State: serve.StateMemory, NATS: serve.NATS{URL: natsURL}, Logger: quiet})
	}).URL()
}

var quiet = slog.New(slog.DiscardHandler)

// apiKey is the key the gated console is given.
const apiKey = "console-test-key-0123456789"

// gate admits apiKey, as alice, and no one else.
func gate(t *testing.T) *auth.Gate {
	t.Helper()
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{{Key: apiKey, Name: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{keys}, Audit: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// start makes a server and serves it until the test ends.
func start(t *testing.T, newServer func(context.Context) (*serve.Server, error)) *serve.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := newServer(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

// refundAgent asks a person to approve each refund before it issues it:
// its run stops in INPUT_REQUIRED with the question (see
// examples/approval).
func refundAgent(t *testing.T) adk.Agent {
	t.Helper()
	refund, err := tool.FromFunc("issue_refund", "Issue a refund of an amount to the customer, after a person approves it",
		func(ctx context.Context, in struct {
			Amount float64 `json:"amount" desc:"the amount to refund, in euros"`
		}) (string, error) {
			answer, resumed := adk.GetResumeData[string](ctx)
			if !resumed {
				return "", adk.Interrupt(ctx, fmt.Sprintf("Refund %.2f EUR? Answer yes or no.", in.Amount))
			}
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "yes") {
				return fmt.Sprintf("refund of %.2f EUR issued", in.Amount), nil
			}
			return "refund not issued", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "RefundAgent", Description: "Issues refunds to customers, with a person's approval",
		Instruction: "You issue refunds with issue_refund.", Model: offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{refund}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// slowAgent runs batch jobs with a tool that works until its run is
// canceled.
func slowAgent(t *testing.T) adk.Agent {
	t.Helper()
	batch, err := tool.FromFunc("run_batch_job", "Run a long batch job over the archive",
		func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
	if err != nil {
		t.Fatal(err)
	}
	a, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{
		Name: "BatchAgent", Description: "Runs long batch jobs over the archive",
		Instruction: "You run batch jobs with run_batch_job.", Model: offline.New(),
		ToolsConfig: adk.ToolsConfig{Tools: []tool.Tool{batch}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// mesh serves a mesh on an embedded NATS server: the router at the entry
// with the weather, refund and batch agents under it, and the gateway
// behind gate (nil: none); it returns the gateway's URL.
func mesh(t *testing.T, gate *auth.Gate) string {
	t.Helper()
	ns, err := embedded.Start(embedded.Config{Dir: t.TempDir(), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Close)
	ctx := context.Background()
	m := offline.New()
	r, err := router.New(ctx, router.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	w, err := weather.New(ctx, weather.Config{Model: m})
	if err != nil {
		t.Fatal(err)
	}
	topo := &gateway.Topology{Version: 1,
		Agents: map[string]string{
			"router":  serveAgent(t, r, ns.URL()),
			"weather": serveAgent(t, w, ns.URL()),
			"refunds": serveAgent(t, refundAgent(t), ns.URL()),
			"batch":   serveAgent(t, slowAgent(t), ns.URL()),
		},
		Entry: &gateway.Node{Agent: "router", SubAgents: []*gateway.Node{{Agent: "weather"}, {Agent: "refunds"}, {Agent: "batch"}}},
	}
	topo.Gateway.Name = "Mesh"
	gw := start(t, func(ctx context.Context) (*serve.Server, error) {
		return gateway.New(ctx, topo, gateway.Config{Serve: serve.Config{NATS: serve.NATS{URL: ns.URL()}, State: serve.StateMemory, Gate: gate, Logger: quiet}})
	})
	return gw.URL()
}

// browser is a headless chromium tab, and where its screenshots go.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

// newBrowser starts chromium until the test ends.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromium(t)
	b := &browser{t: t, shots: artifacts(t)}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	// The first run starts the browser, which lives as long as its
	// context: no timeout on that one.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", exe, err)
	}
	b.ctx = ctx
	return b
}

// step runs actions within the bound, then saves a screenshot named name;
// on failure, one named name-failed, and the page goes in the failure.
func (b *browser) step(name string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, bound)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		hctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
		defer cancel()
		page, _ := chromedp.Run(hctx, chromedp.OuterHTML(chromedp.CSS("main")))
		b.shot(name + "-failed")
		b.t.Fatalf("%s: %v\nthe page:\n%s", name, err, page)
	}
	b.shot(name)
}

// text returns the text of the first element css selects.
func (b *browser) text(css string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, bound)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
	if err != nil {
		b.t.Fatalf("the text of %s: %v", css, err)
	}
	return s
}

// shot saves a screenshot of the page.
func (b *browser) shot(name string) {
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(b.shots, b.t.Name()+"-"+name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}

// ask sends text from the ask box.
func ask(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.SetValue(chromedp.ID("ask-input"), text),
		chromedp.Click(chromedp.ID("ask-send")),
	)
}

func visible(css string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(css))
}

// state waits until the asked task is in state s.
func state(s string) chromedp.Action[chromedp.Void] {
	return visible(`#ask-state[data-state="` + s + `"]`)
}

// The console in a real browser: it shows the topology with every agent
// ready, asks a question and streams the answer while the tree grows with
// the router and the worker, answers an agent's question
// (INPUT_REQUIRED), cancels a slow task, lists the tasks and follows every
// agent's events; a screenshot after each step.
func TestConsoleInBrowser(t *testing.T) {
	b := newBrowser(t)
	gw := mesh(t, nil)
	step, text := b.step, b.text

	step("01-topology",
		chromedp.Navigate(strings.TrimSuffix(gw, "/")+"/console/"),
		visible(`.node[data-agent="router"][data-ready="yes"]`),
		visible(`.node[data-agent="weather"][data-ready="yes"]`),
		visible(`.node[data-agent="refunds"][data-ready="yes"]`),
		visible(`.node[data-agent="batch"][data-ready="yes"]`),
		visible(`#events-status[data-open="yes"]`),
	)

	step("02-ask",
		ask("What's the weather in Beijing?"),
		state("TASK_STATE_COMPLETED"),
		visible(`#tree li[data-agent="RouterAgent"] li[data-agent="WeatherAgent"]`),
	)
	if answer := text("#answer"); !strings.Contains(answer, "Beijing") {
		t.Errorf("the answer %q does not mention Beijing", answer)
	}

	step("03-input-required",
		chromedp.Click(chromedp.ID("ask-new")),
		ask("Please issue a refund of 42.50 euros"),
		state("TASK_STATE_INPUT_REQUIRED"),
		visible("#prompt"),
	)
	if prompt := text("#prompt-text"); !strings.Contains(prompt, "Refund 42.50 EUR?") {
		t.Errorf("the prompt %q does not ask to approve the refund", prompt)
	}
	step("04-answered",
		ask("yes"),
		state("TASK_STATE_COMPLETED"),
		visible(`#tree li[data-agent="RefundAgent"]`),
	)
	if answer := text("#answer"); !strings.Contains(answer, "refund of 42.50 EUR issued") {
		t.Errorf("the answer after approval %q does not say the refund was issued", answer)
	}
	refundTask := strings.TrimPrefix(text("#tree-task"), "task ")
	// The streamed answer's chunks make one step of the worker's.
	if steps := text(`#tree li[data-agent="RefundAgent"] .steps`); !strings.Contains(steps, "[offline model] refund of 42.50 EUR issued") {
		t.Errorf("the refund agent's steps in the tree:\n%s\nwant its whole answer", steps)
	}

	step("05-canceled",
		chromedp.Click(chromedp.ID("ask-new")),
		ask("Run the long batch job over the archive"),
		visible(`#tree li[data-agent="BatchAgent"]`),
		chromedp.Click(chromedp.ID("ask-cancel")),
		state("TASK_STATE_CANCELED"),
	)

	// A task from the list: its tree again, from its events on NATS.
	step("06-task-from-the-list",
		chromedp.Click(chromedp.ID("tasks-refresh")),
		chromedp.Click(chromedp.CSS(`#tasks tr[data-task="`+refundTask+`"]`)),
		visible(`#tree li[data-agent="RouterAgent"] li[data-agent="RefundAgent"]`),
	)
	if steps := text(`#tree li[data-agent="RefundAgent"] .steps`); !strings.Contains(steps, "[offline model] refund of 42.50 EUR issued") {
		t.Errorf("the listed refund task's tree:\n%s\nwant the refund agent's whole answer", steps)
	}

	step("07-tasks-and-events",
		chromedp.Click(chromedp.ID("tasks-refresh")),
		visible(`#tasks td.state.TASK_STATE_CANCELED`),
		visible(`#tasks td.state.TASK_STATE_COMPLETED`),
		visible(`#events li[data-agent="WeatherAgent"]`),
		visible(`#events li[data-agent="BatchAgent"]`),
	)
}

// Behind the gateway's gate, the console shows nothing until it is given
// a credential; with one, it lists the topology, asks and follows the
// events as the caller it names.
func TestConsoleBehindAGate(t *testing.T) {
	b := newBrowser(t)
	gw := mesh(t, gate(t))
	b.step("01-refused",
		chromedp.Navigate(strings.TrimSuffix(gw, "/")+"/console/"),
		visible("#topology .error"),
	)
	if msg := b.text("#topology .error"); !strings.Contains(msg, "ConsoleTopology") {
		t.Errorf("the console says %q, want the gate's refusal", msg)
	}
	if msg := b.text("#events-status"); !strings.HasPrefix(msg, "not following") {
		t.Errorf("the events feed says %q, want it closed", msg)
	}
	b.step("02-credentials",
		chromedp.Click(chromedp.CSS("#credentials summary")),
		chromedp.SetValue(chromedp.ID("cred-header"), "X-API-Key"),
		chromedp.SetValue(chromedp.ID("cred-value"), apiKey),
		chromedp.Click(chromedp.ID("cred-save")),
		visible(`.node[data-agent="weather"][data-ready="yes"]`),
		visible(`#events-status[data-open="yes"]`),
	)
	b.step("03-ask",
		ask("What's the weather in Beijing?"),
		state("TASK_STATE_COMPLETED"),
		visible(`#tree li[data-agent="RouterAgent"] li[data-agent="WeatherAgent"]`),
		visible(`#tasks td.state.TASK_STATE_COMPLETED`),
		visible(`#events li[data-agent="WeatherAgent"]`),
	)
}
