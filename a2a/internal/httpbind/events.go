package httpbind

import (
	"errors"
	"sync"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
	"github.com/cloudwego/hertz/pkg/protocol/sse"

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

// EventWriter writes a stream's events with Hertz's SSE writer. An event
// that does not end the stream is flushed FlushDelay later unless a write
// flushes it first; the last one leaves with the end of the body, which
// Hertz writes and flushes when the handler returns. A keep-alive comment
// goes out every keepAlive to hold idle connections open through proxies
// and reveal a client that left. Timers, not goroutines, drive the delayed
// work; Close stops them.
type EventWriter struct {
	sse *sse.Writer

	mu         sync.Mutex
	body       network.ExtWriter // the chunked body under sse
	unflushed  bool
	flushTimer *time.Timer // armed while unflushed
	keepAlive  *time.Timer
	period     time.Duration
	closed     bool
	err        error // the first write or flush error
}

// NewEventWriter starts an event stream as c's response: its body is
// written through the EventWriter from now on.
func NewEventWriter(c *app.RequestContext, keepAlive time.Duration) *EventWriter {
	w := &EventWriter{body: resp.NewChunkedBodyWriter(&c.Response, c.GetWriter()), period: keepAlive}
	// The SSE writer writes through w, which decides when to flush.
	c.Response.HijackWriter(bodyWriter{w})
	w.sse = sse.NewWriter(c)
	w.keepAlive = time.AfterFunc(keepAlive, w.sendKeepAlive)
	return w
}

// Event writes one event: its SSE id (none when ""), its type (none, the
// default "message", when "") and its data. last says it ends the stream.
func (w *EventWriter) Event(id, event string, data []byte, last bool) error {
	if err := w.sse.WriteEvent(id, event, data); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if last {
		// The handler returns now, and Hertz flushes the body's end.
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

func (w *EventWriter) delayedFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed && w.unflushed {
		_ = w.flushLocked() // recorded in w.err for the next event
	}
}

func (w *EventWriter) sendKeepAlive() {
	if w.sse.WriteKeepAlive() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flushLocked() == nil && !w.closed {
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
// yet flushed leaves with the end of the body, which Hertz writes when the
// handler returns.
func (w *EventWriter) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.keepAlive.Stop()
	if w.flushTimer != nil {
		w.flushTimer.Stop()
	}
}

// bodyWriter is the body the SSE writer sees: writes go through under the
// EventWriter's lock, and flushing is the EventWriter's decision.
type bodyWriter struct{ w *EventWriter }

func (b bodyWriter) Write(p []byte) (int, error) {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	switch {
	case b.w.closed:
		return 0, errStreamClosed
	case b.w.err != nil:
		return 0, b.w.err
	}
	n, err := b.w.body.Write(p)
	if err != nil {
		b.w.err = err
	}
	return n, err
}

func (b bodyWriter) Flush() error { return nil }

func (b bodyWriter) Finalize() error {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.w.body.Finalize()
}

// EndsStream reports whether ev is a stream's last event: a direct reply,
// or a terminal or interrupted state.
func EndsStream(ev a2a.Event) bool {
	if _, isMsg := ev.(*a2a.Message); isMsg {
		return true
	}
	s, ok := a2a.StateOf(ev)
	return ok && s.Settled()
}
