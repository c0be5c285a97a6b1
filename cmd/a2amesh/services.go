package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/chat"
	"github.com/a2amesh/a2amesh/services/conformance"
	"github.com/a2amesh/a2amesh/services/echo"
	mathagent "github.com/a2amesh/a2amesh/services/math"
	"github.com/a2amesh/a2amesh/services/planner"
	"github.com/a2amesh/a2amesh/services/research"
	"github.com/a2amesh/a2amesh/services/router"
	supervisoragent "github.com/a2amesh/a2amesh/services/supervisor"
	"github.com/a2amesh/a2amesh/services/weather"
	"github.com/a2amesh/a2amesh/services/writer"
)

// service is an agent `a2amesh serve NAME` serves: its flags (beside the
// serving flags every service shares) and how they make the agent.
type service struct {
	name, summary string
	// addr is where it listens by default.
	addr string
	// setup defines the service's own flags and returns what builds its
	// agent once they are parsed.
	setup func(f *cli.Flags) build
}

// build makes a service's agent.
type build func(ctx context.Context, env *env) (adk.Agent, error)

// env is what a build gets.
type env struct {
	model model.ChatModel
	// remote returns the agent at url, waiting while it starts.
	remote func(ctx context.Context, url string) (*bridge.RemoteAgent, error)
}

// meshServices lists the mesh's agent services, in the order `a2amesh up`
// starts them (agents before the agents that call them).
func meshServices() []service {
	return []service{
		{name: "weather", summary: "answers weather questions", addr: "127.0.0.1:9102", setup: func(f *cli.Flags) build {
			endpoint := f.String("weather-endpoint", "", "HTTP endpoint answering GET ?city=<city> with the weather (empty: offline)")
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				return weather.New(ctx, weather.Config{Model: e.model, Endpoint: *endpoint})
			}
		}},
		{name: "chat", summary: "chats", addr: "127.0.0.1:9103", setup: func(*cli.Flags) build {
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				return chat.New(ctx, chat.Config{Model: e.model})
			}
		}},
		{name: "math", summary: "calculates", addr: "127.0.0.1:9104", setup: func(*cli.Flags) build {
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				return mathagent.New(ctx, mathagent.Config{Model: e.model})
			}
		}},
		{name: "research", summary: "researches topics in a document corpus", addr: "127.0.0.1:9105", setup: func(f *cli.Flags) build {
			dir := f.String("corpus", "", "directory of .md and .txt documents to search (empty: the project's own docs)")
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				cfg := research.Config{Model: e.model}
				if *dir != "" {
					cfg.Corpus = os.DirFS(*dir)
				}
				return research.New(ctx, cfg)
			}
		}},
		{name: "writer", summary: "writes reports", addr: "127.0.0.1:9106", setup: func(*cli.Flags) build {
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				return writer.New(ctx, writer.Config{Model: e.model})
			}
		}},
		{name: "supervisor", summary: "supervises research and writing", addr: "127.0.0.1:9107", setup: func(f *cli.Flags) build {
			researchURL := f.String("research-url", "http://127.0.0.1:9105/", "the research agent")
			writerURL := f.String("writer-url", "http://127.0.0.1:9106/", "the writer agent")
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				agents, err := e.remotes(ctx, *researchURL, *writerURL)
				if err != nil {
					return nil, err
				}
				return supervisoragent.New(ctx, supervisoragent.Config{Model: e.model, Research: agents[0], Writer: agents[1]})
			}
		}},
		{name: "planner", summary: "plans and executes multi-step tasks", addr: "127.0.0.1:9108", setup: func(f *cli.Flags) build {
			mathURL := f.String("math-url", "http://127.0.0.1:9104/", "the math agent, used as a tool (empty: calculate in-process)")
			researchURL := f.String("research-url", "http://127.0.0.1:9105/", "the research agent, used as a tool (empty: search in-process)")
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				agents, err := e.remotes(ctx, *mathURL, *researchURL)
				if err != nil {
					return nil, err
				}
				return planner.New(ctx, planner.Config{Model: e.model, Math: agents[0], Research: agents[1]})
			}
		}},
		{name: "router", summary: "routes requests to the agents that can answer them", addr: "127.0.0.1:9101", setup: func(f *cli.Flags) build {
			urls := f.String("agents", "", "comma-separated URLs of the agents to route to (empty: those a caller offers)")
			return func(ctx context.Context, e *env) (adk.Agent, error) {
				agents, err := e.remotes(ctx, cli.SplitList(*urls)...)
				if err != nil {
					return nil, err
				}
				return router.New(ctx, router.Config{Model: e.model, Agents: agents})
			}
		}},
	}
}

// remotes returns the agents at urls; an empty URL gives a nil agent (the
// service's in-process stand-in).
func (e *env) remotes(ctx context.Context, urls ...string) ([]adk.Agent, error) {
	out := make([]adk.Agent, len(urls))
	for i, u := range urls {
		if u == "" {
			continue
		}
		a, err := e.remote(ctx, u)
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// findService returns the mesh service named name.
func findService(name string) (service, bool) {
	for _, s := range meshServices() {
		if s.name == name {
			return s, true
		}
	}
	return service{}, false
}

// serviceNames lists what `a2amesh serve` serves.
func serviceNames() []string {
	var out []string
	for _, s := range meshServices() {
		out = append(out, s.name)
	}
	for _, s := range executorServices() {
		out = append(out, s.name)
	}
	return out
}

// envPrefix is the prefix of a service's flags' environment variables.
func envPrefix(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) }

// serveService runs `a2amesh serve NAME args...`.
func serveService(ctx context.Context, name string, args []string, stdout io.Writer) error {
	for _, s := range executorServices() {
		if s.name == name {
			return serveExecutor(ctx, s, args, stdout)
		}
	}
	def, ok := findService(name)
	if !ok {
		return fmt.Errorf("no service %q; the services are %s", name, strings.Join(serviceNames(), ", "))
	}
	f := cli.NewFlags(def.name, envPrefix(def.name))
	sf := cli.DefineServe(f, def.addr)
	build := def.setup(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	log, cfg, done, err := serveConfig(ctx, sf, def.name)
	if err != nil {
		return err
	}
	defer done()
	m, err := sf.Model(log)
	if err != nil {
		return err
	}
	hops, err := gateway.ParseBindings(sf.HopBindings()...)
	if err != nil {
		return fmt.Errorf("--hop-bindings: %w", err)
	}
	creds, err := sf.HopCredentials()
	if err != nil {
		return err
	}
	// Listen first: while the agent waits for the agents it calls, its
	// port says it is alive and not ready.
	ln, err := net.Listen("tcp", cmp.Or(cfg.Addr, "127.0.0.1:0"))
	if err != nil {
		return err
	}
	cfg.Listener, cfg.Addr = ln, ""
	var w waiting
	release := serve.Hold(ln, w.String)
	e := &env{model: m, remote: func(ctx context.Context, url string) (*bridge.RemoteAgent, error) {
		defer w.add(url)()
		return bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: url, Wait: *sf.Wait, Bindings: hops, Credentials: creds})
	}}
	agent, err := build(ctx, e)
	release()
	if err != nil {
		ln.Close()
		return fmt.Errorf("build the agent: %w", err)
	}
	s, err := serve.New(ctx, agent, cfg)
	if err != nil {
		return err
	}
	return serveUntilDone(ctx, s, def.name, sf, log, stdout)
}

// waiting lists the agents a service is waiting for, for its /readyz.
type waiting struct {
	mu   sync.Mutex
	urls []string
}

// add notes that url is waited for, until the function it returns is
// called.
func (w *waiting) add(url string) (done func()) {
	w.mu.Lock()
	w.urls = append(w.urls, url)
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.urls = slices.DeleteFunc(w.urls, func(u string) bool { return u == url })
	}
}

func (w *waiting) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.urls) == 0 {
		return "building the agent"
	}
	return "waiting for the agents it calls: " + strings.Join(w.urls, ", ")
}

// serveConfig checks the serving flags and sets up the process for them,
// its Telemetry included (cli.Telemetry); the caller calls done when it
// has served.
func serveConfig(ctx context.Context, sf *cli.ServeFlags, name string) (_ *slog.Logger, _ serve.Config, done func(), _ error) {
	log, err := sf.Logger()
	if err != nil {
		return nil, serve.Config{}, nil, err
	}
	log = log.With("service", name)
	cfg, err := sf.Config(log)
	if err != nil {
		return nil, cfg, nil, err
	}
	cfg.Service = name
	if cfg.Telemetry, done, err = cli.Telemetry(ctx, name, log); err != nil {
		return nil, cfg, nil, err
	}
	cli.TuneProcess(log)
	return log, cfg, done, nil
}

// serveUntilDone serves s until ctx ends, saying so on stdout when it is ready.
func serveUntilDone(ctx context.Context, s *serve.Server, name string, sf *cli.ServeFlags, log *slog.Logger, stdout io.Writer) error {
	cli.ServeDebug(ctx, sf.DebugAddr(), log)
	fmt.Fprintf(stdout, "%s ready at %s\n", name, s.URL())
	return s.Serve(ctx)
}

// executorService is a service written as an A2A executor (against
// a2a/server) rather than an adk.Agent; it needs no model.
type executorService struct {
	name, addr string
	// setup defines the service's own flags and returns what makes its
	// executor once they are parsed.
	setup func(f *cli.Flags) func() server.AgentExecutor
	card  *a2a.AgentCard
}

// executorServices lists the executor services: the echo agent, the
// protocol benchmark's subject, and the conformance agent, the A2A
// conformance kit's subject.
func executorServices() []executorService {
	return []executorService{
		{name: "echo", addr: "127.0.0.1:9001", card: echo.Card(""), setup: func(f *cli.Flags) func() server.AgentExecutor {
			// Runs of minutes hold thousands of tasks and streams open at
			// once at a low event rate (a2aload streams).
			interval := f.Duration("slow-interval", 0, "time between the 20 chunks of a \"slow:\" run, which works 20 times this long (0: 250 ms)")
			return func() server.AgentExecutor { return &echo.Executor{SlowInterval: *interval} }
		}},
		{name: "conformance", addr: "127.0.0.1:9009", card: conformance.Card(""), setup: func(*cli.Flags) func() server.AgentExecutor {
			return func() server.AgentExecutor { return new(conformance.Executor) }
		}},
	}
}

// serveExecutor serves an executor service.
func serveExecutor(ctx context.Context, def executorService, args []string, stdout io.Writer) error {
	f := cli.NewFlags(def.name, envPrefix(def.name))
	sf := cli.DefineServe(f, def.addr)
	exec := def.setup(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	log, cfg, done, err := serveConfig(ctx, sf, def.name)
	if err != nil {
		return err
	}
	defer done()
	s, err := serve.NewExecutor(ctx, exec(), def.card, cfg)
	if err != nil {
		return err
	}
	return serveUntilDone(ctx, s, def.name, sf, log, stdout)
}
