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
// WithResumeAttempts), so no event is lost or repeated.
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
func (c *Client) stream(ctx context.Context, op jsonrpc.Op, params any, taskID, lastEventID string, opts []CallOption) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		cc := applyCalls(c.calls, opts)
		lastID := lastEventID
		failures := 0
		for {
			progressed := false
			done, err := c.streamOnce(ctx, op, params, lastID, cc, func(ev Event) bool {
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
			// Resume only where it is exact: after a numbered event of a
			// known task, on a server that honours Last-Event-ID.
			if _, numErr := strconv.ParseUint(lastID, 10, 64); err != nil && ctx.Err() == nil &&
				errors.Is(err, errStreamCut) && failures < c.resumes && taskID != "" && numErr == nil {
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

// streamOnce performs one streaming HTTP exchange. done reports that the
// consumer stopped or the stream ended normally; otherwise err says why it
// ended, wrapping errStreamCut when it can be resumed.
func (c *Client) streamOnce(ctx context.Context, op jsonrpc.Op, params any, lastEventID string, cc *callConfig, yield func(Event) bool) (done bool, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, id, err := c.newRequest(ctx, op, params, cc, true)
	if err != nil {
		return false, err
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return false, fmt.Errorf("a2a client: %s %s: %w", op, c.url, context.Cause(ctx))
		}
		return false, fmt.Errorf("a2a client: %s %s: %w: %w", op, c.url, errStreamCut, err)
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		// An error answered as a plain JSON-RPC response.
		body, rerr := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxEv)))
		if rerr != nil {
			return false, fmt.Errorf("a2a client: %s %s: read response: %w", op, c.url, rerr)
		}
		if derr := c.decodeUnary(op, id, resp.StatusCode, resp.Status, body, nil); derr != nil {
			return false, derr
		}
		return false, fmt.Errorf("a2a client: %s %s: HTTP %s: the server answered a stream with %q", op, c.url, resp.Status, resp.Header.Get("Content-Type"))
	}
	// The idle timer runs only while waiting for the server, not while
	// the consumer handles an event.
	var onBytes func()
	pause, resume := func() {}, func() {}
	if c.idle > 0 {
		idle := time.AfterFunc(c.idle, func() {
			cancel(fmt.Errorf("%w: nothing received for %s", errIdle, c.idle))
		})
		defer idle.Stop()
		onBytes = func() { idle.Reset(c.idle) }
		pause, resume = func() { idle.Stop() }, func() { idle.Reset(c.idle) }
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
			if cause := context.Cause(ctx); cause != nil {
				if !errors.Is(cause, errIdle) {
					return false, fmt.Errorf("a2a client: %s: %w", op, cause)
				}
				err = cause
			}
			if errors.Is(err, errEventTooLarge) {
				return false, fmt.Errorf("a2a client: %s: %w", op, err)
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return false, fmt.Errorf("a2a client: %s %s: %w: %w", op, c.url, errStreamCut, err)
		}
		ev, final, err := c.decodeStreamEvent(op, raw.Data)
		if err != nil {
			return false, err
		}
		pause()
		more := yield(Event{Event: ev, ID: raw.ID})
		if final {
			// The server ends the stream after its final event; reading up
			// to the end lets the connection be reused instead of closed.
			stop := time.AfterFunc(100*time.Millisecond, func() { cancel(nil) })
			_, _ = io.CopyN(io.Discard, resp.Body, 64<<10) // what is left is not ours to check
			stop.Stop()
			return true, nil
		}
		if !more {
			return true, nil
		}
		resume()
	}
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
