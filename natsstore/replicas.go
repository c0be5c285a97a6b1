package natsstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// ReplicasBucket holds a heartbeat per live replica.
const ReplicasBucket = "A2AMESH_REPLICAS"

// ReplicasConfig configures Replicas.
type ReplicasConfig struct {
	// Namespace is the agent whose replicas these are. Required.
	Namespace string
	// Replica names this replica; it must be the Replica of the Log the
	// replica writes with, since a task's last writer is how the others
	// find the replica running it. Required.
	Replica string
	// Log and Tasks are the agent's shared stores. Required.
	Log   *Log
	Tasks *TaskStore
	// HeartbeatTTL is how long a replica counts as alive after its last
	// heartbeat (sent every HeartbeatTTL/3); the tasks of a replica that
	// stops fail at most about twice HeartbeatTTL later (ten times, for a
	// replica that lived less than one). Default 10s.
	HeartbeatTTL time.Duration
	// Bucket is the heartbeat bucket; its default name is ReplicasBucket.
	Bucket BucketConfig
	Logger *slog.Logger
}

// Replicas is the server.Replicas of a replica whose state is on JetStream: it
// carries cancellations to the replica running a task, keeps this
// replica's heartbeat, and fails the running tasks of replicas whose
// heartbeat stops (a replica killed mid-task), so that no task stays
// WORKING for ever.
type Replicas struct {
	cfg       ReplicasConfig
	nc        *nats.Conn
	js        jetstream.JetStream
	kv        jetstream.KeyValue
	ns        string // the namespace's key token
	putPrefix string
}

var _ server.Replicas = (*Replicas)(nil)

// ReplicaHandler is what Serve calls: a server.Handler.
type ReplicaHandler interface {
	StopRun(ctx context.Context, taskID string) (bool, error)
	FailOrphan(ctx context.Context, taskID, reason string) error
	// ExpireWaiting is told of a task waiting for input (since the
	// given time) whose last writer is gone: no replica keeps its time
	// any more, so the sweep does, and the handler cancels it once it has
	// waited too long.
	ExpireWaiting(ctx context.Context, taskID string, since time.Time) error
}

// NewReplicas makes sure the heartbeat bucket exists.
func NewReplicas(ctx context.Context, js jetstream.JetStream, cfg ReplicasConfig) (*Replicas, error) {
	if cfg.Namespace == "" || cfg.Replica == "" || cfg.Log == nil || cfg.Tasks == nil {
		return nil, errors.New("natsstore: replicas need a namespace, a replica name, the log and the task store")
	}
	if cfg.HeartbeatTTL == 0 {
		cfg.HeartbeatTTL = 10 * time.Second
	}
	if cfg.HeartbeatTTL < time.Second {
		// The server counts message TTLs in whole seconds.
		return nil, fmt.Errorf("natsstore: heartbeat TTL %v: at least 1s", cfg.HeartbeatTTL)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	kv, err := ensureKV(ctx, js, ReplicasBucket, cfg.Bucket, "a2amesh replicas' heartbeats: <namespace>.<replica>", true)
	if err != nil {
		return nil, err
	}
	return &Replicas{cfg: cfg, nc: js.Conn(), js: js, kv: kv, ns: keyToken(cfg.Namespace),
		putPrefix: putPrefix(js) + "$KV." + kv.Bucket() + "."}, nil
}

func (r *Replicas) key(replica string) string { return r.ns + "." + keyToken(replica) }

// subject is where a replica answers the other replicas. (The wire
// name predates the type's; replicas of different builds must agree on it.)
func (r *Replicas) subject(replica string) string {
	return "a2amesh.peers." + r.ns + "." + keyToken(replica) + ".cancel"
}

// Cancel asks the replica that wrote the task's last event to stop its
// run. A replica that is gone (nobody answers on its subject) has no run.
func (r *Replicas) Cancel(ctx context.Context, taskID string) (bool, error) {
	writer, err := r.cfg.Log.LastWriter(ctx, taskID)
	if errors.Is(err, eventlog.ErrNotFound) || writer == "" || writer == r.cfg.Replica {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	ctx, cancel, err := call(ctx, r.nc)
	defer cancel()
	if err != nil {
		return false, err
	}
	reply, err := r.nc.RequestWithContext(ctx, r.subject(writer), []byte(taskID))
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("natsstore: cancel task %s on replica %s: %w", taskID, writer, err)
	}
	switch s := string(reply.Data); s {
	case "stopped":
		return true, nil
	case "idle":
		return false, nil
	default:
		return false, fmt.Errorf("natsstore: replica %s could not stop task %s: %s", writer, taskID, s)
	}
}

// Serve keeps this replica's heartbeat, answers the other replicas' cancellations
// with h, and fails the running tasks of replicas that stop, until ctx
// ends. It returns after every goroutine it started has ended.
func (r *Replicas) Serve(ctx context.Context, h ReplicaHandler) error {
	if err := r.beat(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	sub, err := r.nc.Subscribe(r.subject(r.cfg.Replica), func(m *nats.Msg) {
		// StopRun waits for the run to end: not on NATS's delivery
		// goroutine.
		wg.Go(func() {
			stopped, err := h.StopRun(ctx, string(m.Data))
			answer := "idle"
			switch {
			case err != nil:
				answer = err.Error()
			case stopped:
				answer = "stopped"
			}
			if err := m.Respond([]byte(answer)); err != nil {
				r.cfg.Logger.Warn("natsstore: answer a replica", "err", err)
			}
		})
	})
	if err != nil {
		return fmt.Errorf("natsstore: replicas: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	tick := time.NewTicker(r.cfg.HeartbeatTTL / 3)
	defer tick.Stop()
	ticks := 0
	// After NATS was out of reach for longer than a heartbeat every replica's
	// heartbeat has expired, live or not: sweep only once the connection
	// has been up for a whole heartbeat (three ticks), long enough for
	// live replicas to beat again.
	reconnects, steadyTicks := r.nc.Stats().Reconnects, 0
	var w lookout
	for {
		select {
		case <-ctx.Done():
			// A replica that stops cleanly says so at once.
			dctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_ = r.kv.Purge(dctx, r.key(r.cfg.Replica))
			cancel()
			return nil
		case <-tick.C:
		}
		if err := r.beat(ctx); err != nil && ctx.Err() == nil {
			r.cfg.Logger.Warn("natsstore: heartbeat", "err", err)
		}
		if n := r.nc.Stats().Reconnects; n != reconnects || !r.nc.IsConnected() {
			// Heartbeats lapsed while NATS was away: look afresh.
			reconnects, steadyTicks = n, 0
			w.reset()
		} else {
			steadyTicks++
		}
		// Look once a heartbeat.
		if ticks++; ticks%3 != 0 || steadyTicks < 3 {
			continue
		}
		now, err := r.live(ctx)
		if err != nil {
			if ctx.Err() == nil {
				r.cfg.Logger.Warn("natsstore: list the replicas", "err", err)
			}
			continue
		}
		if w.due(now) {
			if err := r.sweep(ctx, h); err != nil {
				if ctx.Err() == nil {
					r.cfg.Logger.Warn("natsstore: look for orphaned tasks", "err", err)
				}
				continue // look again at the next heartbeat
			}
		}
		w.saw(now)
	}
}

// lookout decides, at each look at the live replicas (once a heartbeat),
// whether to sweep. A sweep reads every task of the agent: it is due only
// at the first look (for replicas that died before this one started or
// while NATS was away), at the first look after a replica disappeared, and
// every fullSweepEvery looks, for a replica that started and died between
// two looks.
type lookout struct {
	seen  map[string]bool // the live replicas at the last look; nil before the first
	looks int
}

// fullSweepEvery is how many heartbeats may pass without a sweep.
const fullSweepEvery = 10

// due counts a look that found the replicas of now alive, and reports
// whether to sweep.
func (w *lookout) due(now map[string]bool) bool {
	w.looks++
	return w.seen == nil || gone(w.seen, now) || w.looks%fullSweepEvery == 0
}

// saw records now once the look is done (and its sweep, if it was due,
// succeeded: if not, the next look sweeps again).
func (w *lookout) saw(now map[string]bool) { w.seen = now }

// reset makes the next look sweep, as the first did.
func (w *lookout) reset() { w.seen = nil }

// live returns the replicas of the agent whose heartbeat is current.
func (r *Replicas) live(ctx context.Context) (map[string]bool, error) {
	ctx, cancel, err := call(ctx, r.nc)
	defer cancel()
	if err != nil {
		return nil, err
	}
	keys, err := r.kv.ListKeysFiltered(ctx, r.ns+".>")
	if err != nil {
		return nil, fmt.Errorf("natsstore: heartbeats: %w", unanswered(ctx, err))
	}
	defer func() { _ = keys.Stop() }()
	live := map[string]bool{}
	for k := range keys.Keys() {
		live[k] = true
	}
	return live, nil
}

// gone reports whether a replica in before is not in now.
func gone(before, now map[string]bool) bool {
	for k := range before {
		if !now[k] {
			return true
		}
	}
	return false
}

// Start runs Serve in the background, logging its error, until ctx ends or
// stop is called; stop waits for Serve to return.
func (r *Replicas) Start(ctx context.Context, h ReplicaHandler) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Serve(ctx, h); err != nil {
			r.cfg.Logger.Error("natsstore: replicas", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}

// beat renews this replica's heartbeat for HeartbeatTTL.
func (r *Replicas) beat(ctx context.Context) error {
	ctx, cancel, err := call(ctx, r.nc)
	defer cancel()
	if err != nil {
		return err
	}
	_, err = r.js.Publish(ctx, r.putPrefix+r.key(r.cfg.Replica), []byte(time.Now().UTC().Format(time.RFC3339)),
		jetstream.WithMsgTTL(r.cfg.HeartbeatTTL))
	if err != nil {
		return fmt.Errorf("natsstore: heartbeat of %s: %w", r.cfg.Replica, err)
	}
	return nil
}

// alive reports whether replica's heartbeat is current.
func (r *Replicas) alive(ctx context.Context, replica string) (bool, error) {
	_, err := r.kv.Get(ctx, r.key(replica))
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

// sweep fails the submitted and working tasks whose last event a replica
// without a heartbeat wrote.
func (r *Replicas) sweep(ctx context.Context, h ReplicaHandler) error {
	if !r.nc.IsConnected() {
		return ErrUnavailable
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	// One pass over the agent's tasks: a List per state and page would
	// read every task each time.
	var unfinished []*a2a.Task
	if err := r.cfg.Tasks.each(ctx, func(e taskstore.Entry) {
		switch e.Task.Status.State {
		case a2a.TaskStateWorking, a2a.TaskStateSubmitted, a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
			unfinished = append(unfinished, e.Task)
		}
	}); err != nil {
		return err
	}
	dead := map[string]bool{}
	for _, t := range unfinished {
		state := t.Status.State
		writer, err := r.cfg.Log.LastWriter(ctx, t.ID)
		if err != nil || writer == "" || writer == r.cfg.Replica {
			continue
		}
		gone, seen := dead[writer]
		if !seen {
			up, err := r.alive(ctx, writer)
			if err != nil {
				return err
			}
			gone, dead[writer] = !up, !up
		}
		switch {
		case gone && state.Interrupted():
			// Any replica resumes it from its checkpoint; until
			// then, it may wait only so long.
			if err := h.ExpireWaiting(ctx, t.ID, t.Status.Timestamp); err != nil {
				r.cfg.Logger.Warn("natsstore: expire a task left waiting for input", "task", t.ID, "err", err)
			}
		case gone:
			reason := fmt.Sprintf("the replica running this task (%s) stopped before it finished", writer)
			if err := h.FailOrphan(ctx, t.ID, reason); err != nil {
				r.cfg.Logger.Warn("natsstore: fail an orphaned task", "task", t.ID, "err", err)
			} else {
				r.cfg.Logger.Info("natsstore: failed an orphaned task", "task", t.ID, "replica", writer)
			}
		}
	}
	return nil
}
