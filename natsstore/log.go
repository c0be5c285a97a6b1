package natsstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
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
// task, and `a2amesh watch` sees them too. A TaskStore made on the Log
// keeps each task's snapshot in the same messages (see TaskStore), so that
// a commit is one write.
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
	maxAge time.Duration // the events stream's age limit

	mu    sync.Mutex
	heads map[string]logHead // tasks this Log is writing
}

// headerWriter names the Log that wrote an event.
const headerWriter = "A2A-Writer"

// headerEnded marks a message whose snapshot is of an ended task.
const headerEnded = "A2A-Ended"

// logHead is the last event of a task as its writer knows it.
type logHead struct {
	seq       uint64 // the task's sequence
	streamSeq uint64 // the stream's sequence of that message
	// lines are the task's events 1 to seq, one per line, while they fit
	// in a message (nil otherwise, or when this Log did not write them
	// all): the message that ends the task carries them.
	lines []byte
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
	return &Log{js: js, nc: js.Conn(), stream: stream, writer: cfg.Replica, tel: cfg.Telemetry, maxAge: cmp.Or(cfg.Events.MaxAge, defaultMaxAge), ns: cfg.Namespace, prefix: EventsSubjectPrefix + keyToken(cfg.Namespace) + ".",
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
		case last.sealed:
			return fmt.Errorf("%w: task %s ended with event %d", eventlog.ErrSealed, taskID, last.Seq)
		default:
			head = logHead{seq: last.Seq, streamSeq: last.streamSeq}
		}
	}
	if seq != head.seq+1 {
		return fmt.Errorf("%w: task %s: event %d after %d", eventlog.ErrConflict, taskID, seq, head.seq)
	}
	body, err := encodeLines(make([]byte, 0, 1024*len(events)), taskID, seq, events)
	if err != nil {
		return err
	}
	_, contextID := final.TaskIDs()
	msg := l.message(ctx, taskID, contextID, head.streamSeq)
	msg.Header[HeaderSeq] = []string{strconv.FormatUint(seq, 10)}
	msg.Data = body
	if err := fits(l.nc, msg.Size()-len(msg.Subject), func() string { return fmt.Sprintf("events %d to %d of task %s", seq, end, taskID) }); err != nil {
		return err
	}
	sent := time.Now()
	ack, err := l.js.PublishMsg(ctx, msg)
	l.tel.Publish(time.Since(sent), err)
	if err == nil {
		l.setHead(taskID, final, logHead{seq: end, streamSeq: ack.Sequence, lines: grown(head, seq, body, l.nc)})
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

// message starts a message of the task's log: its subject and headers,
// the stream's check that it follows the message numbered prev (0: the
// task has none), and the trace context of ctx.
func (l *Log) message(ctx context.Context, taskID, contextID string, prev uint64) *nats.Msg {
	msg := &nats.Msg{Subject: l.subject(taskID), Header: nats.Header{
		HeaderAgent: {l.ns}, HeaderTask: {taskID}, HeaderContext: {contextID}, headerWriter: {l.writer},
		// The stream stores a task's message only right after the one its
		// writer read last: of two writers of one event one is refused,
		// and so is an append retried after its first attempt was stored.
		jetstream.ExpectedLastSubjSeqHeader: {strconv.FormatUint(prev, 10)},
	}}
	withTrace(ctx, l.tel.Propagator(), msg.Header)
	return msg
}

// encodeLines appends events, numbered from seq, one per line.
func encodeLines(b []byte, taskID string, seq uint64, events []a2a.Event) ([]byte, error) {
	for i, ev := range events {
		if i > 0 {
			b = append(b, '\n')
		}
		var err error
		if b, err = a2a.AppendJSON(b, a2a.Wrap(ev)); err != nil {
			return nil, fmt.Errorf("natsstore: encode event %d of task %s: %w", seq+uint64(i), taskID, err)
		}
	}
	return b, nil
}

// grown returns the task's events 1 to the end of lines (events from seq
// on), when head holds those before seq and they all fit in a message.
func grown(head logHead, seq uint64, lines []byte, nc *nats.Conn) []byte {
	var all []byte
	switch {
	case seq == 1:
		all = slices.Clip(lines)
	case head.lines != nil && head.seq+1 == seq:
		all = append(append(slices.Clip(head.lines), '\n'), lines...)
	default:
		return nil
	}
	if int64(len(all)) > nc.MaxPayload()/2 {
		return nil
	}
	return all
}

// wrote reports whether last is the message of an append of events seq to
// end by this Log: a replica's name is new at every start, and a replica
// writes a task's events seq to end at most once. (A message that ends
// its task may repeat the task's earlier events: its commit starts at seq.)
func (l *Log) wrote(last logEntry, seq, end uint64) bool {
	return last.writer == l.writer && last.commit == seq && last.Seq == end
}

// setHead remembers the task's last event while its run goes on.
func (l *Log) setHead(taskID string, ev a2a.Event, h logHead) {
	s, ok := a2a.StateOf(ev)
	l.setHeadState(taskID, ok && s.Settled(), h)
}

func (l *Log) setHeadState(taskID string, settled bool, h logHead) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if settled {
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

// commit writes the task's events (numbered up to e.Seq) and then rec, the
// task's snapshot record, in one message that follows the task's message
// e.Version (0: the task has none yet), and returns the message's stream
// sequence. ttl is the message's Nats-TTL. A message that ends the task
// replaces the task's other messages (a rollup) and carries its whole log
// when its writer can gather it and it fits, so that followers behind it
// and later readers miss no event. ttl "" leaves the message to the
// stream's age limit. It fails with taskstore.ErrExists
// (e.Version 0), ErrNotFound (no message) or ErrConflict (another one is
// the task's last).
func (l *Log) commit(ctx context.Context, e taskstore.Entry, events []a2a.Event, rec []byte, ttl string) (uint64, error) {
	taskID := e.Task.ID
	n := uint64(len(events))
	first := e.Seq + 1 - n
	ended := e.Task.Status.State.Terminal()
	lines, err := encodeLines(make([]byte, 0, 1024*(len(events)+1)+len(rec)), taskID, first, events)
	if err != nil {
		return 0, err
	}
	l.mu.Lock()
	head, known := l.heads[taskID]
	l.mu.Unlock()
	if known && head.streamSeq != e.Version {
		head, known = logHead{}, false
	}
	msg := l.message(ctx, taskID, e.Task.ContextID, e.Version)
	build := func(earlier []byte) {
		bodyFirst, count := first, len(events)
		body := lines
		if earlier != nil {
			bodyFirst, count = 1, int(first-1)+len(events)
			body = append(slices.Clip(earlier), '\n')
			body = append(body, lines...)
		}
		if len(body) > 0 {
			body = append(body, '\n')
		}
		msg.Data = append(body, rec...)
		msg.Header[HeaderSeq] = []string{strconv.FormatUint(bodyFirst, 10)}
		msg.Header[HeaderEvents] = []string{strconv.Itoa(count)}
		if bodyFirst != first {
			msg.Header[HeaderCommit] = []string{strconv.FormatUint(first, 10)}
		} else {
			delete(msg.Header, HeaderCommit)
		}
	}
	if ttl != "" {
		msg.Header[jetstream.MsgTTLHeader] = []string{ttl}
	}
	var earlier []byte
	if ended {
		msg.Header[headerEnded] = []string{"true"}
		if e.Version != 0 {
			// Rolling up costs the server a purge: only a task that has
			// messages needs one.
			msg.Header[jetstream.MsgRollup] = []string{jetstream.MsgRollupSubject}
			if first > 1 {
				earlier = l.earlier(ctx, taskID, head, known, e.Version, first)
			}
		}
	}
	build(earlier)
	what := func() string { return "task " + taskID }
	if err := fits(l.nc, msg.Size()-len(msg.Subject), what); err != nil && earlier != nil {
		// The whole log does not fit: the message carries its own
		// events only, and a follower behind it misses the others.
		build(nil)
	}
	if err := fits(l.nc, msg.Size()-len(msg.Subject), what); err != nil {
		return 0, err
	}
	sent := time.Now()
	ack, err := l.js.PublishMsg(ctx, msg)
	l.tel.Publish(time.Since(sent), err)
	settled := e.Task.Status.State.Settled()
	if err == nil {
		var all []byte
		if known || first == 1 {
			all = grown(head, first, lines, l.nc)
		}
		l.setHeadState(taskID, settled, logHead{seq: e.Seq, streamSeq: ack.Sequence, lines: all})
		return ack.Sequence, nil
	}
	l.forget(taskID)
	if !casConflict(err) {
		return 0, fmt.Errorf("natsstore: task %s: %w", taskID, unanswered(ctx, err))
	}
	last, err := l.last(ctx, msg.Subject)
	switch {
	case errors.Is(err, eventlog.ErrNotFound):
		return 0, fmt.Errorf("%w: %s", taskstore.ErrNotFound, taskID)
	case err != nil:
		return 0, err
	case n > 0 && l.wrote(last, first, e.Seq):
		// Ours, stored before its acknowledgement was lost.
		l.setHeadState(taskID, settled, logHead{seq: e.Seq, streamSeq: last.streamSeq})
		return last.streamSeq, nil
	case e.Version == 0:
		return 0, fmt.Errorf("%w: %s", taskstore.ErrExists, taskID)
	}
	return 0, fmt.Errorf("%w: %s is at version %d, not %d", taskstore.ErrConflict, taskID, last.streamSeq, e.Version)
}

// earlier returns the task's events 1 to first-1, one per line, from what
// this Log remembers or else from the stream, up to the message numbered
// prev; nil if they cannot all be had or would not fit in a message.
func (l *Log) earlier(ctx context.Context, taskID string, head logHead, known bool, prev, first uint64) []byte {
	if known && head.seq+1 == first && head.lines != nil {
		return head.lines
	}
	if prev == 0 {
		return nil
	}
	// A consumer of no message would wait for one.
	if last, err := l.last(ctx, l.subject(taskID)); err != nil || last.streamSeq != prev {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cons, err := l.js.OrderedConsumer(ctx, EventsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{l.subject(taskID)}})
	if err != nil {
		return nil
	}
	var b []byte
	next := uint64(1)
	for m, err := range messages(ctx, cons) {
		if err != nil {
			return nil
		}
		msg, err := decodeMessage(m.Headers(), m.Data())
		if err != nil {
			return nil
		}
		for _, e := range msg.entries {
			switch {
			case e.Seq < next:
				continue
			case e.Seq > next || e.Seq >= first:
				return nil // dropped by the stream's limits, or not the task read
			}
			if b, err = encodeLines(appendSep(b), taskID, e.Seq, []a2a.Event{e.Event}); err != nil {
				return nil
			}
			next++
		}
		md, err := m.Metadata()
		if err != nil || int64(len(b)) > l.nc.MaxPayload()/2 {
			return nil
		}
		if md.Sequence.Stream >= prev || md.NumPending == 0 {
			break
		}
	}
	if next != first {
		return nil
	}
	return b
}

func appendSep(b []byte) []byte {
	if len(b) > 0 {
		b = append(b, '\n')
	}
	return b
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
// the stream. A message that carries no events (a snapshot written alone)
// leaves Event nil and Seq the number of the task's last event.
type logEntry struct {
	eventlog.Entry
	commit    uint64 // the number of the first event the message commits
	streamSeq uint64
	writer    string
	sealed    bool   // the task ended: a terminal event or snapshot
	snapshot  []byte // the task's snapshot record, if the message has one
}

// last reads the task's last message from the stream.
func (l *Log) last(ctx context.Context, subject string) (logEntry, error) {
	m, err := l.stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return logEntry{}, fmt.Errorf("%w: %s", eventlog.ErrNotFound, subject)
	}
	if err != nil {
		return logEntry{}, fmt.Errorf("natsstore: last event of %s: %w", subject, unanswered(ctx, err))
	}
	msg, err := readMessage(m.Header, m.Data, decodeLast)
	if err != nil {
		return logEntry{}, err
	}
	e := logEntry{commit: msg.commit, streamSeq: m.Sequence, writer: m.Header.Get(headerWriter), snapshot: msg.snapshot}
	if n := len(msg.entries); n > 0 {
		e.Entry = msg.entries[n-1]
	} else {
		e.Seq = msg.commit - 1
	}
	e.sealed = msg.terminal || eventlog.Seals(e.Event)
	return e, nil
}

// logMessage is a message of the log, decoded.
type logMessage struct {
	entries []eventlog.Entry
	// commit numbers the first event the message commits: the first of
	// entries, unless the message repeats earlier ones.
	commit   uint64
	snapshot []byte // the snapshot record after the events; nil if none
	terminal bool   // the snapshot's task has ended (a header says so)
}

// decodeMessage reads a message of the log: one event per line, the first
// numbered by the A2A-Seq header; with an A2A-Events header, that many
// events and then the task's snapshot record on the last line.
func decodeMessage(h nats.Header, data []byte) (logMessage, error) {
	return readMessage(h, data, decodeAll)
}

// What readMessage decodes of a message's events: those it leaves out
// are entries without an Event.
const (
	decodeAll = iota
	decodeLast
	decodeNone
)

// readMessage is decodeMessage, decoding only the events what says.
func readMessage(h nats.Header, data []byte, what int) (logMessage, error) {
	seq, err := strconv.ParseUint(h.Get(HeaderSeq), 10, 64)
	if err != nil {
		return logMessage{}, fmt.Errorf("natsstore: event without a sequence: %w", err)
	}
	m := logMessage{commit: seq}
	if c := h.Get(HeaderCommit); c != "" {
		if m.commit, err = strconv.ParseUint(c, 10, 64); err != nil || m.commit < seq {
			return logMessage{}, fmt.Errorf("natsstore: message with commit %q before its first event %d", c, seq)
		}
	}
	count := -1 // every line is an event
	if c := h.Get(HeaderEvents); c != "" {
		if count, err = strconv.Atoi(c); err != nil || count < 0 {
			return logMessage{}, fmt.Errorf("natsstore: message with %q events", c)
		}
		m.terminal = h.Get(headerEnded) != ""
	}
	// The encoder escapes newlines inside strings: one only ends a line.
	m.entries = make([]eventlog.Entry, 0, max(count, 1+bytes.Count(data, []byte{'\n'})))
	rest := data
	for count < 0 || len(m.entries) < count {
		line, after, more := bytes.Cut(rest, []byte{'\n'})
		if count >= 0 && !more {
			return logMessage{}, fmt.Errorf("natsstore: message of %d events and a snapshot ends after event %d", count, seq)
		}
		var ev a2a.Event
		if what == decodeAll || what == decodeLast && (count < 0 && !more || len(m.entries) == count-1) {
			if ev, err = decodeEvent(line); err != nil {
				return logMessage{}, fmt.Errorf("natsstore: event %d: %w", seq, err)
			}
		}
		m.entries = append(m.entries, eventlog.Entry{Seq: seq, Event: ev})
		seq++
		if rest = after; !more {
			break
		}
	}
	if count >= 0 {
		if m.snapshot = rest; len(rest) == 0 {
			return logMessage{}, fmt.Errorf("natsstore: message of %d events and a snapshot has no snapshot", count)
		}
	}
	if m.commit > seq {
		return logMessage{}, fmt.Errorf("natsstore: message commits event %d past its last, %d", m.commit, seq-1)
	}
	return m, nil
}

// decodeEntries reads the events of a message of the log.
func decodeEntries(h nats.Header, data []byte) ([]eventlog.Entry, error) {
	m, err := decodeMessage(h, data)
	return m.entries, err
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
	if last.Seq <= after && last.sealed {
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
