package httpbind

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// FlushDelay is how long an event that does not end its stream may wait
// for the next one before it is sent. An agent's events often come in
// bursts (the answer, then the final status); one write for the burst
// saves a system call on this side and a wake-up on the reader's, for at
// most this much delay of an event that is not the last.
const FlushDelay = time.Millisecond

// errStreamClosed is the error of writes after the stream ended.
var errStreamClosed = errors.New("event stream closed")

// EventWriter writes a stream's Server-Sent Events. An event that does not
// end the stream is flushed FlushDelay later unless a write flushes it
// first; the last one leaves with the end of the body, which the server
// writes and flushes when the handler returns. A keep-alive comment goes out
// every keepAlive to hold idle connections open through proxies and
// reveal a client that left. Timers, not goroutines, drive the delayed
// work; Close stops them.
type EventWriter struct {
	mu         sync.Mutex
	body       StreamBody
	buf        []byte // the event being written
	unflushed  bool
	flushTimer *time.Timer // armed while unflushed
	keepAlive  *time.Timer
	period     time.Duration
	closed     bool
	err        error // the first write or flush error
}

// NewEventWriter starts an event stream as x's answer.
func NewEventWriter(x Exchange, keepAlive time.Duration) *EventWriter {
	w := &EventWriter{body: x.Stream(), period: keepAlive, buf: make([]byte, 0, 1024)}
	w.keepAlive = time.AfterFunc(keepAlive, w.sendKeepAlive)
	return w
}

// Event writes one event: its SSE id (none when ""), its type (none, the
// default "message", when "") and its data, whose line breaks make more
// data lines. last says it ends the stream. The id and the type must be
// free of line breaks.
func (w *EventWriter) Event(id, event string, data []byte, last bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf[:0]
	if id != "" {
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	if event != "" {
		b = append(append(append(b, "event: "...), event...), '\n')
	}
	for len(data) > 0 {
		line := data
		next := []byte(nil)
		if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
			line, next = data[:i], data[i+1:]
			if data[i] == '\r' && len(next) > 0 && next[0] == '\n' {
				next = next[1:]
			}
		}
		b = append(append(append(b, "data: "...), line...), '\n')
		data = next
	}
	w.buf = append(b, '\n')
	if err := w.writeLocked(w.buf); err != nil {
		return err
	}
	if last {
		// The handler returns now, and the server flushes the body's end.
		if w.flushTimer != nil {
			w.flushTimer.Stop()
		}
		return w.err
	}
	if w.flushTimer == nil {
		w.flushTimer = time.AfterFunc(FlushDelay, w.delayedFlush)
	} else if !w.unflushed {
		w.flushTimer.Reset(FlushDelay)
	}
	w.unflushed = true
	return w.err
}

func (w *EventWriter) writeLocked(p []byte) error {
	switch {
	case w.closed:
		return errStreamClosed
	case w.err != nil:
		return w.err
	}
	if _, err := w.body.Write(p); err != nil {
		w.err = err
	}
	return w.err
}

func (w *EventWriter) delayedFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed && w.unflushed {
		_ = w.flushLocked() // recorded in w.err for the next event
	}
}

func (w *EventWriter) sendKeepAlive() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.writeLocked([]byte(":keep-alive\n")) == nil && w.flushLocked() == nil && !w.closed {
		w.keepAlive.Reset(w.period)
	}
}

func (w *EventWriter) flushLocked() error {
	if w.err == nil && !w.closed {
		if w.flushTimer != nil {
			w.flushTimer.Stop()
		}
		w.unflushed = false
		w.err = w.body.Flush()
	}
	return w.err
}

// Close stops the timers; the writer is unusable after it. What is not
// yet flushed leaves with the end of the body when the handler returns.
func (w *EventWriter) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.keepAlive.Stop()
	if w.flushTimer != nil {
		w.flushTimer.Stop()
	}
}

// StreamEnd tells which event ends a stream: a direct reply, or a
// terminal or interrupted state, but for the snapshot a subscription
// without Last-Event-ID opens with, which never ends it, even in a settled
// state: the Handler follows a task waiting for input to the end of its
// next run. Its zero value is a stream that opens with no snapshot.
type StreamEnd struct{ snapshot bool }

// NewStreamEnd returns the StreamEnd of a streaming call: a subscription
// whose request names no Last-Event-ID opens with a snapshot.
func NewStreamEnd(subscribe bool, lastEventID []byte) StreamEnd {
	return StreamEnd{snapshot: subscribe && len(lastEventID) == 0}
}

// Last reports whether ev, the stream's next event, is its last.
func (s *StreamEnd) Last(ev a2a.Event) bool {
	snapshot := s.snapshot
	s.snapshot = false
	if snapshot {
		return false
	}
	if _, isMsg := ev.(*a2a.Message); isMsg {
		return true
	}
	st, ok := a2a.StateOf(ev)
	return ok && st.Settled()
}

// EventID is the SSE id of an event of sequence number seq: "" for an
// event a task's log does not number (a direct reply).
func EventID(seq uint64) string {
	if seq == 0 {
		return ""
	}
	return strconv.FormatUint(seq, 10)
}
