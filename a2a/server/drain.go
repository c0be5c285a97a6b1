package server

import (
	"context"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// retryDrain is the retry guidance of work refused by a draining Handler:
// by then another replica (or this one's successor) takes it.
const retryDrain = time.Second

// drainState is what Drain and EndStreams change; its channels are made
// by New and closed once.
type drainState struct {
	// draining is closed by Drain; streamsEnd by EndStreams, which also
	// cancels streams.
	draining   chan struct{}
	streams    context.Context
	endStreams context.CancelFunc
	// active counts the runs going on, idle is closed once Drain has been
	// called and active is 0; both guarded by Handler.mu.
	active int
	idle   chan struct{}
}

func (d *drainState) init() {
	d.draining, d.idle = make(chan struct{}), make(chan struct{})
	d.streams, d.endStreams = context.WithCancel(context.Background())
}

// Drain readies the Handler for its server's shutdown. From now on a
// message (SendMessage, SendStreamingMessage; a new task or a follow-up)
// is refused before anything is done with a retryable error (a2a.Busy,
// which the bindings answer as HTTP 503 with Retry-After, gRPC UNAVAILABLE
// with a RetryInfo, JSON-RPC -32603 with a RetryInfo), so that the client
// sends it again, to another replica behind the same address; messages
// waiting for a run (Limits.MaxRuns) are refused so too. Runs going on go
// on, and every other operation is served as before. The channel it
// returns is closed once no run is going on. Drain may be called more
// than once.
func (h *Handler) Drain() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.drain.draining:
	default:
		close(h.drain.draining)
		if h.drain.active == 0 {
			close(h.drain.idle)
		}
	}
	return h.drain.idle
}

// Draining reports whether Drain has been called.
func (h *Handler) Draining() bool {
	select {
	case <-h.drain.draining:
		return true
	default:
		return false
	}
}

// EndStreams ends every stream the Handler is serving (SendStreamingMessage,
// SubscribeToTask) as a cut connection would: the stream stops after the
// events sent so far, without an error, and a client resumes it with
// SubscribeToTask after the last event it received, at a replica that
// shares the stores. A stream asked for afterwards is refused with a
// retryable error. A server calls it once its runs have ended (their own
// streams have ended with them), before it stops serving; the task of a
// stream that is ended goes on wherever it runs.
func (h *Handler) EndStreams() { h.drain.endStreams() }

// streamContext returns ctx ended by EndStreams too, or the retryable error
// that refuses a stream once EndStreams has been called. Call stop when
// the stream is over.
func (h *Handler) streamContext(ctx context.Context) (_ context.Context, stop func(), err error) {
	if h.drain.streams.Err() != nil {
		return nil, nil, a2a.Busy(retryDrain, "the agent's server is shutting down and serves no new streams; subscribe again (another replica serves the task)")
	}
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(h.drain.streams, cancel)
	return ctx, func() { unhook(); cancel() }, nil
}

func errDraining() error {
	return a2a.Busy(retryDrain, "the agent's server is shutting down and takes no new messages; nothing was done, send it again (another replica takes it)")
}

// enterRun counts a message that is to start a run, from its admission
// to the run's end, unless Drain has been called: then it is refused.
// Counting and refusing under one lock means no run starts once Drain's
// channel is closed.
func (h *Handler) enterRun() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.drain.draining:
		return errDraining()
	default:
	}
	h.drain.active++
	return nil
}

// exitRun ends what enterRun counted.
func (h *Handler) exitRun() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.drain.active--; h.drain.active == 0 {
		select {
		case <-h.drain.draining:
			close(h.drain.idle)
		default:
		}
	}
}
