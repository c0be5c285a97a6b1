package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/checkpoint"
	"github.com/a2amesh/a2amesh/natsstore"
)

// startBudget bounds how long a server waits for NATS when it starts.
const startBudget = time.Minute

// state is where a server keeps its tasks, events, webhooks and
// checkpoints.
type state struct {
	kind        State
	tasks       taskstore.Store
	events      eventlog.Log
	push        push.ConfigStore
	checkpoints adk.CheckPointStore
	// replicas connects the agent's replicas, and conn is the connection
	// the stores use (state on NATS).
	replicas *natsstore.Replicas
	conn     *natsstore.Conn
	// retention is the handler's: Config.Retention, or none when the
	// stores drop ended tasks themselves.
	retention time.Duration
	// maxTaskBytes is the largest task the stores keep (0: the server's
	// default).
	maxTaskBytes int
	close        func()
}

// openState opens the stores cfg names: in memory (checkpoints in
// DataDir if set, events also published to NATS if a URL is given), or on
// JetStream under the agent's name, so that its replicas share them.
func openState(ctx context.Context, cfg *Config, service, agent string, log *slog.Logger) (*state, error) {
	// NATS may be starting beside this process, or too busy to answer in
	// JetStream's default 5 s: a replica waits for it up to startBudget
	// rather than failing its start.
	ctx, cancel := context.WithTimeout(ctx, startBudget)
	defer cancel()
	st := &state{kind: StateMemory, retention: cfg.retention(), close: func() {}}
	if cfg.state() == StateNATS {
		st.kind = StateNATS
		nc, js, err := natsstore.Connect(ctx, cfg.NATS.URL, natsstore.ConnConfig{Name: service, Auth: cfg.NATS.Auth, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("serve: state on NATS: %w", err)
		}
		if err := st.openNATS(ctx, js, agent, cfg, log); err != nil {
			nc.Close()
			return nil, fmt.Errorf("serve: state on NATS: %w", err)
		}
		st.conn, st.close = nc, func() { _ = nc.Drain() }
		return st, nil
	}
	st.tasks, st.checkpoints, st.events = new(taskstore.Memory), &adk.MemoryCheckPointStore{}, &eventlog.Memory{}
	if cfg.DataDir != "" {
		fs, err := checkpoint.NewFile(filepath.Join(cfg.DataDir, service, "checkpoints"))
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		st.checkpoints = fs
	}
	if cfg.NATS.URL == "" {
		return st, nil
	}
	nc, js, err := natsstore.Connect(ctx, cfg.NATS.URL, natsstore.ConnConfig{Name: service, Auth: cfg.NATS.Auth, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("serve: events to NATS: %w", err)
	}
	if err := natsstore.EnsureEventsStream(ctx, js, cfg.events()); err != nil {
		nc.Close()
		return nil, fmt.Errorf("serve: events to NATS: %w", err)
	}
	p := natsstore.NewPublisher(js, agent, st.events, log)
	st.events, st.close = p, func() { drain(nc, p, log) }
	return st, nil
}

func (c *Config) events() natsstore.EventsConfig {
	age := c.NATS.EventsMaxAge
	if age == 0 {
		age = 24 * time.Hour
	}
	return natsstore.EventsConfig{MaxAge: age, MaxPerTask: int64(c.NATS.EventsPerTask), Replicas: c.NATS.StreamReplicas}
}

func (st *state) openNATS(ctx context.Context, js jetstream.JetStream, agent string, cfg *Config, log *slog.Logger) error {
	// The stores drop ended tasks (a TTL on the final snapshot, the events
	// stream's age, the webhooks bucket's): a task ended by a replica
	// that then died goes too, and no request pays for evicting.
	heartbeat := cfg.NATS.Heartbeat
	if heartbeat == 0 {
		heartbeat = 10 * time.Second
	}
	events, copies := cfg.events(), cfg.NATS.StreamReplicas
	a, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: agent, Events: events,
		Tasks:       natsstore.BucketConfig{TTL: cfg.NATS.TasksMaxAge, Replicas: copies},
		Push:        natsstore.BucketConfig{TTL: events.MaxAge, Replicas: copies},
		CheckPoints: natsstore.BucketConfig{Replicas: copies}, Heartbeats: natsstore.BucketConfig{Replicas: copies},
		KeepEnded: cfg.retention(), HeartbeatTTL: heartbeat, Telemetry: cfg.Telemetry, Logger: log})
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
