package jsonrpcserver

import (
	"errors"
	"sync"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
	"github.com/cloudwego/hertz/pkg/protocol/sse"
)

// FlushDelay is how long an event that does not end its stream may wait
// for the next one before it is sent. An agent's events often come in
// bursts (the answer, then the final status); one write for the burst
// saves a system call on this side and a wake-up on the reader's, for at
// most this much delay of an event that is not the last.
const FlushDelay = time.Millisecond

// errStreamClosed is the error of writes after the stream ended.
var errStreamClosed = errors.New("event stream closed")

// eventWriter writes a stream's events with Hertz's SSE writer. An event
// that does not end the stream is flushed FlushDelay later unless a write
// flushes it first; the last one leaves with the end of the body, which
// Hertz writes and flushes when the handler returns. A keep-alive comment
// goes out every keepAlive to hold idle connections open through proxies
// and reveal a client that left. Timers, not goroutines, drive the delayed
// work; close stops them.
type eventWriter struct {
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

func newEventWriter(c *app.RequestContext, keepAlive time.Duration) *eventWriter {
	w := &eventWriter{body: resp.NewChunkedBodyWriter(&c.Response, c.GetWriter()), period: keepAlive}
	// The SSE writer writes through w, which decides when to flush.
	c.Response.HijackWriter(bodyWriter{w})
	w.sse = sse.NewWriter(c)
	w.keepAlive = time.AfterFunc(keepAlive, w.sendKeepAlive)
	return w
}

// event writes one event; last says it ends the stream.
func (w *eventWriter) event(id string, data []byte, last bool) error {
	if err := w.sse.WriteEvent(id, "", data); err != nil {
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

func (w *eventWriter) delayedFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed && w.unflushed {
		_ = w.flushLocked() // recorded in w.err for the next event
	}
}

func (w *eventWriter) sendKeepAlive() {
	if w.sse.WriteKeepAlive() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flushLocked() == nil && !w.closed {
		w.keepAlive.Reset(w.period)
	}
}

func (w *eventWriter) flushLocked() error {
	if w.err == nil && !w.closed {
		if w.flushTimer != nil {
			w.flushTimer.Stop()
		}
		w.unflushed = false
		w.err = w.body.Flush()
	}
	return w.err
}

// close stops the timers; the writer is unusable after it. What is not
// yet flushed leaves with the end of the body, which Hertz writes when the
// handler returns.
func (w *eventWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	w.keepAlive.Stop()
	if w.flushTimer != nil {
		w.flushTimer.Stop()
	}
}

// bodyWriter is the body the SSE writer sees: writes go through under the
// eventWriter's lock, and flushing is the eventWriter's decision.
type bodyWriter struct{ w *eventWriter }

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
