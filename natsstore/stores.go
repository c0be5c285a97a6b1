package natsstore

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/telemetry"
)

// CommitDelay is the server.Config.CommitDelay to use with these stores:
// a run's events that come within it of each other are stored in one
// append and one snapshot write, and a JetStream write costs far more than
// the millisecond a stream may see an event later.
const CommitDelay = time.Millisecond

// StoresConfig configures Open: the stores of one replica of an agent.
type StoresConfig struct {
	// Namespace is the agent's name, shared by its replicas. Required.
	Namespace string
	// Replica names this replica; empty means the host name and a random
	// suffix, new at each start, so that the other replicas tell the tasks
	// of a replica that died from those of its successor.
	Replica string
	// Events configures the events stream; Tasks, Push, CheckPoints and
	// Heartbeats the task, webhook, checkpoint and heartbeat buckets.
	Events      EventsConfig
	Tasks       BucketConfig
	Push        BucketConfig
	CheckPoints BucketConfig
	Heartbeats  BucketConfig
	// KeepEnded: see TaskStoreConfig.
	KeepEnded time.Duration
	// HeartbeatTTL: see ReplicasConfig.
	HeartbeatTTL time.Duration
	// Telemetry: see LogConfig.
	Telemetry *telemetry.Telemetry
	Logger    *slog.Logger
}

// Stores is everything a replica of an agent keeps on JetStream: wire Log,
// Tasks, Push and Replicas into a server.Config, CheckPoints into the ADK
// executor, and run Replicas.Serve for as long as the server runs.
type Stores struct {
	Replica     string
	Log         *Log
	Tasks       *TaskStore
	Push        *PushStore
	CheckPoints *CheckPointStore
	Replicas    *Replicas

	nc *nats.Conn
}

// MaxPayload is the most bytes the NATS server takes in one message (its
// max_payload, 1 MiB by default, as the server told the connection; it
// can change when the connection moves to another server). A task
// snapshot, the events of one append, a webhook and a checkpoint must
// each fit, or the store refuses it with ErrTooLarge before sending
// anything. A snapshot is the task's 1.0 JSON in a small record (under
// 50 bytes) with headers (under 100 bytes); an append is its events' 1.0
// JSON, one per line, with headers that hold the namespace, the task and
// context ids and the replica's name. A server bounding task size keeps
// its bound below MaxPayload with room for these.
func (s *Stores) MaxPayload() int64 { return s.nc.MaxPayload() }

// MaxTaskBytes is the largest task, as a server estimates its size
// (server.Limits.MaxTaskBytes), that these stores keep: three eighths of
// MaxPayload. A commit is one message holding the task's snapshot and the
// events that led to it, which may hold the same content again (the first
// event of a task is the task); the rest is left for the record and
// headers and for what the estimate leaves out (JSON escapes). A server
// given it refuses a message that would outgrow the stores up front, with
// a clear error, instead of failing the write. A NATS server with a larger
// max_payload keeps larger tasks.
func (s *Stores) MaxTaskBytes() int { return int(s.MaxPayload() * 3 / 8) }

// Open creates (or updates) the streams and buckets the agent's state
// lives in and opens its stores; every replica may call it at once.
func Open(ctx context.Context, js jetstream.JetStream, cfg StoresConfig) (*Stores, error) {
	if cfg.Replica == "" {
		host, _ := os.Hostname()
		cfg.Replica = host + "-" + a2a.NewID()[24:]
	}
	s := &Stores{Replica: cfg.Replica, nc: js.Conn()}
	var err error
	if s.Log, err = NewLog(ctx, js, LogConfig{Namespace: cfg.Namespace, Replica: cfg.Replica, Events: cfg.Events, Telemetry: cfg.Telemetry}); err != nil {
		return nil, err
	}
	if s.Tasks, err = NewTaskStore(ctx, js, TaskStoreConfig{Log: s.Log, Bucket: cfg.Tasks, KeepEnded: cfg.KeepEnded}); err != nil {
		return nil, err
	}
	if s.Push, err = NewPushStore(ctx, js, PushStoreConfig{Namespace: cfg.Namespace, Bucket: cfg.Push}); err != nil {
		return nil, err
	}
	if s.CheckPoints, err = NewCheckPointStore(ctx, js, CheckPointStoreConfig{Namespace: cfg.Namespace, Bucket: cfg.CheckPoints}); err != nil {
		return nil, err
	}
	s.Replicas, err = NewReplicas(ctx, js, ReplicasConfig{Namespace: cfg.Namespace, Replica: cfg.Replica, Log: s.Log, Tasks: s.Tasks,
		HeartbeatTTL: cfg.HeartbeatTTL, Bucket: cfg.Heartbeats, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return s, nil
}
