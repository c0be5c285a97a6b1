package cli

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/adk/model/openai"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/userfile"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/serve"
)

// ServeFlags are the flags of a command that serves an agent (each
// service, echo, the gateway): one flag per serve.Config field, the model
// settings and the process's own (log level, debug address, wait). A flag
// that is not given leaves its field zero, so that serve's defaults and
// serve.Config.Check's rules are the flags' too: a flag given where it
// does nothing (--heartbeat without --state nats) stops the command with
// a message that names what to add.
type ServeFlags struct {
	f *Flags

	addr, publicURL, nats, state, dataDir, pushAllow, allowedHosts *string
	grpcAddr, grpcPublicAddr                                       *string
	retention, commitDelay, heartbeat, eventsMaxAge, tasksMaxAge   *time.Duration
	eventsPerTask, maxRuns, maxTasks, streamReplicas               *int
	inputTimeout, drainDelay, drainTimeout                         *time.Duration

	logLevel, debugAddr                   *string
	openAIBaseURL, openAIModel, openAIKey *string
	// Wait is how long to wait for the agents this one calls to come up.
	Wait *time.Duration
	// HopBindings are the protocol bindings to call other agents over,
	// the preferred first (names as cards give them); empty: the client's
	// default.
	hopBindings    *string
	authConfig     *string
	signingKey     *string
	hopCredentials *string
	tlsCert        *string
	tlsKey         *string
	tlsClientCA    *string
	natsAuth       *NATSAuthFlags
}

// flagOf names the flag of a serve.Config field, and says what to add to
// the command line when the field cannot be used as given ("" to use the
// ConfigError's own words).
func flagOf(field string) (flag, needs string) {
	const needNATS = "applies only with the state on NATS; add --nats URL (without --state memory) or drop it"
	switch field {
	case "State":
		return "--state", ""
	case "DataDir":
		return "--data-dir", "applies only with the state in memory (on NATS the checkpoints are on JetStream); add --state memory or drop it"
	case "PushAllow":
		return "--push-allow", ""
	case "Retention":
		return "--retention", ""
	case "Addr":
		return "--addr", ""
	case "GRPCAddr":
		return "--grpc-addr", ""
	case "GRPCPublicAddr":
		return "--grpc-public-addr", "applies only with --grpc-addr; add it or drop this"
	case "NATS.Heartbeat":
		return "--heartbeat", needNATS
	case "NATS.TasksMaxAge":
		return "--tasks-max-age", needNATS
	case "NATS.EventsMaxAge":
		return "--events-max-age", "applies only with --nats; add --nats URL or drop it"
	case "NATS.EventsPerTask":
		return "--events-per-task", "applies only with --nats; add --nats URL or drop it"
	case "NATS.StreamReplicas":
		return "--nats-replicas", "applies only with --nats; add --nats URL or drop it"
	case "NATS.Auth":
		return "--nats-creds, --nats-nkey, --nats-user, --nats-password-file, --nats-token-file, --nats-tls-*",
			"applies only with --nats; add --nats URL or drop them"
	case "NATS":
		return "--heartbeat, --tasks-max-age, --events-max-age, --events-per-task, --nats-replicas", ""
	case "DrainDelay":
		return "--drain-delay", ""
	}
	return field, ""
}

// DefineServe defines the serving flags on f, listening on addr by default.
func DefineServe(f *Flags, addr string) *ServeFlags {
	return &ServeFlags{
		f:         f,
		addr:      f.String("addr", addr, "address to listen on"),
		publicURL: f.String("public-url", "", "URL to put in the agent card (default http://<addr>/)"),
		grpcAddr: f.StringEnv("grpc-addr", "A2AMESH_GRPC_ADDR", "",
			"address to serve A2A's gRPC binding on as well (lf.a2a.v1.A2AService; the card lists it) (empty: no gRPC)"),
		grpcPublicAddr: f.String("grpc-public-addr", "", "host:port to put in the agent card for the gRPC binding (default: the --grpc-addr listener's)"),
		nats: f.StringEnv("nats", "NATS_URL", "",
			"NATS server: the state lives there unless --state memory, and every task event is published to it (for `a2amesh watch`) (empty: none)"),
		state: f.StringEnv("state", "A2AMESH_STATE", "",
			"where tasks, their events, webhooks and checkpoints live: memory (this process; with --nats, events are also published there) or nats (JetStream on --nats, durable and shared by the agent's replicas) (default: nats with --nats, else memory)"),
		dataDir: f.StringEnv("data-dir", "A2AMESH_DATA_DIR", "",
			"with --state memory: directory for checkpoints of interrupted tasks, so they survive a restart (empty: in memory)"),
		retention: f.Duration("retention", serve.DefaultRetention, "how long finished tasks are kept, and a conversation after its last turn"),
		commitDelay: f.DurationEnv("commit-delay", "A2AMESH_COMMIT_DELAY", 0,
			"how long a task event may wait to be stored with the ones after it, one write for the group (a stream sees it this much later at most; 0: each event at once); default 0 in memory, "+natsstore.CommitDelay.String()+" with --state nats"),
		heartbeat: f.Duration("heartbeat", 10*time.Second,
			"with --state nats: how long a replica may miss its heartbeat before its peers fail its running tasks (they do within about twice this)"),
		eventsMaxAge: f.DurationEnv("events-max-age", "A2AMESH_EVENTS_MAX_AGE", 24*time.Hour,
			"with --nats: how long the NATS events stream keeps task events; the stream is the mesh's, so give every process the same value"),
		eventsPerTask: f.IntEnv("events-per-task", "A2AMESH_EVENTS_PER_TASK", 0,
			"with --nats: most events the NATS events stream keeps per task, the oldest dropped first (0: no limit); same for every process"),
		streamReplicas: f.IntEnv("nats-replicas", "A2AMESH_NATS_REPLICAS", 0,
			"with --nats: how many servers of the NATS cluster hold each stream and bucket (3 on a cluster of 3, so that losing a server loses nothing; 0: 1; at most 5); same for every process"),
		tasksMaxAge: f.DurationEnv("tasks-max-age", "A2AMESH_TASKS_MAX_AGE", 0,
			"with --state nats: drop a task that has not changed for this long, such as one whose replica died before deleting it (0: keep until deleted); same for every process"),
		pushAllow: f.StringEnv("push-allow", "A2AMESH_PUSH_ALLOW", "",
			"comma-separated CIDR prefixes, IP addresses and host names, each IP or name optionally with :port, that push webhooks may reach despite the SSRF guard (e.g. 127.0.0.0/8,hooks.internal:8443)"),
		maxRuns: f.IntEnv("max-runs", "A2AMESH_MAX_RUNS", server.DefaultMaxRuns,
			"most runs of the agent at once (a message that starts or continues a task, until it settles); more wait, then are refused with a retryable error; with a real model, also a bound on spending"),
		maxTasks: f.IntEnv("max-tasks", "A2AMESH_MAX_TASKS", server.DefaultMaxLiveTasks,
			"most unfinished tasks (working or waiting for input) held; a new task beyond it is refused with a retryable error"),
		inputTimeout: f.DurationEnv("input-timeout", "A2AMESH_INPUT_TIMEOUT", server.DefaultInputTimeout,
			"how long a task may wait for input before it is canceled, and its checkpoint dropped"),
		drainDelay: f.DurationEnv("drain-delay", "A2AMESH_DRAIN_DELAY", 2*time.Second,
			"on SIGTERM: how long to answer /readyz 503 while still taking work, before refusing new messages (with a retryable 503 / UNAVAILABLE) and draining: the time a load balancer (Kubernetes' endpoints) takes to stop sending requests here"),
		drainTimeout: f.DurationEnv("drain-timeout", "A2AMESH_DRAIN_TIMEOUT", serve.DefaultDrainTimeout,
			"on SIGTERM, after --drain-delay: how long running tasks have to finish before they are canceled; open streams then end, for their clients to resume at another replica (0: cancel them at once)"),
		allowedHosts: f.StringEnv("allowed-hosts", "A2AMESH_ALLOWED_HOSTS", "",
			"comma-separated host[:port] names requests may be addressed to (Host, Origin), * for any; empty: the card's URL and the listening address"),
		logLevel:      f.StringEnv("log-level", "A2AMESH_LOG_LEVEL", "info", "log level: debug, info, warn or error"),
		debugAddr:     f.String("debug-addr", "", "address for /debug/pprof/ (empty: off)"),
		openAIBaseURL: f.StringEnv("openai-base-url", "OPENAI_BASE_URL", "", "OpenAI-compatible endpoint (empty, with no key: the offline model)"),
		openAIModel:   f.StringEnv("openai-model", "OPENAI_MODEL", "", "model name"),
		openAIKey:     f.StringEnv("openai-api-key", "OPENAI_API_KEY", "", "API key"),
		Wait:          f.Duration("wait", 60*time.Second, "how long to wait for the agents this one calls to come up"),
		authConfig: f.StringEnv("auth-config", "A2AMESH_AUTH_CONFIG", "",
			"file (JSON or YAML) saying who may call: API keys (secrets from files or env vars), JWT issuers, mTLS, the per-method policy and rate limits (see docs/security.md); empty: every caller is anonymous"),
		signingKey: f.StringEnv("signing-key", "A2AMESH_SIGNING_KEY", "",
			"PEM file of a private key (EC P-256, RSA 2048+ or Ed25519) that signs the agent card and push notifications; its public key is published at /.well-known/jwks.json (empty: unsigned)"),
		hopCredentials: f.StringEnv("hop-credentials", "A2AMESH_HOP_CREDENTIALS", "",
			"file (YAML or JSON) of the credential every call to other agents carries, in the topology's credentials format (kind: apiKey, bearer, clientCredentials, forward or exchange; secrets by secretFile or secretEnv); a gateway topology's own credentials win; empty: none"),
		tlsCert: f.StringEnv("tls-cert", "A2AMESH_TLS_CERT", "",
			"PEM certificate (chain) to serve every binding over TLS with, with --tls-key; the card's URL is then https"),
		tlsKey: f.StringEnv("tls-key", "A2AMESH_TLS_KEY", "", "PEM private key of --tls-cert"),
		tlsClientCA: f.StringEnv("tls-client-ca", "A2AMESH_TLS_CLIENT_CA", "",
			"with --tls-cert: PEM CA certificates whose client certificates are verified when given, for the mtls credentials of --auth-config"),
		natsAuth: DefineNATSAuth(f),
		hopBindings: f.StringEnv("hop-bindings", "A2AMESH_HOP_BINDINGS", "",
			"protocol bindings to call other agents over, the preferred first, among those their cards list (comma-separated: JSONRPC, HTTP+JSON, GRPC; empty: JSONRPC,HTTP+JSON)"),
	}
}

// Config returns the serve.Config the flags give, checked: an error names
// the flag and what to add or drop.
func (s *ServeFlags) Config(log *slog.Logger) (serve.Config, error) {
	given := s.f.Given
	dur := func(name string, d *time.Duration) time.Duration {
		if given(name) {
			return *d
		}
		return 0
	}
	c := serve.Config{
		Addr: *s.addr, PublicURL: *s.publicURL, GRPCAddr: *s.grpcAddr, GRPCPublicAddr: *s.grpcPublicAddr,
		State: serve.State(*s.state), DataDir: *s.dataDir,
		Retention: *s.retention, PushAllow: SplitList(*s.pushAllow), AllowedHosts: SplitList(*s.allowedHosts),
		Limits: server.Limits{MaxRuns: *s.maxRuns, MaxLiveTasks: *s.maxTasks, InputTimeout: *s.inputTimeout},
		NATS: serve.NATS{URL: *s.nats, Auth: s.natsAuth.Auth(), Heartbeat: dur("heartbeat", s.heartbeat), TasksMaxAge: dur("tasks-max-age", s.tasksMaxAge),
			EventsMaxAge: dur("events-max-age", s.eventsMaxAge), StreamReplicas: *s.streamReplicas},
		DrainDelay: *s.drainDelay, DrainTimeout: *s.drainTimeout,
		Logger: log,
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = -1 // an explicit 0 is none, serve's negative
	}
	if given("events-per-task") {
		c.NATS.EventsPerTask = *s.eventsPerTask
	}
	if given("commit-delay") {
		// An explicit 0 means none, which is serve's negative.
		if c.CommitDelay = *s.commitDelay; c.CommitDelay == 0 {
			c.CommitDelay = -1
		}
	}
	if err := c.Check(); err != nil {
		var ce *serve.ConfigError
		if errors.As(err, &ce) {
			flag, needs := flagOf(ce.Field)
			if needs == "" {
				needs = ce.Needs
			}
			if ce.Field == "NATS.Auth" && ce.Err != nil {
				needs = ce.Needs // the files do not go together
			}
			if ce.Field == "State" && c.State == serve.StateNATS && c.NATS.URL == "" {
				flag, needs = "--state nats", "needs --nats URL (or NATS_URL)"
			}
			if ce.Err != nil {
				return c, fmt.Errorf("%s: %s: %w", flag, needs, ce.Err)
			}
			return c, fmt.Errorf("%s: %s", flag, needs)
		}
		return c, err
	}
	if err := s.tlsConfig(&c); err != nil {
		return c, err
	}
	if *s.signingKey != "" {
		k, err := cardsign.LoadSigningKey(*s.signingKey)
		if err != nil {
			return c, fmt.Errorf("--signing-key: %w", err)
		}
		c.SigningKey = k
	}
	if *s.authConfig != "" {
		ac, err := auth.LoadConfig(*s.authConfig)
		if err != nil {
			return c, fmt.Errorf("--auth-config: %w", err)
		}
		if c.Gate, err = ac.Gate(nil, log); err != nil {
			return c, fmt.Errorf("--auth-config %s: %w", *s.authConfig, err)
		}
	}
	return c, nil
}

// Logger returns the logger --log-level asks for.
func (s *ServeFlags) Logger() (*slog.Logger, error) { return Logger(*s.logLevel) }

// tlsConfig sets c.TLS from --tls-cert, --tls-key and --tls-client-ca.
func (s *ServeFlags) tlsConfig(c *serve.Config) error {
	cert, key, ca := *s.tlsCert, *s.tlsKey, *s.tlsClientCA
	switch {
	case cert == "" && key == "" && ca == "":
		return nil
	case cert == "" || key == "":
		return errors.New("--tls-cert and --tls-key: give both, or neither (and no --tls-client-ca)")
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return fmt.Errorf("--tls-cert, --tls-key: %w", err)
	}
	c.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := userfile.Read(ca)
		if err != nil {
			return fmt.Errorf("--tls-client-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("--tls-client-ca: %s holds no PEM certificate", ca)
		}
		c.TLS.ClientCAs, c.TLS.ClientAuth = pool, tls.VerifyClientCertIfGiven
	}
	return nil
}

// HopCredentials is --hop-credentials: what every call to another agent
// carries; nil without the flag.
func (s *ServeFlags) HopCredentials() (client.Credentials, error) {
	if *s.hopCredentials == "" {
		return nil, nil
	}
	c, err := gateway.LoadCredentials(*s.hopCredentials)
	if err != nil {
		return nil, fmt.Errorf("--hop-credentials: %w", err)
	}
	return c, nil
}

// HopBindings is --hop-bindings: the names of the bindings to call other
// agents over, the preferred first.
func (s *ServeFlags) HopBindings() []string { return SplitList(*s.hopBindings) }

// DebugAddr is --debug-addr: where to serve /debug/pprof/ (empty: off).
func (s *ServeFlags) DebugAddr() string { return *s.debugAddr }

// Model returns the configured model: an OpenAI-compatible endpoint, or
// the offline model, said so in the log.
func (s *ServeFlags) Model(log *slog.Logger) (model.ChatModel, error) {
	if *s.openAIBaseURL == "" && *s.openAIKey == "" {
		log.Info("using the offline model: deterministic rules, not a language model; set OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL to use one")
		return offline.New(), nil
	}
	m, err := openai.New(openai.Config{BaseURL: *s.openAIBaseURL, Model: *s.openAIModel, APIKey: *s.openAIKey})
	if err != nil {
		return nil, err
	}
	log.Info("using an OpenAI-compatible model", "base_url", *s.openAIBaseURL, "model", *s.openAIModel)
	return m, nil
}

// GCPercent is the GOGC a served agent runs with unless the GOGC
// environment variable says otherwise. An agent server keeps little live
// data, so Go's default of 100 collects very often; 200 lets the heap grow
// to three times the live data instead of two, and takes a hop's added p99
// latency from about 0.9 ms to 0.2-0.5 ms (docs/benchmarks.md). Where
// memory is capped, set GOMEMLIMIT too.
const GCPercent = 200

// TuneProcess sets what a command serving an agent sets process-wide:
// GOGC (unless the environment sets it) and Hertz's logger, to log.
func TuneProcess(log *slog.Logger) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
	RouteHertzLogs(log)
}
