// Package natsstore keeps a2amesh's shared state on NATS JetStream. Every
// A2A server publishes each task event, in order and numbered, to one
// stream (Publisher), which `a2amesh watch` follows (Watch); Embedded runs
// a NATS server in-process for local meshes.
package natsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/telemetry"
)

// The events stream: every task event of the mesh, on subject
// a2amesh.events.<agent>.<task>.
const (
	EventsStream        = "A2AMESH_EVENTS"
	EventsSubjectPrefix = "a2amesh.events."
)

// Headers of an event message. Its body is the event as a 1.0
// StreamResponse, or several consecutive events of the task, one per line,
// when a Log appended them at once; A2A-Seq numbers the first. A message a
// TaskStore wrote also carries the task's snapshot: A2A-Events counts the
// events, and the snapshot is the line after them (the only line, with no
// events). The message that ends a task may repeat its earlier events, so
// that it holds the whole log: A2A-Commit then numbers the first event it
// adds.
const (
	HeaderAgent   = "A2A-Agent"
	HeaderTask    = "A2A-Task"
	HeaderContext = "A2A-Context"
	HeaderSeq     = "A2A-Seq"
	HeaderEvents  = "A2A-Events"
	HeaderCommit  = "A2A-Commit"
)

// EventsConfig configures the events stream. The stream is shared by every
// agent of the mesh and each process applies its configuration when it
// starts, so every process should be given the same one.
type EventsConfig struct {
	// MaxAge drops events older than it; 0 means 24 hours.
	MaxAge time.Duration
	// MaxPerTask is the most events kept for one task; once a task has
	// more, its oldest are dropped, and a subscriber asking for a dropped
	// event gets an error instead. 0 means no limit. A task's snapshot
	// (TaskStore) keeps its whole state regardless.
	MaxPerTask int64
	// Replicas is the stream's replica count in a cluster; 0 means 1.
	Replicas int
	// MaxConsumers is the most consumers the stream serves at once: one
	// per SubscribeToTask a replica serves for a task another replica
	// runs or that waits for input, per `a2amesh watch` and per ListTasks
	// under way. 0 means 10,000, a follower for each of the live tasks a
	// server takes by default (nats-server's own default is 1,000).
	MaxConsumers int
}

// defaultMaxConsumers is EventsConfig.MaxConsumers's default.
const defaultMaxConsumers = 10_000

// defaultMaxAge is EventsConfig.MaxAge's default.
const defaultMaxAge = 24 * time.Hour

// EnsureEventsStream creates the events stream, or updates it to cfg. It is
// safe to call from every process at once.
func EnsureEventsStream(ctx context.Context, js jetstream.JetStream, cfg EventsConfig) error {
	if cfg.MaxAge < 0 || cfg.MaxPerTask < 0 || cfg.MaxConsumers < 0 {
		return fmt.Errorf("natsstore: events stream: negative limit (max age %v, max per task %d, max consumers %d)", cfg.MaxAge, cfg.MaxPerTask, cfg.MaxConsumers)
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = defaultMaxAge
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	_, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:        EventsStream,
		Description: "a2amesh task events: " + EventsSubjectPrefix + "<agent>.<task>",
		Subjects:    []string{EventsSubjectPrefix + ">"},
		Storage:     jetstream.FileStorage,
		MaxAge:      cfg.MaxAge,
		// -1 is JetStream's "no limit".
		MaxMsgsPerSubject: cmp.Or(cfg.MaxPerTask, -1),
		// A task's snapshot lives in its last message (TaskStore): the
		// message that ends the task replaces the task's others (a
		// rollup) and lives as long as ended tasks are kept; one that
		// leaves the task unfinished lives until then (a TTL).
		AllowRollup:  true,
		AllowMsgTTL:  true,
		Replicas:     cfg.Replicas,
		MaxConsumers: cmp.Or(cfg.MaxConsumers, defaultMaxConsumers),
		// JetStream refuses a window longer than the age limit.
		Duplicates: min(2*time.Minute, cfg.MaxAge),
		// The default persist mode: the server writes each event to its
		// file before it acknowledges it, so an event a Log accepted
		// survives the NATS server being killed. (Asynchronous persistence
		// cost about 15 % less server CPU per event and could lose the
		// last acknowledged ones.)
		PersistMode: jetstream.DefaultPersistMode,
	})
	if err != nil {
		return fmt.Errorf("natsstore: events stream: %w", err)
	}
	return nil
}

// Publisher is an eventlog.Log that also publishes every appended event to
// the events stream, in order (one connection keeps the order) and without
// waiting: the stream is a view of the mesh for observers, and the wrapped
// log, which serves the reads, stays the record.
type Publisher struct {
	eventlog.Log
	nc      *nats.Conn
	subject string // the prefix, with the agent's token
	// agentHeader is the A2A-Agent header value, shared by every message
	// (nats.go only reads it).
	agentHeader []string
	log         *slog.Logger

	mu      sync.Mutex
	pending []*nats.Msg
	sending bool          // the sender holds a batch not yet handed to the connection
	wake    chan struct{} // a batch is waiting
	closed  bool
	done    chan struct{} // the sender has ended
}

// PublishDelay is how long a Publisher lets events gather before it sends
// them: a batch costs the NATS server far less than the same events one by
// one (per request through a hop its CPU measured 42, 39 and 31 µs with 5,
// 10 and 20 ms), and a watcher does not notice 20 ms.
const PublishDelay = 20 * time.Millisecond

// NewPublisher wraps inner for agent, publishing on js's connection. Close
// it to send what is pending and stop its sender.
func NewPublisher(js jetstream.JetStream, agent string, inner eventlog.Log, log *slog.Logger) *Publisher {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &Publisher{Log: inner, nc: js.Conn(), agentHeader: []string{agent}, subject: EventsSubjectPrefix + keyToken(agent) + ".", log: log,
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	go p.send()
	return p
}

// Append stores the events, then queues them for publishing, one message
// each.
func (p *Publisher) Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	if err := p.Log.Append(ctx, taskID, seq, events...); err != nil {
		return err
	}
	msgs := make([]*nats.Msg, 0, len(events))
	for i, ev := range events {
		body, err := a2a.AppendJSON(make([]byte, 0, 1024), a2a.Wrap(ev))
		if err != nil {
			p.log.Warn("natsstore: encode event", "task", taskID, "seq", seq+uint64(i), "err", err)
			continue
		}
		_, contextID := ev.TaskIDs()
		vals := []string{taskID, contextID, strconv.FormatUint(seq+uint64(i), 10)} // one allocation for the three
		h := nats.Header{HeaderAgent: p.agentHeader, HeaderTask: vals[0:1:1], HeaderContext: vals[1:2:2], HeaderSeq: vals[2:3:3]}
		withTrace(ctx, telemetry.FromContext(ctx).Propagator(), h)
		msgs = append(msgs, &nats.Msg{Subject: p.subject + keyToken(taskID), Data: body, Header: h})
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	first := len(p.pending) == 0
	p.pending = append(p.pending, msgs...)
	p.mu.Unlock()
	if first {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// send publishes the pending events in order, PublishDelay after the first
// of each batch arrives, until Close.
func (p *Publisher) send() {
	defer close(p.done)
	for {
		_, ok := <-p.wake
		if ok {
			time.Sleep(PublishDelay)
		}
		p.mu.Lock()
		batch, closed := p.pending, p.closed
		p.pending = nil
		p.sending = len(batch) > 0
		p.mu.Unlock()
		for _, m := range batch {
			// A plain publish, without waiting for the stream's
			// acknowledgement: JetStream stores it all the same. While the
			// connection is down, nats.go buffers what is published.
			if err := p.nc.PublishMsg(m); err != nil {
				// The task goes on: the stream is an observer's view, the
				// log is the record.
				p.log.Warn("natsstore: publish event", "subject", m.Subject, "err", err)
			}
		}
		p.mu.Lock()
		p.sending = false
		p.mu.Unlock()
		if closed || !ok {
			return
		}
	}
}

// Close publishes what is pending and stops the sender; later events are
// stored in the wrapped log only.
func (p *Publisher) Close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.wake)
	}
	p.mu.Unlock()
	<-p.done
}

// Flush waits until the NATS server has received every event queued so
// far, or ctx ends.
func (p *Publisher) Flush(ctx context.Context) error {
	for {
		p.mu.Lock()
		idle := len(p.pending) == 0 && !p.sending
		p.mu.Unlock()
		if idle {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("natsstore: events not yet sent: %w", ctx.Err())
		case <-time.After(PublishDelay):
		}
	}
	if err := p.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("natsstore: events not yet sent: %w", err)
	}
	return nil
}

// WatchedEvent is one event of the mesh's events stream.
type WatchedEvent struct {
	Agent, TaskID, ContextID string
	Seq                      uint64
	Event                    a2a.Event
	// Stored is when the stream stored it.
	Stored time.Time
	// TraceID is the trace (32 hex digits) of the request whose run
	// appended the event, when it was traced; "" if not.
	TraceID string
}

// Watch yields the mesh's task events as they are published, starting with
// those stored since (zero: only new ones). It ends when ctx does, or the
// consumer stops.
func Watch(ctx context.Context, js jetstream.JetStream, since time.Time) iter.Seq2[WatchedEvent, error] {
	return func(yield func(WatchedEvent, error) bool) {
		cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{EventsSubjectPrefix + ">"}, DeliverPolicy: jetstream.DeliverNewPolicy}
		if !since.IsZero() {
			cfg.DeliverPolicy, cfg.OptStartTime = jetstream.DeliverByStartTimePolicy, &since
		}
		cons, err := js.OrderedConsumer(ctx, EventsStream, cfg)
		if err != nil {
			yield(WatchedEvent{}, fmt.Errorf("natsstore: watch: %w", err))
			return
		}
		for m, err := range messages(ctx, cons) {
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				if !yield(WatchedEvent{}, fmt.Errorf("natsstore: watch: %w", err)) {
					return
				}
				continue
			}
			for we, err := range decodeWatched(m) {
				if !yield(we, err) {
					return
				}
			}
		}
	}
}

// messages yields cons's messages until the consumer stops or ctx ends
// (then it yields ctx.Err() last). Other delivery errors are yielded and
// it goes on: an ordered consumer recovers from them itself.
func messages(ctx context.Context, cons jetstream.Consumer) iter.Seq2[jetstream.Msg, error] {
	return func(yield func(jetstream.Msg, error) bool) {
		msgs, err := cons.Messages()
		if err != nil {
			yield(nil, err)
			return
		}
		defer msgs.Stop()
		stop := context.AfterFunc(ctx, msgs.Stop)
		defer stop()
		for {
			m, err := msgs.Next()
			switch {
			case ctx.Err() != nil:
				yield(nil, ctx.Err())
				return
			case errors.Is(err, jetstream.ErrMsgIteratorClosed):
				return
			}
			if !yield(m, err) {
				return
			}
		}
	}
}

// decodeWatched yields the events of a message: one, or several appended
// at once by a Log.
func decodeWatched(m jetstream.Msg) iter.Seq2[WatchedEvent, error] {
	return func(yield func(WatchedEvent, error) bool) {
		h := m.Headers()
		we := WatchedEvent{Agent: h.Get(HeaderAgent), TaskID: h.Get(HeaderTask), ContextID: h.Get(HeaderContext), TraceID: traceIDOf(h)}
		if md, err := m.Metadata(); err == nil {
			we.Stored = md.Timestamp
		}
		msg, err := decodeMessage(h, m.Data())
		if err != nil {
			yield(we, fmt.Errorf("natsstore: events of task %s: %w", we.TaskID, err))
			return
		}
		for _, e := range msg.entries {
			if e.Seq < msg.commit {
				continue // repeated by the message that ended the task
			}
			we.Seq, we.Event = e.Seq, e.Event
			if !yield(we, nil) {
				return
			}
		}
	}
}
