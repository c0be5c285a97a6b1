package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// Event is one event of a task stream.
type Event struct {
	a2a.Event
	// ID is the event's id in its task's stream. An a2amesh server numbers
	// a task's events from 1, on every binding; pass the last ID received
	// to Resubscribe to continue after it. It is "" for events sent
	// without one (a direct message reply, a server that does not number
	// events).
	ID string
}

// SendStreamingMessage sends a message and streams the task's events until
// it reaches a final or interrupted state: first the task, then its status
// and artifact updates. A direct message reply is the only event. If the
// connection is cut, the stream resumes after the last event received (see
// Config.ResumeAttempts), so no event is lost or repeated.
func (c *Client) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, opts ...CallOption) iter.Seq2[Event, error] {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return c.stream(ctx, &StreamRequest{Send: &r}, "", withGenerations(opts, conditional(req)))
}

// SubscribeToTask streams a running task's events, starting with the task
// as it is now, until it reaches a final or interrupted state.
func (c *Client) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, opts ...CallOption) iter.Seq2[Event, error] {
	r := *req
	r.Tenant = c.withTenant(r.Tenant)
	return c.stream(ctx, &StreamRequest{Subscribe: &r}, req.ID, opts)
}

// Resubscribe continues a task's stream after the event with the given ID,
// replaying what was missed (even if the task has ended meanwhile) and then
// following it until it reaches a final or interrupted state. It needs a
// server that numbers events, as a2amesh servers do.
func (c *Client) Resubscribe(ctx context.Context, taskID, lastEventID string, opts ...CallOption) iter.Seq2[Event, error] {
	req := &StreamRequest{Subscribe: &a2a.SubscribeToTaskRequest{ID: taskID, Tenant: c.tenant}, LastEventID: lastEventID}
	return c.stream(ctx, req, taskID, opts)
}

// stream runs a streaming call, resuming it when it is cut. taskID is the
// task when the call names one; a send learns it from its first event.
// Each resumption that delivers an event earns back the attempts spent.
// Resumptions share one idle timeout from the cut: a server that hangs
// fails the stream within about twice the timeout, however many attempts
// are left.
func (c *Client) stream(ctx context.Context, req *StreamRequest, taskID string, opts []CallOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		cc := applyCalls(c.calls, opts)
		tenant := c.tenant
		if req.Send != nil {
			tenant = req.Send.Tenant
		} else if req.Subscribe != nil {
			tenant = req.Subscribe.Tenant
		}
		lastID := req.LastEventID
		failures := 0
		var cutAt time.Time // when the stream was cut, until the server is heard from again
		for {
			wait := c.idle
			if !cutAt.IsZero() {
				wait -= time.Since(cutAt)
			}
			progressed := false
			attempt := *req
			attempt.LastEventID = lastID
			done, heard, err := c.streamOnce(ctx, &attempt, cc, wait, func(ev Event) bool {
				progressed = true
				if id, _ := ev.TaskIDs(); id != "" {
					taskID = id
				}
				if ev.ID != "" {
					lastID = ev.ID
				}
				return yield(ev, nil)
			})
			if done {
				return
			}
			if progressed {
				failures = 0
			}
			if heard || cutAt.IsZero() {
				cutAt = time.Now()
			}
			// Resume only where it is exact: after a numbered event of a
			// known task, on a server that honours Last-Event-ID. A
			// resumption the server refuses for now (a replica that is
			// shutting down, behind an address that has not yet stopped
			// sending to it) is tried again after the wait it asks for.
			_, numErr := strconv.ParseUint(lastID, 10, 64)
			var retryIn time.Duration
			if e := (*a2a.Error)(nil); failures > 0 && errors.As(err, &e) {
				retryIn = e.RetryAfter
			}
			if err != nil && ctx.Err() == nil && (errors.Is(err, ErrStreamCut) || retryIn > 0) && failures < c.resumes && taskID != "" && numErr == nil &&
				(c.idle <= 0 || time.Since(cutAt)+retryIn < c.idle) && pause(ctx, retryIn) {
				failures++
				req = &StreamRequest{Subscribe: &a2a.SubscribeToTaskRequest{ID: taskID, Tenant: tenant}}
				continue
			}
			if err == nil {
				return
			}
			yield(Event{}, err)
			return
		}
	}
}

// pause waits d (none when d <= 0), or until ctx ends; it reports whether
// it waited d.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// streamOnce performs one streaming exchange. wait bounds the wait for the
// server's first word (when the idle timeout is on), and the idle timeout
// each later silence. done reports that the consumer stopped or the stream
// ended normally; otherwise err says why it ended, wrapping ErrStreamCut
// when it can be resumed. heard reports that the server answered at all.
func (c *Client) streamOnce(ctx context.Context, req *StreamRequest, cc *callConfig, wait time.Duration,
	yield func(Event) bool) (done, heard bool, err error) {
	op := "SubscribeToTask"
	if req.Send != nil {
		op = "SendStreamingMessage"
	}
	// Asked on every attempt: a resumption may come after the token
	// expired. Not resumable: a retry would ask the same credentials.
	h, err := c.authenticate(ctx, op, cc.header)
	if err != nil {
		return false, false, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The idle timer runs from the request on, so that a server that
	// accepts the connection and never answers is cut too; but only while
	// waiting for the server, not while the consumer handles an event.
	var answered atomic.Bool
	pause, resume := func() {}, func() {}
	req.Alive = func() { answered.Store(true) }
	if c.idle > 0 {
		idle := time.AfterFunc(max(wait, 0), func() {
			msg := fmt.Sprintf("no event or keep-alive for %s", c.idle)
			if !answered.Load() {
				msg = fmt.Sprintf("no response for %s", c.idle)
			}
			cancel(&timeoutError{msg: msg, idle: true})
		})
		defer idle.Stop()
		req.Alive = func() {
			answered.Store(true)
			idle.Reset(c.idle)
		}
		pause, resume = func() { idle.Stop() }, func() { idle.Reset(c.idle) }
	}
	st, err := c.t.OpenStream(ctx, req, h)
	if err != nil {
		return false, answered.Load(), c.streamError(ctx, op, err)
	}
	defer st.Close()
	for {
		ev, err := st.Recv()
		if err != nil {
			if err == io.EOF {
				err = fmt.Errorf("a2a client: %s %s: %w: the server ended the stream before the task settled", op, c.url, ErrStreamCut)
			}
			return false, answered.Load(), c.streamError(ctx, op, err)
		}
		pause()
		more := yield(ev)
		if final(ev.Event) || !more {
			return true, true, nil
		}
		resume()
	}
}

// final reports whether ev ends its stream: a direct reply, or a final or
// interrupted state.
func final(ev a2a.Event) bool {
	if _, isMsg := ev.(*a2a.Message); isMsg {
		return true
	}
	s, ok := a2a.StateOf(ev)
	return ok && s.Settled()
}

// streamError explains why a stream failed with err: the caller's context
// ended it (not resumable), the client's idle timeout cut it (resumable),
// or the transport's error, as it is.
func (c *Client) streamError(ctx context.Context, op string, err error) error {
	if cause := context.Cause(ctx); ctx.Err() != nil {
		if te, ok := cause.(*timeoutError); ok && te.idle {
			return fmt.Errorf("a2a client: %s %s: %w: %w", op, c.url, ErrStreamCut, te)
		}
		return fmt.Errorf("a2a client: %s %s: %w", op, c.url, cause)
	}
	return err
}

// replayable marks a POST that may be sent again when the connection it
// went out on turns out to have been closed before any of the answer
// came back: a kept-alive connection that a server closed as the request
// left, which happens whenever a replica drains or restarts behind a
// Service. net/http's Transport resends such a request on a new
// connection only when it carries an Idempotency-Key, and so do proxies
// that honour the header. The calls marked are those a resend cannot
// repeat the effect of, or almost: the reads, and the streams
// (SendStreamingMessage and SubscribeToTask), whose server answers the
// moment a task exists, so that an answer lost before its first byte
// started a task only if the server died in between. A blocking
// SendMessage is not marked: its answer may come only when the task ends,
// and a resend then would run the task twice.
func replayable(req *http.Request) {
	req.Header.Set("Idempotency-Key", a2a.NewID())
}
