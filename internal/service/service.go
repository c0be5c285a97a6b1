// Package service runs an ADK agent as an a2amesh service: an A2A server
// (JSON-RPC and SSE on Hertz) with its card, checkpoints for interrupted
// tasks, every task event published to NATS when a server is named, the
// model chosen by flags (the offline model when none is configured), and
// flags with environment fallbacks.
package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/model/openai"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
)

// Def describes a service.
type Def struct {
	// Name is the service's command name ("weather").
	Name    string
	Summary string
	// Addr is the default listen address.
	Addr string
	// Setup defines the service's own flags and returns what builds its
	// agent once they are parsed.
	Setup func(f *cli.Flags) Build
}

// Build makes a service's agent.
type Build func(ctx context.Context, env *Env) (adk.Agent, error)

// Env is what a Build gets.
type Env struct {
	Model model.ChatModel
	Log   *slog.Logger
	// Remote returns the agent at url, waiting while it starts.
	Remote func(ctx context.Context, url string) (*bridge.RemoteAgent, error)
}

// Main runs def as the process's command and exits.
func Main(def Def) {
	ctx, stop := cli.SignalContext()
	err := Run(ctx, def, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", def.Name, err)
		os.Exit(1)
	}
}

// Common holds the flags every service and the gateway share.
type Common struct {
	Addr, PublicURL, NATS, State, DataDir, LogLevel, DebugAddr *string
	Retention, CommitDelay, Wait, Heartbeat                    *time.Duration
	OpenAIBaseURL, OpenAIModel, OpenAIKey                      *string
	// PushAllow is the SSRF guard's allowlist for push webhooks.
	PushAllow *string
	// Retention on NATS.
	EventsMaxAge, TasksMaxAge *time.Duration
	EventsPerTask             *int
	Limits                    *cli.LimitFlags

	flags *cli.Flags
}

// commitDelay is --commit-delay, whose default depends on --state: a group
// of events committed together saves JetStream writes, while in memory a
// commit costs less than the timer that would gather its group.
func (c *Common) commitDelay() time.Duration {
	if c.flags.Given("commit-delay") || *c.State != "nats" {
		return *c.CommitDelay
	}
	return natsstore.CommitDelay
}

// events is the events stream's configuration the flags give.
func (c *Common) events() natsstore.EventsConfig {
	return natsstore.EventsConfig{MaxAge: *c.EventsMaxAge, MaxPerTask: int64(*c.EventsPerTask)}
}

// CommonFlags defines the shared flags on f.
func CommonFlags(f *cli.Flags, addr string) *Common {
	return &Common{
		flags:     f,
		Addr:      f.String("addr", addr, "address to listen on"),
		PublicURL: f.String("public-url", "", "URL to put in the agent card (default http://<addr>/)"),
		NATS:      f.StringEnv("nats", "NATS_URL", "", "NATS server to publish task events to (empty: none)"),
		State: f.StringEnv("state", "A2AMESH_STATE", "memory",
			"where tasks, their events, webhooks and checkpoints live: memory (this process; events also published to --nats) or nats (JetStream on --nats, durable and shared by the agent's replicas)"),
		DataDir:   f.StringEnv("data-dir", "A2AMESH_DATA_DIR", "", "directory for checkpoints of interrupted tasks (empty: in memory)"),
		LogLevel:  f.StringEnv("log-level", "A2AMESH_LOG_LEVEL", "info", "log level: debug, info, warn or error"),
		DebugAddr: f.String("debug-addr", "", "address for /debug/pprof/ (empty: off)"),
		Retention: f.Duration("retention", 10*time.Minute, "how long finished tasks are kept, and a conversation after its last turn"),
		CommitDelay: f.DurationEnv("commit-delay", "A2AMESH_COMMIT_DELAY", 0,
			"how long a task event may wait to be stored with the ones after it, one write for the group (a stream sees it this much later at most; 0: each event at once); default 0 in memory, "+natsstore.CommitDelay.String()+" with --state nats"),
		Wait: f.Duration("wait", 60*time.Second, "how long to wait for the agents this one calls to come up"),
		Heartbeat: f.Duration("heartbeat", 10*time.Second,
			"with --state nats: how long a replica may miss its heartbeat before the other replicas fail its running tasks (they do within about twice this)"),
		EventsMaxAge: f.DurationEnv("events-max-age", "A2AMESH_EVENTS_MAX_AGE", 24*time.Hour,
			"how long the NATS events stream keeps task events; the stream is the mesh's, so give every process the same value"),
		EventsPerTask: f.IntEnv("events-per-task", "A2AMESH_EVENTS_PER_TASK", 0,
			"most events the NATS events stream keeps per task, the oldest dropped first (0: no limit); same for every process"),
		TasksMaxAge: f.DurationEnv("tasks-max-age", "A2AMESH_TASKS_MAX_AGE", 0,
			"with --state nats: drop a task that has not changed for this long, such as one whose replica died before deleting it (0: keep until deleted); same for every process"),
		PushAllow: f.StringEnv("push-allow", "A2AMESH_PUSH_ALLOW", "",
			"comma-separated CIDR prefixes, IP addresses and host names, each IP or name optionally with :port, that push webhooks may reach despite the SSRF guard (e.g. 127.0.0.0/8,hooks.internal:8443)"),
		OpenAIBaseURL: f.StringEnv("openai-base-url", "OPENAI_BASE_URL", "", "OpenAI-compatible endpoint (empty, with no key: the offline model)"),
		OpenAIModel:   f.StringEnv("openai-model", "OPENAI_MODEL", "", "model name"),
		OpenAIKey:     f.StringEnv("openai-api-key", "OPENAI_API_KEY", "", "API key"),
		Limits:        cli.ServerLimits(f),
	}
}

// Check reports a shared flag that parses but cannot be used, such as a
// bad --push-allow entry, so that a command stops at once, before it
// waits for other agents or serves.
func (c *Common) Check() error {
	_, err := c.pushSender(nil)
	return err
}

// pushSender returns the push notification sender the flags configure.
func (c *Common) pushSender(log *slog.Logger) (*push.Sender, error) {
	s := &push.Sender{Guard: netguard.Guard{Allow: cli.SplitList(*c.PushAllow)}, Logger: log}
	if err := s.Guard.Validate(); err != nil {
		return nil, fmt.Errorf("--push-allow: %w", err)
	}
	return s, nil
}

// Model returns the configured model: an OpenAI-compatible endpoint, or the
// offline model, said so in the log.
func (c *Common) Model(log *slog.Logger) (model.ChatModel, error) {
	if *c.OpenAIBaseURL == "" && *c.OpenAIKey == "" {
		log.Info("using the offline model: deterministic rules, not a language model; set OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL to use one")
		return offline.New(), nil
	}
	m, err := openai.New(openai.Config{BaseURL: *c.OpenAIBaseURL, Model: *c.OpenAIModel, APIKey: *c.OpenAIKey})
	if err != nil {
		return nil, err
	}
	log.Info("using an OpenAI-compatible model", "base_url", *c.OpenAIBaseURL, "model", *c.OpenAIModel)
	return m, nil
}

// Serve is what a service serves.
type Serve struct {
	Name  string
	Agent adk.Agent
	// CardName and CardDescription, when set, present the agent under
	// another name (a gateway presents a composition as the mesh).
	CardName, CardDescription string
}

// Run parses args for def and serves its agent until ctx ends.
func Run(ctx context.Context, def Def, args []string, stdout io.Writer) error {
	f := cli.NewFlags(def.Name, strings.ToUpper(strings.ReplaceAll(def.Name, "-", "_")))
	common := CommonFlags(f, def.Addr)
	build := def.Setup(f)
	if err := f.Parse(args); err != nil {
		return err
	}
	if err := common.Check(); err != nil {
		return err
	}
	log, err := cli.Logger(*common.LogLevel)
	if err != nil {
		return err
	}
	log = log.With("service", def.Name)
	m, err := common.Model(log)
	if err != nil {
		return err
	}
	env := &Env{Model: m, Log: log, Remote: func(ctx context.Context, url string) (*bridge.RemoteAgent, error) {
		return bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: url, Wait: *common.Wait})
	}}
	agent, err := build(ctx, env)
	if err != nil {
		return fmt.Errorf("build the agent: %w", err)
	}
	return ServeAgent(ctx, common, Serve{Name: def.Name, Agent: agent}, log, stdout)
}

// GCPercent is the GOGC a service runs with unless the GOGC environment
// variable says otherwise. An agent server keeps little live data, so
// Go's default of 100 collects very often; 200 lets the heap grow to
// three times the live data instead of two, and takes a hop's added p99
// latency from about 0.9 ms to 0.2-0.5 ms (docs/benchmarks.md). Where
// memory is capped, set GOMEMLIMIT too (deploy/k8s does).
const GCPercent = 200

// ServeAgent serves an agent as an A2A server until ctx ends.
func ServeAgent(ctx context.Context, common *Common, s Serve, log *slog.Logger, stdout io.Writer) error {
	sender, err := common.pushSender(log)
	if err != nil {
		return err
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
	cli.RouteHertzLogs(log)
	ln, err := net.Listen("tcp", *common.Addr)
	if err != nil {
		return err
	}
	url := *common.PublicURL
	if url == "" {
		url = "http://" + ln.Addr().String() + "/"
	}

	name := s.Agent.Name(ctx)
	if s.CardName != "" {
		name = s.CardName
	}
	st, err := openState(ctx, common, s.Name, name, log)
	if err != nil {
		ln.Close()
		return err
	}
	defer st.close()
	if st.conn != nil {
		// Every request needs the stores: once nats.go has given up on the
		// connection, stop serving (and exit non-zero, below) so that
		// whatever runs the process starts a new one, rather than stay up
		// failing every request.
		var stop context.CancelFunc
		ctx, stop = st.conn.Context(ctx)
		defer stop()
	}
	// The executor reads the server's tasks (to resume a lost one from its
	// checkpoint), and forgets a conversation when its last task goes.
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: s.Agent, CheckPointStore: st.checkpoints, Tasks: st.tasks,
		Conversations: &bridge.MemoryConversations{MaxAge: *common.Retention}, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	card := bridge.Card(ctx, s.Agent, url)
	if s.CardName != "" {
		card.Name, card.Skills[0].ID, card.Skills[0].Name = s.CardName, s.CardName, s.CardName
	}
	if s.CardDescription != "" {
		card.Description, card.Skills[0].Description = s.CardDescription, s.CardDescription
	}
	cfg := server.Config{Card: card, Executor: exec, Tasks: st.tasks, Events: st.events, PushConfigs: st.push,
		PushSender: sender, Retention: st.retention, CommitDelay: common.commitDelay(), Limits: common.Limits.Limits(), Logger: log}
	cfg.Limits.MaxTaskBytes = st.maxTaskBytes
	if st.replicas != nil {
		cfg.Replicas = st.replicas
	}
	h, err := server.New(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	if st.replicas != nil {
		defer st.replicas.Start(ctx, h)()
	}
	srv, err := jsonrpcserver.New(h, jsonrpcserver.Options{AllowedHosts: common.Limits.Hosts(), Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	cli.ServeDebug(ctx, *common.DebugAddr, log)
	log.Info("serving", "agent", s.Agent.Name(ctx), "url", url, "nats", *common.NATS, "state", *common.State)
	fmt.Fprintf(stdout, "%s ready at %s\n", s.Name, url)
	serveErr := srv.Serve(ctx, ln, 2*time.Second)
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Close(closeCtx); err != nil {
		log.Warn("closing the agent", "err", err)
	}
	if err := context.Cause(ctx); errors.Is(err, natsstore.ErrClosed) {
		log.Error("stopped serving: the connection to NATS closed for good and every request needs it; start the service again", "err", err)
		return err
	}
	return serveErr
}

// state is where a service keeps its tasks, events, webhooks and
// checkpoints.
type state struct {
	tasks       taskstore.Store
	events      eventlog.Log
	push        push.ConfigStore
	checkpoints adk.CheckPointStore
	// replicas connects the agent's replicas, and conn is the connection
	// the stores use (--state nats).
	replicas *natsstore.Replicas
	conn     *natsstore.Conn
	// retention is the server's: --retention, or none when the stores
	// drop ended tasks themselves.
	retention time.Duration
	// maxTaskBytes is the largest task the stores keep (0: the server's
	// default).
	maxTaskBytes int
	close        func()
}

// openState opens the stores --state names: in memory (checkpoints in
// --data-dir if set, events also published to --nats if set), or on
// JetStream under the agent's name, so that its replicas share them.
func openState(ctx context.Context, common *Common, service, agent string, log *slog.Logger) (*state, error) {
	st := &state{retention: *common.Retention, close: func() {}}
	switch *common.State {
	case "memory":
		st.tasks, st.checkpoints = new(taskstore.Memory), &adk.MemoryCheckPointStore{}
		if *common.DataDir != "" {
			fs, err := checkpoint.NewFile(filepath.Join(*common.DataDir, service, "checkpoints"))
			if err != nil {
				return nil, err
			}
			st.checkpoints = fs
		}
		st.events = &eventlog.Memory{}
		if *common.NATS == "" {
			return st, nil
		}
		nc, js, err := natsstore.Connect(*common.NATS, service, log)
		if err != nil {
			return nil, err
		}
		if err := natsstore.EnsureEventsStream(ctx, js, common.events()); err != nil {
			nc.Close()
			return nil, err
		}
		p := natsstore.NewPublisher(js, agent, st.events, log)
		st.events, st.close = p, func() { drain(nc, p, log) }
		return st, nil
	case "nats":
		if *common.NATS == "" {
			return nil, errors.New("--state nats needs --nats (or NATS_URL)")
		}
		nc, js, err := natsstore.Connect(*common.NATS, service, log)
		if err != nil {
			return nil, err
		}
		if err := st.openNATS(ctx, js, agent, common, log); err != nil {
			nc.Close()
			return nil, err
		}
		st.conn, st.close = nc, func() { _ = nc.Drain() }
		return st, nil
	}
	return nil, fmt.Errorf("--state %q: memory or nats", *common.State)
}

func (st *state) openNATS(ctx context.Context, js jetstream.JetStream, agent string, common *Common, log *slog.Logger) error {
	// The stores drop ended tasks (a TTL on the final snapshot, the events
	// stream's age, the webhooks bucket's): a task ended by a replica
	// that then died goes too, and no request pays for evicting.
	a, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: agent, Events: common.events(),
		Tasks: natsstore.BucketConfig{TTL: *common.TasksMaxAge}, KeepEnded: max(*common.Retention, 0),
		Push: natsstore.BucketConfig{TTL: *common.EventsMaxAge}, HeartbeatTTL: *common.Heartbeat, Logger: log})
	if err != nil {
		return err
	}
	st.events, st.tasks, st.push, st.checkpoints, st.replicas = a.Log, a.Tasks, a.Push, a.CheckPoints, a.Replicas
	st.retention, st.maxTaskBytes = -1, a.MaxTaskBytes()
	return nil
}

// drain sends the events still being published before the connection
// closes.
func drain(nc *natsstore.Conn, p *natsstore.Publisher, log *slog.Logger) {
	p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Flush(ctx); err != nil && !errors.Is(err, context.Canceled) {
		log.Warn("events not published before exit", "err", err)
	}
	_ = nc.Drain()
}
