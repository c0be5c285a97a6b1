package serve

import (
	"context"
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/a2amesh/a2amesh/telemetry"
	"log/slog"
	"net"
	"time"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/cloudwego/hertz/pkg/route"
)

// State says where a server keeps its tasks, their events, push
// notification configs and the checkpoints of interrupted runs.
type State string

const (
	// StateMemory keeps them in the process (checkpoints in DataDir when it
	// is set): fast, and gone when the process ends. With NATS.URL set
	// too, every task event is also published to the mesh's events
	// stream (for watching the mesh), and nothing else is on NATS.
	StateMemory State = "memory"
	// StateNATS keeps them on JetStream at NATS.URL, under the agent's
	// name: durable, and shared by the agent's replicas, so that any of
	// them serves any task and a task outlives the process running it.
	StateNATS State = "nats"
)

// DefaultRetention is how long finished tasks are kept when
// Config.Retention is zero.
const DefaultRetention = 10 * time.Minute

// DefaultDrainTimeout is how long running tasks have to end once Serve
// drains, when Config.DrainTimeout is zero: with the shutdown grace and
// the stores' close, a drain fits in Kubernetes' default 30 s
// terminationGracePeriodSeconds.
const DefaultDrainTimeout = 20 * time.Second

// Config configures a Server. The zero value serves in memory on a free
// port of 127.0.0.1. Fields that only apply with another field set (the
// NATS ones without NATS.URL, DataDir with the state on NATS) are refused
// by New with a *ConfigError rather than ignored.
type Config struct {
	// Addr is the TCP address to listen on; empty: "127.0.0.1:0".
	Addr string
	// Listener, when set, is served instead of listening on Addr. The
	// Server closes it.
	Listener net.Listener
	// PublicURL is the URL the agent card names for the agent; empty:
	// http://<the listening address>/.
	PublicURL string
	// GRPCAddr, when set, also serves the agent over A2A's gRPC binding
	// (lf.a2a.v1.A2AService on Kitex) on this TCP address, and the card
	// lists it; empty: no gRPC (unless GRPCListener is set).
	GRPCAddr string
	// GRPCListener, when set, is served with gRPC instead of listening on
	// GRPCAddr. The Server closes it.
	GRPCListener net.Listener
	// GRPCPublicAddr is the host:port the agent card names for the gRPC
	// binding; empty: the gRPC listener's address.
	GRPCPublicAddr string
	// Name and Description, when set, present the agent under another
	// name on its card (a gateway presents a composition as the mesh).
	Name, Description string

	// State is where tasks live. Empty means StateNATS when NATS.URL is
	// set (a server given NATS keeps its state there, durable and shared
	// by its replicas), else StateMemory.
	State State
	// NATS connects the server to a NATS server.
	NATS NATS
	// DataDir, with the state in memory, keeps the checkpoints of
	// interrupted runs as files under DataDir/<service>/checkpoints, so
	// that they survive a restart.
	DataDir string
	// Service names the process's state (its checkpoint directory, its
	// NATS connection and stores); empty: the agent's name.
	Service string

	// Retention is how long finished tasks are kept, and a conversation
	// after its last turn; zero means DefaultRetention.
	Retention time.Duration
	// CommitDelay is how long a task event may wait to be stored with the
	// ones after it, one write for the group. Zero means the state's
	// default: none in memory, natsstore.CommitDelay on NATS; negative
	// means none.
	CommitDelay time.Duration
	// PushAllow lists what push webhooks may reach despite the SSRF guard:
	// CIDR prefixes, IP addresses and host names, each IP or name
	// optionally with :port (netguard.Guard.Allow).
	PushAllow []string
	// Limits bound what the server holds and runs; zero fields take the
	// server package's defaults.
	Limits server.Limits
	// TLS, when set, serves every binding over TLS with it: the HTTP ones
	// (JSON-RPC, HTTP+JSON, the card, the probes), the card's URL then
	// https, and gRPC (grpcserver.Config.TLS; the card's gRPC interface
	// stays a host:port). With ClientCAs and a ClientAuth that verifies
	// (VerifyClientCertIfGiven, RequireAndVerifyClientCert), the client
	// certificates it verifies are credentials that an auth.MTLS
	// authenticator names, on every binding.
	TLS *tls.Config
	// SigningKey, when set, signs the agent card (A2A §8.4: a JWS over
	// its canonical form) and every push notification (push.Signing),
	// and the server publishes its public key at JWKSPath for those who
	// verify them. SigningKeyID is its kid; empty: its JWK thumbprint
	// (RFC 7638).
	SigningKey   crypto.Signer
	SigningKeyID string
	// Gate authenticates and authorizes every request on every binding
	// and declares its schemes on the card; nil serves every caller as
	// the anonymous one (an open agent). Tasks belong to their creator
	// either way.
	Gate *auth.Gate
	// AllowedHosts are the host[:port] names requests may be addressed to
	// (Host, Origin), "*" for any; empty: the card's URL and the
	// listening address.
	AllowedHosts []string
	// Routes, when set, adds routes of the caller's to the HTTP port
	// beside the A2A bindings (a gateway's console): they take precedence
	// over the HTTP+JSON binding's catch-all route, and pass no gate or
	// Host check of the server's, so they must guard themselves. ctx ends
	// when the server stops serving, ending the streams they answer.
	Routes func(ctx context.Context, r route.IRoutes)
	// DrainDelay is how long Serve, once its context ends, answers
	// /readyz 503 while still taking new work, before it drains: the time
	// a load balancer (Kubernetes' endpoints) takes to stop sending it
	// requests. Zero means none.
	DrainDelay time.Duration
	// DrainTimeout is how long the runs going on when the drain begins
	// have to end; new messages are refused meanwhile with a retryable
	// error (see server.Handler.Drain). Runs still going after it are
	// canceled. Zero means DefaultDrainTimeout; negative, none (they are
	// canceled at once).
	DrainTimeout time.Duration
	// ShutdownGrace is how long Serve lets open requests finish once the
	// drain is over (streams have ended by then, for their clients to
	// resume elsewhere); zero means 2 s.
	ShutdownGrace time.Duration
	// Telemetry reports the server's spans and metrics; its metrics are
	// served at /metrics (MetricsPath). nil: metrics only, in a registry
	// of the server's own, and no spans.
	Telemetry *telemetry.Telemetry
	// Logger receives the server's logs, records about a task naming its
	// trace, task and conversation (telemetry.LogHandler); nil means
	// slog.Default().
	Logger *slog.Logger
}

// NATS is how a server uses NATS. Every field but URL applies only with
// URL set, and those marked so only with the state on NATS.
type NATS struct {
	// URL is the NATS server; empty: none.
	URL string
	// Auth is who the server is to NATS (a credentials, nkey seed,
	// password or token file) and how it verifies NATS over TLS; the zero
	// value connects as no one, which a NATS that requires authorization
	// refuses.
	Auth natsstore.Auth
	// Heartbeat, with the state on NATS, is how long a replica may miss
	// its heartbeat before its peers fail its running tasks (they do
	// within about twice this); zero means 10 s.
	Heartbeat time.Duration
	// TasksMaxAge, with the state on NATS, drops a task that has not
	// changed for this long, such as one whose replica died before
	// deleting it; zero keeps tasks until they are deleted.
	TasksMaxAge time.Duration
	// EventsMaxAge is how long the mesh's events stream keeps task
	// events; zero means 24 h. The stream is the mesh's: give every
	// process the same value.
	EventsMaxAge time.Duration
	// EventsPerTask is the most events the stream keeps per task, the
	// oldest dropped first; zero means no limit. Same for every process.
	EventsPerTask int
	// StreamReplicas is how many servers of a NATS cluster hold each
	// stream and bucket the server uses (the events stream; with the
	// state on NATS, the tasks', webhooks', checkpoints' and heartbeats'
	// buckets too), so that losing a server loses nothing (3 of a cluster
	// of 3 or more); zero means 1, at most 5. Same for every process: a
	// stream takes the count its last writer gave it.
	StreamReplicas int
}

// state is the State c means: State, or its default.
func (c *Config) state() State {
	switch {
	case c.State != "":
		return c.State
	case c.NATS.URL != "":
		return StateNATS
	}
	return StateMemory
}

// ConfigError reports a Config field that cannot be used as given.
type ConfigError struct {
	// Field is the field, as in Go ("NATS.Heartbeat").
	Field string
	// Needs is what is missing or wrong, in words, naming fields.
	Needs string
	// Err is the underlying error, if any.
	Err error
}

func (e *ConfigError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("serve: %s: %s: %v", e.Field, e.Needs, e.Err)
	}
	return fmt.Sprintf("serve: %s: %s", e.Field, e.Needs)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// ErrConfig is what every *ConfigError matches with errors.Is.
var ErrConfig = errors.New("serve: bad config")

// Is makes errors.Is(err, ErrConfig) true for every ConfigError.
func (e *ConfigError) Is(target error) bool { return target == ErrConfig }

// Check reports the first field of c that cannot be used as given: an
// unknown State, the state on NATS without a NATS URL, a field that
// applies only with another (NATS settings without NATS.URL, the
// replica-only NATS settings or DataDir with the state in memory or on
// NATS respectively), a negative duration or count where none is
// meaningful. New calls it; commands call it to stop before they wait
// for anything.
func (c *Config) Check() error {
	state := c.state()
	switch {
	case state != StateMemory && state != StateNATS:
		return &ConfigError{Field: "State", Needs: fmt.Sprintf("%q is neither %q nor %q", c.State, StateMemory, StateNATS)}
	case state == StateNATS && c.NATS.URL == "":
		return &ConfigError{Field: "State", Needs: "the state on NATS needs NATS.URL"}
	case state == StateNATS && c.DataDir != "":
		return &ConfigError{Field: "DataDir", Needs: "applies only with the state in memory (on NATS the checkpoints are on JetStream)"}
	case c.NATS.URL == "" && (c.NATS.EventsMaxAge != 0 || c.NATS.EventsPerTask != 0):
		field := "NATS.EventsMaxAge"
		if c.NATS.EventsPerTask != 0 {
			field = "NATS.EventsPerTask"
		}
		return &ConfigError{Field: field, Needs: "applies only with NATS.URL (it configures the events stream on NATS)"}
	case state != StateNATS && (c.NATS.Heartbeat != 0 || c.NATS.TasksMaxAge != 0):
		field := "NATS.Heartbeat"
		if c.NATS.TasksMaxAge != 0 {
			field = "NATS.TasksMaxAge"
		}
		return &ConfigError{Field: field, Needs: "applies only with State: StateNATS (replicas sharing their state on JetStream)"}
	case c.NATS.URL == "" && c.NATS.StreamReplicas != 0:
		return &ConfigError{Field: "NATS.StreamReplicas", Needs: "applies only with NATS.URL (it configures the streams on NATS)"}
	case c.NATS.URL == "" && c.NATS.Auth != (natsstore.Auth{}):
		return &ConfigError{Field: "NATS.Auth", Needs: "applies only with NATS.URL (it is how the server connects to NATS)"}
	case c.NATS.Auth.Check() != nil:
		return &ConfigError{Field: "NATS.Auth", Needs: "cannot be used as given", Err: c.NATS.Auth.Check()}
	case c.NATS.Heartbeat < 0 || c.NATS.TasksMaxAge < 0 || c.NATS.EventsMaxAge < 0 || c.NATS.EventsPerTask < 0:
		return &ConfigError{Field: "NATS", Needs: "durations and counts must not be negative"}
	case c.NATS.StreamReplicas < 0 || c.NATS.StreamReplicas > 5:
		return &ConfigError{Field: "NATS", Needs: "StreamReplicas must be between 1 and 5 (0: 1)"}
	case c.Retention < 0:
		return &ConfigError{Field: "Retention", Needs: "must not be negative"}
	case c.DrainDelay < 0:
		return &ConfigError{Field: "DrainDelay", Needs: "must not be negative"}
	case c.Listener != nil && c.Addr != "":
		return &ConfigError{Field: "Addr", Needs: "set Addr or Listener, not both"}
	case c.GRPCListener != nil && c.GRPCAddr != "":
		return &ConfigError{Field: "GRPCAddr", Needs: "set GRPCAddr or GRPCListener, not both"}
	case c.GRPCPublicAddr != "" && c.GRPCAddr == "" && c.GRPCListener == nil:
		return &ConfigError{Field: "GRPCPublicAddr", Needs: "applies only with GRPCAddr (it names the gRPC binding's address on the card)"}
	}
	if _, err := c.pushSender(nil); err != nil {
		return &ConfigError{Field: "PushAllow", Needs: "an entry is not a CIDR prefix, IP address or host name", Err: err}
	}
	return nil
}
