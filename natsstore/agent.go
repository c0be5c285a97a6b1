package natsstore

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
)

// CommitDelay is the server.Config.CommitDelay to use with these stores:
// a run's events that come within it of each other are stored in one
// append and one snapshot write, and a JetStream write costs far more than
// the millisecond a stream may see an event later.
const CommitDelay = time.Millisecond

// AgentConfig configures the state of one replica of an agent.
type AgentConfig struct {
	// Namespace is the agent's name, shared by its replicas. Required.
	Namespace string
	// Replica names this replica; empty means the host name and a random
	// suffix, new at each start, so that peers tell the tasks of a replica
	// that died from those of its successor.
	Replica string
	// Events configures the events stream; Tasks and Push the task and
	// webhook buckets.
	Events EventsConfig
	Tasks  BucketConfig
	Push   BucketConfig
	// KeepEnded: see TaskStoreConfig.
	KeepEnded time.Duration
	// HeartbeatTTL: see PeersConfig.
	HeartbeatTTL time.Duration
	Logger       *slog.Logger
}

// Agent is everything a replica of an agent keeps on JetStream: wire Log,
// Tasks, Push and Peers into a server.Config, CheckPoints into the ADK
// executor, and run Peers.Serve for as long as the server runs.
type Agent struct {
	Replica     string
	Log         *Log
	Tasks       *TaskStore
	Push        *PushStore
	CheckPoints *CheckPointStore
	Peers       *Peers
}

// OpenAgent creates (or updates) the streams and buckets the agent's state
// lives in and opens its stores; every replica may call it at once.
func OpenAgent(ctx context.Context, js jetstream.JetStream, cfg AgentConfig) (*Agent, error) {
	if cfg.Replica == "" {
		host, _ := os.Hostname()
		cfg.Replica = host + "-" + a2a.NewID()[24:]
	}
	a := &Agent{Replica: cfg.Replica}
	var err error
	if a.Log, err = NewLog(ctx, js, LogConfig{Namespace: cfg.Namespace, Replica: cfg.Replica, Events: cfg.Events}); err != nil {
		return nil, err
	}
	if a.Tasks, err = NewTaskStore(ctx, js, TaskStoreConfig{Namespace: cfg.Namespace, Bucket: cfg.Tasks, KeepEnded: cfg.KeepEnded}); err != nil {
		return nil, err
	}
	if a.Push, err = NewPushStore(ctx, js, PushStoreConfig{Namespace: cfg.Namespace, Bucket: cfg.Push}); err != nil {
		return nil, err
	}
	if a.CheckPoints, err = NewCheckPointStore(ctx, js, CheckPointStoreConfig{Namespace: cfg.Namespace}); err != nil {
		return nil, err
	}
	a.Peers, err = NewPeers(ctx, js, PeersConfig{Namespace: cfg.Namespace, Replica: cfg.Replica, Log: a.Log, Tasks: a.Tasks,
		HeartbeatTTL: cfg.HeartbeatTTL, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return a, nil
}
