package natsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/telemetry"
)

// LogConfig configures a Log.
type LogConfig struct {
	// Namespace is the agent whose tasks' events these are: replicas of
	// one agent use the same namespace (usually the agent's name) and share
	// the logs. Required.
	Namespace string
	// Events configures the events stream the logs live in.
	Events EventsConfig
	// Replica names this replica in every event it writes, so that the
	// other replicas know which replica runs a task (Replicas uses the same name);
	// without control characters or surrounding spaces, since it is a
	// header's value. Empty: a random one.
	Replica string
	// Telemetry times every acknowledged append (its publish metric) and
	// carries the trace context of an append's context in its message's
	// headers; nil: no metric, and W3C trace context.
	Telemetry *telemetry.Telemetry
}

// Log is an eventlog.Log on the events stream: each task's events are in
// the messages of its subject, a2amesh.events.<namespace>.<task>, one
// message per Append (one event per line, the first numbered by the
// A2A-Seq header), so every replica of the agent replays and follows any
// task, and `a2amesh watch` sees them too.
//
// Append waits for the stream's acknowledgement, so an event that Append
// accepted survives the server that wrote it. Two writers of one task are
// kept apart by the stream itself (the expected last sequence of the
// task's subject), which also refuses an append retried after a lost
// acknowledgement if its first attempt was stored; the retry then finds
// its own message (its writer and numbers) as the task's last, and
// succeeds, stored once.
type Log struct {
	js     jetstream.JetStream
	nc     *nats.Conn
	stream jetstream.Stream
	ns     string
	prefix string // subject prefix of the namespace's tasks

	// writer marks this Log's messages, so that an append retried after
	// its acknowledgement was lost finds its own event rather than a
	// conflict.
	writer string
	tel    *telemetry.Telemetry

	mu    sync.Mutex
	heads map[string]logHead // tasks this Log is writing
}

// headerWriter names the Log that wrote an event.
const headerWriter = "A2A-Writer"

// logHead is the last event of a task as its writer knows it.
type logHead struct {
	seq       uint64 // the task's sequence
	streamSeq uint64 // the stream's sequence of that message
}

var _ eventlog.Log = (*Log)(nil)

// NewLog makes sure the events stream exists and returns the namespace's
// Log.
func NewLog(ctx context.Context, js jetstream.JetStream, cfg LogConfig) (*Log, error) {
	if cfg.Namespace == "" {
		return nil, errors.New("natsstore: a log needs a namespace")
	}
	if err := EnsureEventsStream(ctx, js, cfg.Events); err != nil {
		return nil, err
	}
	stream, err := js.Stream(ctx, EventsStream)
	if err != nil {
		return nil, fmt.Errorf("natsstore: events stream: %w", err)
	}
	if cfg.Replica == "" {
		cfg.Replica = a2a.NewID()
	}
	// The name goes in every event's A2A-Writer header, which is how the
	// other replicas find the one running a task: it must read back as written.
	if strings.ContainsFunc(cfg.Replica, unicode.IsControl) || strings.TrimSpace(cfg.Replica) != cfg.Replica {
		return nil, fmt.Errorf("natsstore: replica name %q: a message header cannot hold its control characters or surrounding spaces", cfg.Replica)
	}
	return &Log{js: js, nc: js.Conn(), stream: stream, writer: cfg.Replica, tel: cfg.Telemetry, ns: cfg.Namespace, prefix: EventsSubjectPrefix + keyToken(cfg.Namespace) + ".",
		heads: map[string]logHead{}}, nil
}

func (l *Log) subject(taskID string) string { return l.prefix + keyToken(taskID) }

// Append stores events as the task's events from seq on, in one message,
// once the stream has it. It fails with eventlog.ErrConflict when seq is
// not the next event (another replica wrote the task), and
// eventlog.ErrSealed after a terminal event.
func (l *Log) Append(ctx context.Context, taskID string, seq uint64, events ...a2a.Event) error {
	if len(events) == 0 {
		return nil
	}
	if err := eventlog.CheckBatch(taskID, seq, events); err != nil {
		return err
	}
	ctx, cancel, err := call(ctx, l.nc)
	defer cancel()
	if err != nil {
		return fmt.Errorf("natsstore: append event %d of task %s: %w", seq, taskID, err)
	}
	subject := l.subject(taskID)
	end := seq + uint64(len(events)) - 1 // the number of the last event
	final := events[len(events)-1]
	l.mu.Lock()
	head, ok := l.heads[taskID]
	l.mu.Unlock()
	// A task's first event needs no read: the stream refuses it if the
	// task has events already (expected last sequence 0).
	if !ok && seq != 1 {
		last, err := l.last(ctx, subject)
		switch {
		case errors.Is(err, eventlog.ErrNotFound):
		case err != nil:
			return err
		case l.wrote(last, seq, end):
			// Ours, stored before its acknowledgement was lost.
			l.setHead(taskID, final, logHead{seq: end, streamSeq: last.streamSeq})
			return nil
		case eventlog.Seals(last.Event):
			return fmt.Errorf("%w: task %s ended with event %d", eventlog.ErrSealed, taskID, last.Seq)
		default:
			head = logHead{seq: last.Seq, streamSeq: last.streamSeq}
		}
	}
	if seq != head.seq+1 {
		return fmt.Errorf("%w: task %s: event %d after %d", eventlog.ErrConflict, taskID, seq, head.seq)
	}
	body := make([]byte, 0, 1024*len(events))
	for i, ev := range events {
		if i > 0 {
			body = append(body, '\n')
		}
		if body, err = a2a.AppendJSON(body, a2a.Wrap(ev)); err != nil {
			return fmt.Errorf("natsstore: encode event %d of task %s: %w", seq+uint64(i), taskID, err)
		}
	}
	_, contextID := final.TaskIDs()
	seqText := strconv.FormatUint(seq, 10)
	msg := &nats.Msg{Subject: subject, Data: body, Header: nats.Header{
		HeaderAgent: {l.ns}, HeaderTask: {taskID}, HeaderContext: {contextID}, HeaderSeq: {seqText}, headerWriter: {l.writer},
		// The stream stores a task's message only right after the one its
		// writer read last: of two writers of one event one is refused,
		// and so is an append retried after its first attempt was stored.
		jetstream.ExpectedLastSubjSeqHeader: {strconv.FormatUint(head.streamSeq, 10)},
	}}
	withTrace(ctx, l.tel.Propagator(), msg.Header)
	if err := fits(l.nc, msg.Size()-len(subject), func() string { return fmt.Sprintf("events %d to %d of task %s", seq, end, taskID) }); err != nil {
		return err
	}
	sent := time.Now()
	ack, err := l.js.PublishMsg(ctx, msg)
	l.tel.Publish(time.Since(sent), err)
	if err == nil {
		l.setHead(taskID, final, logHead{seq: end, streamSeq: ack.Sequence})
		return nil
	}
	l.forget(taskID)
	if !casConflict(err) {
		return fmt.Errorf("natsstore: append event %d of task %s: %w", seq, taskID, unanswered(ctx, err))
	}
	// The task's last message is not the one this append follows: another
	// writer's, or this very append, stored by an attempt whose
	// acknowledgement was lost (as when the read above came before that
	// attempt was stored, or a task's first append, sent without a read).
	// Only reading it back tells. (A message id would not: a single
	// server checks the expected sequence before the id.)
	last, err := l.last(ctx, subject)
	if err != nil {
		return err
	}
	if !l.wrote(last, seq, end) {
		return fmt.Errorf("%w: task %s: event %d was written elsewhere", eventlog.ErrConflict, taskID, seq)
	}
	l.setHead(taskID, final, logHead{seq: end, streamSeq: last.streamSeq})
	return nil
}

// wrote reports whether last is the message of an append of events seq to
// end by this Log: a replica's name is new at every start, and a replica
// writes a task's events seq to end at most once.
func (l *Log) wrote(last logEntry, seq, end uint64) bool {
	return last.writer == l.writer && last.first == seq && last.Seq == end
}

// setHead remembers the task's last event while its run goes on.
func (l *Log) setHead(taskID string, ev a2a.Event, h logHead) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := a2a.StateOf(ev); ok && s.Settled() {
		// The run ends here; a later run may be another replica's.
		delete(l.heads, taskID)
	} else {
		l.heads[taskID] = h
	}
}

func (l *Log) forget(taskID string) {
	l.mu.Lock()
	delete(l.heads, taskID)
	l.mu.Unlock()
}

// LastWriter returns the replica that wrote the task's last event: the one
// running the task, if a run is going on. It fails with
// eventlog.ErrNotFound for a task without events.
func (l *Log) LastWriter(ctx context.Context, taskID string) (string, error) {
	ctx, cancel, err := call(ctx, l.nc)
	defer cancel()
	if err != nil {
		return "", err
	}
	last, err := l.last(ctx, l.subject(taskID))
	return last.writer, err
}

// Last implements eventlog.Log: one read of the task's last message.
func (l *Log) Last(ctx context.Context, taskID string) (uint64, error) {
	ctx, cancel, err := call(ctx, l.nc)
	defer cancel()
	if err != nil {
		return 0, fmt.Errorf("natsstore: last event of task %s: %w", taskID, err)
	}
	last, err := l.last(ctx, l.subject(taskID))
	return last.Seq, err
}

// logEntry is the last entry of a message, with the message's place in
// the stream.
type logEntry struct {
	eventlog.Entry
	first     uint64 // the number of the message's first event
	streamSeq uint64
	writer    string
}

// last reads the task's last event from the stream.
func (l *Log) last(ctx context.Context, subject string) (logEntry, error) {
	m, err := l.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return logEntry{}, fmt.Errorf("%w: %s", eventlog.ErrNotFound, subject)
	}
	if err != nil {
		return logEntry{}, fmt.Errorf("natsstore: last event of %s: %w", subject, unanswered(ctx, err))
	}
	es, err := decodeEntries(m.Header, m.Data)
	if err != nil {
		return logEntry{}, err
	}
	return logEntry{Entry: es[len(es)-1], first: es[0].Seq, streamSeq: m.Sequence, writer: m.Header.Get(headerWriter)}, nil
}

// decodeEntries reads a message of the log: one event per line, the first
// numbered by the A2A-Seq header.
func decodeEntries(h nats.Header, data []byte) ([]eventlog.Entry, error) {
	seq, err := strconv.ParseUint(h.Get(HeaderSeq), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("natsstore: event without a sequence: %w", err)
	}
	// The encoder escapes newlines inside strings: one only ends an event.
	es := make([]eventlog.Entry, 0, 1+bytes.Count(data, []byte{'\n'}))
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		ev, err := decodeEvent(line)
		if err != nil {
			return nil, fmt.Errorf("natsstore: event %d: %w", seq, err)
		}
		es = append(es, eventlog.Entry{Seq: seq, Event: ev})
		seq++
	}
	return es, nil
}

func decodeEvent(data []byte) (a2a.Event, error) {
	var sr a2a.StreamResponse
	if err := a2a.Unmarshal(data, &sr); err != nil {
		return nil, err
	}
	return sr.Event()
}

// Subscribe yields the task's events numbered above after, from the
// stream, then follows it until the sealing event. See eventlog.Log.
func (l *Log) Subscribe(ctx context.Context, taskID string, after uint64) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		subject := l.subject(taskID)
		cons, done, err := l.consumer(ctx, subject, after)
		if err != nil {
			yield(eventlog.Entry{}, l.subscribeErr(ctx, taskID, err))
			return
		}
		if done {
			return
		}
		for m, err := range messages(ctx, cons) {
			if err != nil {
				if !yield(eventlog.Entry{}, l.subscribeErr(ctx, taskID, err)) || ctx.Err() != nil {
					return
				}
				continue
			}
			es, err := decodeEntries(m.Headers(), m.Data())
			if err != nil {
				yield(eventlog.Entry{}, fmt.Errorf("natsstore: task %s: %w", taskID, err))
				return
			}
			for _, e := range es {
				switch {
				case e.Seq <= after:
					continue
				case e.Seq > after+1:
					yield(eventlog.Entry{}, fmt.Errorf("natsstore: task %s: events %d to %d are no longer kept (the events stream's age or per-task limit)", taskID, after+1, e.Seq-1))
					return
				}
				after = e.Seq
				if !yield(e, nil) || eventlog.Seals(e.Event) {
					return
				}
			}
		}
	}
}

// consumer makes an ordered consumer of the task's events from the first
// one above after; done reports that none can come (the log was sealed
// at or before after).
func (l *Log) consumer(ctx context.Context, subject string, after uint64) (cons jetstream.Consumer, done bool, err error) {
	ctx, cancel, err := call(ctx, l.nc)
	defer cancel()
	if err != nil {
		return nil, false, err
	}
	last, err := l.last(ctx, subject)
	if err != nil {
		return nil, false, err
	}
	if last.Seq <= after && eventlog.Seals(last.Event) {
		return nil, true, nil
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}}
	if after >= last.Seq {
		// Nothing stored is wanted: start at the next message.
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last.streamSeq+1
	}
	cons, err = l.js.OrderedConsumer(ctx, EventsStream, cfg)
	return cons, false, err
}

func (l *Log) subscribeErr(ctx context.Context, taskID string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("natsstore: follow task %s: %w", taskID, err)
}

// Delete purges the task's events from the stream.
func (l *Log) Delete(ctx context.Context, taskID string) error {
	l.forget(taskID)
	ctx, cancel, err := call(ctx, l.nc)
	defer cancel()
	if err != nil {
		return fmt.Errorf("natsstore: delete events of task %s: %w", taskID, err)
	}
	if err := l.stream.Purge(ctx, jetstream.WithPurgeSubject(l.subject(taskID))); err != nil {
		return fmt.Errorf("natsstore: delete events of task %s: %w", taskID, err)
	}
	return nil
}
