package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// Event is one event of a task stream.
type Event struct {
	a2a.Event
	// ID is the event's SSE id. An a2amesh server numbers a task's events
	// from 1; pass the last ID received to Resubscribe to continue after it.
	// It is "" for events sent without one (a direct message reply).
	ID string
}

// SendStreamingMessage sends a message and streams the task's events until
// it reaches a final or interrupted state: first the task, then its status
// and artifact updates. A direct message reply is the only event. If the
// connection is cut, the stream resumes after the last event received (see
// Config.ResumeAttempts), so no event is lost or repeated.
func (c *Client) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, opts ...CallOption) iter.Seq2[Event, error] {
	var params any
	if c.v03() {
		params = a2av03.FromSendMessageRequest(req)
	} else {
		r := *req
		r.Tenant = c.withTenant(r.Tenant)
		params = &r
	}
	return c.stream(ctx, jsonrpc.OpSendStreamingMessage, params, "", "", opts)
}

// SubscribeToTask streams a running task's events, starting with the task
// as it is now, until it reaches a final or interrupted state.
func (c *Client) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, opts ...CallOption) iter.Seq2[Event, error] {
	return c.stream(ctx, jsonrpc.OpSubscribeToTask, c.subscribeParams(req.ID, req.Tenant), req.ID, "", opts)
}

// Resubscribe continues a task's stream after the event with the given ID,
// replaying what was missed (even if the task has ended meanwhile) and then
// following it until it reaches a final or interrupted state. It needs a
// server that numbers events, as a2amesh servers do.
func (c *Client) Resubscribe(ctx context.Context, taskID, lastEventID string, opts ...CallOption) iter.Seq2[Event, error] {
	return c.stream(ctx, jsonrpc.OpSubscribeToTask, c.subscribeParams(taskID, ""), taskID, lastEventID, opts)
}

func (c *Client) subscribeParams(taskID, tenant string) any {
	if c.v03() {
		return &a2av03.TaskIDParams{ID: taskID}
	}
	return &a2a.SubscribeToTaskRequest{ID: taskID, Tenant: c.withTenant(tenant)}
}

// stream runs a streaming call, resuming it when it is cut. taskID is the
// task when the call names one; a send learns it from its first event.
// Each resumption that delivers an event earns back the attempts spent.
// Resumptions share one idle timeout from the cut: a server that hangs
// fails the stream within about twice the timeout, however many attempts
// are left.
func (c *Client) stream(ctx context.Context, op jsonrpc.Op, params any, taskID, lastEventID string, opts []CallOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		cc := applyCalls(c.calls, opts)
		lastID := lastEventID
		failures := 0
		var cutAt time.Time // when the stream was cut, until the server is heard from again
		for {
			wait := c.idle
			if !cutAt.IsZero() {
				wait -= time.Since(cutAt)
			}
			progressed := false
			done, heard, err := c.streamOnce(ctx, op, params, lastID, cc, wait, func(ev Event) bool {
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
			// known task, on a server that honours Last-Event-ID.
			_, numErr := strconv.ParseUint(lastID, 10, 64)
			if err != nil && ctx.Err() == nil && errors.Is(err, errStreamCut) && failures < c.resumes && taskID != "" && numErr == nil &&
				(c.idle <= 0 || time.Since(cutAt) < c.idle) {
				failures++
				op, params = jsonrpc.OpSubscribeToTask, c.subscribeParams(taskID, "")
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

// streamOnce performs one streaming HTTP exchange. wait bounds the wait
// for the response headers (when the idle timeout is on), and the idle
// timeout each later silence. done reports that the consumer stopped or
// the stream ended normally; otherwise err says why it ended, wrapping
// errStreamCut when it can be resumed. heard reports that the server
// answered at all.
func (c *Client) streamOnce(ctx context.Context, op jsonrpc.Op, params any, lastEventID string, cc *callConfig, wait time.Duration,
	yield func(Event) bool) (done, heard bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, id, err := c.newRequest(ctx, op, params, cc, true)
	if err != nil {
		return false, false, err
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	// The idle timer runs from the request on, so that a server that
	// accepts the connection and never answers is cut too; but only while
	// waiting for the server, not while the consumer handles an event.
	var answered atomic.Bool
	pause, resume := func() {}, func() {}
	var onBytes func()
	if c.idle > 0 {
		idle := time.AfterFunc(max(wait, 0), func() {
			msg := fmt.Sprintf("no event or keep-alive for %s", c.idle)
			if !answered.Load() {
				msg = fmt.Sprintf("no response for %s", c.idle)
			}
			cancel(&timeoutError{msg: msg, idle: true})
		})
		defer idle.Stop()
		onBytes = func() { idle.Reset(c.idle) }
		pause, resume = func() { idle.Stop() }, onBytes
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return false, false, c.cutOrFailed(ctx, op, err)
	}
	defer resp.Body.Close()
	answered.Store(true)
	if onBytes != nil {
		onBytes()
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// An error answered as a plain JSON-RPC response.
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxEv)))
		if rerr != nil {
			return false, true, fmt.Errorf("a2a client: %s %s: read response: %w", op, c.url, timeoutCause(ctx, rerr))
		}
		if derr := c.decodeUnary(op, id, resp.StatusCode, resp.Status, body, nil); derr != nil {
			return false, true, derr
		}
		return false, true, fmt.Errorf("a2a client: %s %s: HTTP %s: the server answered a stream with %q", op, c.url, resp.Status, resp.Header.Get("Content-Type"))
	}
	br, _ := c.sseBuffers.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(resp.Body, sseBufferSize)
	} else {
		br.Reset(resp.Body)
	}
	defer func() {
		br.Reset(nil)
		c.sseBuffers.Put(br)
	}()
	sse := newSSEReader(br, c.maxEv, onBytes)
	for {
		raw, err := sse.Next()
		if err != nil {
			if errors.Is(err, errEventTooLarge) {
				return false, true, fmt.Errorf("a2a client: %s: %w", op, err)
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return false, true, c.cutOrFailed(ctx, op, err)
		}
		ev, final, err := c.decodeStreamEvent(op, raw.Data)
		if err != nil {
			return false, true, err
		}
		pause()
		more := yield(Event{Event: ev, ID: raw.ID})
		if final {
			// The server ends the stream after its final event; reading up
			// to the end lets the connection be reused instead of closed.
			stop := time.AfterFunc(100*time.Millisecond, func() { cancel(nil) })
			_, _ = io.CopyN(io.Discard, resp.Body, 64<<10) // what is left is not ours to check
			stop.Stop()
			return true, true, nil
		}
		if !more {
			return true, true, nil
		}
		resume()
	}
}

// cutOrFailed explains why a stream's request or body failed with err: the
// caller's context ended it (not resumable), or the connection failed or
// went idle (a cut, resumable).
func (c *Client) cutOrFailed(ctx context.Context, op jsonrpc.Op, err error) error {
	if cause := context.Cause(ctx); ctx.Err() != nil {
		if te, ok := cause.(*timeoutError); !ok || !te.idle {
			return fmt.Errorf("a2a client: %s %s: %w", op, c.url, cause)
		}
		err = cause
	}
	return fmt.Errorf("a2a client: %s %s: %w: %w", op, c.url, errStreamCut, err)
}

// decodeStreamEvent decodes one SSE data payload: a JSON-RPC response whose
// result is a stream event. final reports that the event ends the stream.
func (c *Client) decodeStreamEvent(op jsonrpc.Op, data []byte) (ev a2a.Event, final bool, err error) {
	r, err := jsonrpc.DecodeResponse(data)
	if err != nil {
		return nil, false, fmt.Errorf("a2a client: %s: stream event is not a JSON-RPC response: %w", op, err)
	}
	if r.Error != nil {
		return nil, false, fmt.Errorf("a2a client: %s: %w", op, r.Error.Err())
	}
	if c.v03() {
		// 0.3's "final" flag marks the same events as the state does.
		ev, err = a2av03.DecodeEvent(r.Result)
	} else {
		var sr a2a.StreamResponse
		if err = a2a.Unmarshal(r.Result, &sr); err == nil {
			ev, err = sr.Event()
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("a2a client: %s: decode stream event: %w", op, err)
	}
	if _, isMsg := ev.(*a2a.Message); isMsg {
		return ev, true, nil
	}
	if s, ok := a2a.StateOf(ev); ok && s.Settled() {
		final = true
	}
	return ev, final, nil
}
