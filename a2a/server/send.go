package server

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// SendMessage handles a message. It returns the task once it settles
// (terminal or interrupted) or, with returnImmediately, as soon as it
// exists; or the agent's direct *a2a.Message reply. With the generation
// extension active the task carries its generation, and a message with
// ifGenerationMatch continues its task only at that generation.
func (h *Handler) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.Event, error) {
	r, err := h.startRun(ctx, req, false)
	if err != nil {
		return nil, err
	}
	r.eager = req.Configuration != nil && req.Configuration.ReturnImmediately
	// A blocking send waits for the run anyway, so the run uses this
	// goroutine instead of a new one.
	blocking := req.Configuration == nil || !req.Configuration.ReturnImmediately
	if err := h.launch(r, blocking); err != nil {
		return nil, err
	}
	select {
	case <-r.started:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	switch {
	case r.err != nil:
		return nil, r.err
	case r.reply != nil:
		return r.reply, nil
	}
	cfg := req.Configuration
	gens := h.generations(ctx)
	if cfg != nil && cfg.ReturnImmediately {
		t := view(r.first, cfg.HistoryLength, true)
		if gens {
			t = withGeneration(t, r.firstSeq)
		}
		return t, nil
	}
	select {
	case <-r.settled:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if r.final == nil {
		return nil, r.unstored
	}
	t := r.final
	if cfg != nil {
		t = view(t, cfg.HistoryLength, true)
	}
	if gens {
		t = withGeneration(t, r.settledSeq())
	}
	return t, nil
}

// SendStreamingMessage handles a message and streams the task's events
// until it settles: first the task, then its status and artifact updates,
// each with its sequence number (and, with the generation extension
// active, carrying it as its generation). A direct message reply is the
// only event, with sequence number 0. Errors found before the stream
// starts are its only item. A consumer that stops early does not stop the
// agent.
func (h *Handler) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		if h.generations(ctx) {
			yield = numbered(yield)
		}
		if !h.card.Capabilities.Streaming {
			yield(eventlog.Entry{}, a2a.Errorf(a2a.CodeUnsupportedOperation, "this agent does not stream (its card does not declare capabilities.streaming); use SendMessage"))
			return
		}
		ctx, stop, err := h.streamContext(ctx)
		if err != nil {
			yield(eventlog.Entry{}, err)
			return
		}
		defer stop()
		r, err := h.startRun(ctx, req, true)
		if err == nil {
			err = h.launch(r, false)
		}
		if err != nil {
			yield(eventlog.Entry{}, err)
			return
		}
		select {
		case <-r.started:
		case <-ctx.Done():
			return
		}
		switch {
		case r.err != nil:
			yield(eventlog.Entry{}, r.err)
		case r.reply != nil:
			yield(eventlog.Entry{Event: r.reply}, nil)
		default:
			h.followRun(ctx, r, r.firstSeq-1, yield)
		}
	}
}

// SubscribeToTask streams a task's events until it settles. Without a
// lastEventID it starts with the current task snapshot (carrying the
// sequence number it reflects) and refuses a terminal task; a task waiting
// for input (or authorization) has settled already, so its stream follows
// the run the next message starts until that run settles: the
// specification lets a client subscribe to any task not in a terminal
// state, and a stream that closed after the snapshot would show it nothing
// GetTask does not. With one (an
// SSE Last-Event-ID: a sequence number this server sent) it replays exactly
// the events after it, terminal tasks included, so a cut stream resumes
// with nothing lost or repeated. With the generation extension active each
// event carries its sequence number as its generation.
func (h *Handler) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest, lastEventID string) iter.Seq2[eventlog.Entry, error] {
	return func(yield func(eventlog.Entry, error) bool) {
		if h.generations(ctx) {
			yield = numbered(yield)
		}
		if !h.card.Capabilities.Streaming {
			yield(eventlog.Entry{}, a2a.Errorf(a2a.CodeUnsupportedOperation, "this agent does not stream (its card does not declare capabilities.streaming); poll with GetTask"))
			return
		}
		ctx, stop, err := h.streamContext(ctx)
		if err != nil {
			yield(eventlog.Entry{}, err)
			return
		}
		defer stop()
		err = h.checkID("tenant", req.Tenant)
		if err == nil {
			ctx, err = h.scope(ctx, req.Tenant)
		}
		var e taskstore.Entry
		if err == nil {
			e, err = h.getTask(ctx, req.ID)
		}
		if err != nil {
			yield(eventlog.Entry{}, err)
			return
		}
		if lastEventID == "" {
			state := e.Task.Status.State
			if state.Terminal() {
				yield(eventlog.Entry{}, a2a.Errorf(a2a.CodeUnsupportedOperation, "task %q is already %s; use GetTask for its final state (or resume a stream with Last-Event-ID)", req.ID, state))
				return
			}
			if !yield(eventlog.Entry{Seq: e.Seq, Event: e.Task}, nil) {
				return
			}
			h.followTask(ctx, req.ID, e.Seq, yield)
			return
		}
		after, err := strconv.ParseUint(strings.TrimSpace(lastEventID), 10, 64)
		if err != nil {
			yield(eventlog.Entry{}, a2a.Errorf(a2a.CodeInvalidParams, "Last-Event-ID %q is not an event sequence number of this server's streams", lastEventID))
			return
		}
		if after > e.Seq {
			yield(eventlog.Entry{}, a2a.Errorf(a2a.CodeInvalidParams, "Last-Event-ID %d is beyond task %q's last event %d", after, req.ID, e.Seq))
			return
		}
		h.followTask(ctx, req.ID, after, yield)
	}
}

// followTask is follow for a subscriber. While a run in this process
// holds the task, its events come from the run, as the run's own stream's
// do, rather than from a subscription to the log: on JetStream that is a
// consumer on the NATS server, which costs it memory and work per stream,
// and the events stream takes at most 1,000 consumers (nats-server's
// default).
func (h *Handler) followTask(ctx context.Context, taskID string, after uint64, yield func(eventlog.Entry, error) bool) {
	h.mu.Lock()
	s := h.slots[taskID]
	h.mu.Unlock()
	var r *run
	if s != nil {
		s.mu.Lock()
		r = s.run
		s.mu.Unlock()
	}
	if r == nil {
		h.follow(ctx, taskID, after, yield)
		return
	}
	h.followRun(ctx, r, after, yield)
}

// follow yields the task's logged events after seq after until one of them
// settles the task.
func (h *Handler) follow(ctx context.Context, taskID string, after uint64, yield func(eventlog.Entry, error) bool) {
	for e, err := range h.events.Subscribe(ctx, taskID, after) {
		if err != nil {
			if ctx.Err() == nil {
				yield(eventlog.Entry{}, fmt.Errorf("follow task %s: %w", taskID, err))
			}
			return
		}
		if !yield(e, nil) {
			return
		}
		if s, ok := a2a.StateOf(e.Event); ok && s.Settled() {
			return
		}
	}
}

// launch runs r, in this goroutine when inline, else in a new one. A
// Handler that is closing refuses, and r is abandoned.
func (h *Handler) launch(r *run, inline bool) error {
	if !h.admit() {
		r.abandon()
		return a2a.Errorf(a2a.CodeInternal, "the server is shutting down")
	}
	if inline {
		r.execute()
	} else {
		go r.execute()
	}
	return nil
}

// startRun validates a send and takes the task for a run; launch runs it.
func (h *Handler) startRun(ctx context.Context, req *a2a.SendMessageRequest, streaming bool) (*run, error) {
	ctx, err := h.scope(ctx, req.Tenant)
	if err != nil {
		return nil, err
	}
	if err := h.checkSend(ctx, req); err != nil {
		return nil, err
	}
	if err := h.enterRun(); err != nil {
		return nil, err
	}
	if req.Message.TaskID == "" {
		if err := h.admitTask(); err != nil {
			h.exitRun()
			return nil, err
		}
	}
	if err := h.admitRun(ctx); err != nil {
		h.exitRun()
		return nil, err
	}
	r, err := h.startRunAdmitted(ctx, req, streaming)
	if err != nil {
		h.releaseRun()
		h.exitRun()
		return nil, err
	}
	r.permit, r.counted = true, true
	h.observeRun(ctx, r)
	return r, nil
}

// startRunAdmitted is startRun once the message has a run permit, which
// the run returns when it ends.
func (h *Handler) startRunAdmitted(ctx context.Context, req *a2a.SendMessageRequest, streaming bool) (*run, error) {
	msg := req.Message
	call := CallInfoFrom(ctx)
	var pushCfg *push.Config
	if c := req.Configuration; c != nil && c.TaskPushNotificationConfig != nil {
		pc := *c.TaskPushNotificationConfig
		if pc.ID == "" {
			pc.ID = a2a.NewID()
		}
		pushCfg = &push.Config{TaskPushNotificationConfig: pc, ProtocolVersion: call.ProtocolVersion}
	}
	er := &ExecRequest{
		TaskID: msg.TaskID, ContextID: msg.ContextID, Message: msg, Metadata: req.Metadata,
		Streaming: streaming, Call: call,
	}
	er.Owner, _ = ownerOf(ctx)
	er.Caller = auth.FromContext(ctx)
	if req.Configuration != nil {
		er.AcceptedOutputModes = req.Configuration.AcceptedOutputModes
	}
	if msg.TaskID == "" {
		return h.startNew(ctx, er, pushCfg) // a new task: ifGenerationMatch does not apply
	}
	return h.startFollowUp(ctx, er, pushCfg, h.ifGenerationMatch(ctx, req))
}

func (h *Handler) startNew(ctx context.Context, er *ExecRequest, pushCfg *push.Config) (*run, error) {
	h.evict(ctx)
	er.TaskID = a2a.NewID()
	if er.ContextID == "" {
		er.ContextID = a2a.NewID()
	}
	er.Message.TaskID, er.Message.ContextID = er.TaskID, er.ContextID
	r := h.newRun(er)
	r.cur.Owner, _ = ownerOf(ctx)
	r.pushCfg = pushCfg
	r.s = h.slotRef(er.TaskID)
	if err := r.s.acquire(ctx, r); err != nil { // a new id: never waits
		h.slotUnref(r.s)
		return nil, err
	}
	return r, nil
}

// startFollowUp starts a run of the task a message continues; with match
// set, only if the task is at that generation when the run takes it.
func (h *Handler) startFollowUp(ctx context.Context, er *ExecRequest, pushCfg *push.Config, match *a2a.Generation) (*run, error) {
	msg := er.Message
	// Refuse at once what is refused anyway, before waiting for the task:
	// a generation only rises, so a task past match never matches.
	e, err := h.followable(ctx, msg)
	if err == nil && match != nil && e.Seq > uint64(max(*match, 0)) {
		err = checkGeneration(e, match)
	}
	if err != nil {
		return nil, err
	}
	r := h.newRun(er)
	r.s = h.slotRef(msg.TaskID)
	if err := r.s.acquire(ctx, r); err != nil {
		h.slotUnref(r.s)
		return nil, err
	}
	fail := func(err error) (*run, error) {
		r.abandon()
		return nil, err
	}
	e, err = h.followable(ctx, msg) // again: it may have changed while waiting
	if err == nil {
		err = checkGeneration(e, match)
	}
	if err != nil {
		return fail(err)
	}
	r.size = sizeOfTask(e.Task) + sizeOfMessage(msg)
	if r.size > h.limits.MaxTaskBytes {
		return fail(a2a.Errorf(a2a.CodeInvalidParams, "task %q holds about %d bytes and this message would take it past %d, the most this agent keeps per task; start a new task (keep contextId to stay in the conversation)", msg.TaskID, r.size-sizeOfMessage(msg), h.limits.MaxTaskBytes))
	}
	er.TaskID, er.ContextID = e.Task.ID, e.Task.ContextID
	msg.ContextID = e.Task.ContextID
	er.Task = e.Task
	// The run's first event is the task at work again, the new message at
	// the end of its history after the status message it answers. Leaving
	// the interrupted state here keeps that state from ending this run.
	next := *e.Task
	next.History = e.Task.History
	if old := e.Task.Status.Message; old != nil {
		next.History = append(next.History, *old)
	}
	next.History = append(next.History, *msg)
	next.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.Now()}
	r.s.mu.Lock()
	r.cur = e
	if match != nil {
		// Exactly after the generation matched: another replica's write
		// since is a mismatch, not a task to continue from.
		r.firstSeq, err = h.commitExactly(context.WithoutCancel(ctx), r.s, &r.cur, &next, *match)
	} else {
		r.firstSeq, err = h.commitLocked(context.WithoutCancel(ctx), r.s, &r.cur, &next)
	}
	r.head = r.cur.Task
	if err == nil {
		r.first = r.cur.Task
		r.feed.add(r.firstSeq, []a2a.Event{&next})
		var cfgs []push.Config
		if pushCfg != nil {
			pushCfg.TaskID = e.Task.ID
			err = h.pushCfgs.Save(ctx, *pushCfg)
		} else {
			cfgs, err = h.pushCfgs.List(ctx, e.Task.ID)
		}
		if err == nil && (pushCfg != nil || len(cfgs) > 0) {
			h.ensurePushLocked(r.s, r.firstSeq-1)
		}
	}
	r.s.mu.Unlock()
	if errors.Is(err, a2a.ErrTaskGenerationMismatch) {
		return fail(err)
	}
	if err != nil {
		return fail(fmt.Errorf("start a run of task %s: %w", e.Task.ID, err))
	}
	r.markStarted()
	return r, nil
}

// followable loads the task a message continues and checks that it can.
func (h *Handler) followable(ctx context.Context, msg *a2a.Message) (taskstore.Entry, error) {
	e, err := h.getTask(ctx, msg.TaskID)
	if err != nil {
		return e, err
	}
	if s := e.Task.Status.State; s.Terminal() {
		return e, a2a.Errorf(a2a.CodeUnsupportedOperation, "task %q is already %s and accepts no more messages; omit taskId to start a new task (keep contextId to stay in the conversation)", msg.TaskID, s)
	}
	if msg.ContextID != "" && msg.ContextID != e.Task.ContextID {
		return e, a2a.Errorf(a2a.CodeInvalidParams, "message.contextId %q does not match task %q's context %q", msg.ContextID, msg.TaskID, e.Task.ContextID)
	}
	return e, nil
}

// checkSend validates a send request before anything is started.
func (h *Handler) checkSend(ctx context.Context, req *a2a.SendMessageRequest) error {
	m := req.Message
	switch {
	case m == nil:
		return a2a.Errorf(a2a.CodeInvalidParams, "params.message is required")
	case m.MessageID == "":
		return a2a.Errorf(a2a.CodeInvalidParams, "params.message.messageId is required")
	case m.Role == "":
		return a2a.Errorf(a2a.CodeInvalidParams, "params.message.role is required (ROLE_USER for a client's message)")
	case len(m.Parts) == 0:
		return a2a.Errorf(a2a.CodeInvalidParams, "params.message.parts must hold at least one part")
	}
	if err := h.checkIDs("params.tenant", req.Tenant, "params.message.messageId", m.MessageID,
		"params.message.contextId", m.ContextID, "params.message.taskId", m.TaskID); err != nil {
		return err
	}
	for i, id := range m.ReferenceTaskIDs {
		if err := h.checkID(fmt.Sprintf("params.message.referenceTaskIds[%d]", i), id); err != nil {
			return err
		}
	}
	if n := sizeOfMessage(m); n > h.limits.MaxTaskBytes {
		return a2a.Errorf(a2a.CodeInvalidParams, "params.message is about %d bytes; this agent keeps at most %d bytes per task", n, h.limits.MaxTaskBytes)
	}
	if err := h.checkExtensions(ctx); err != nil {
		return err
	}
	for i := range m.Parts {
		if mt := m.Parts[i].MediaType; mt != "" && !acceptsMedia(h.card.DefaultInputModes, mt) {
			return a2a.Errorf(a2a.CodeContentTypeNotSupported, "params.message.parts[%d]: media type %q is not accepted; this agent takes %s", i, mt, strings.Join(h.card.DefaultInputModes, ", "))
		}
	}
	c := req.Configuration
	if c == nil {
		return nil
	}
	if err := checkHistoryLength(c.HistoryLength, "params.configuration.historyLength"); err != nil {
		return err
	}
	if len(c.AcceptedOutputModes) > 0 && len(h.card.DefaultOutputModes) > 0 && !anyMediaOverlap(h.card.DefaultOutputModes, c.AcceptedOutputModes) {
		return a2a.Errorf(a2a.CodeContentTypeNotSupported, "none of the accepted output modes %s is produced by this agent, which produces %s", strings.Join(c.AcceptedOutputModes, ", "), strings.Join(h.card.DefaultOutputModes, ", "))
	}
	if pc := c.TaskPushNotificationConfig; pc != nil {
		if err := h.checkIDs("params.configuration.taskPushNotificationConfig.id", pc.ID, "params.configuration.taskPushNotificationConfig.taskId", pc.TaskID); err != nil {
			return err
		}
		if !h.card.Capabilities.PushNotifications {
			return a2a.Errorf(a2a.CodePushNotificationNotSupported, "this agent does not send push notifications (its card does not declare capabilities.pushNotifications)")
		}
		if err := h.sender.Guard.CheckURL(pc.URL); err != nil {
			return a2a.Errorf(a2a.CodeInvalidParams, "params.configuration.taskPushNotificationConfig.url: %v", err)
		}
		// A new task has no config yet; a follow-up's adds to the task's.
		if m.TaskID != "" {
			if err := h.checkPushCap(ctx, m.TaskID, pc.ID, "params.configuration.taskPushNotificationConfig"); err != nil {
				return err
			}
		}
	}
	return nil
}

// acceptsMedia reports whether a media type is among modes, honouring
// wildcards ("*/*", "text/*") and bare types ("text"), and ignoring
// parameters. An empty modes list accepts anything.
func acceptsMedia(modes []string, mediaType string) bool {
	if len(modes) == 0 {
		return true
	}
	typ, sub := splitMedia(mediaType)
	for _, m := range modes {
		mt, ms := splitMedia(m)
		if (mt == "*" || mt == typ) && (ms == "*" || ms == "" || ms == sub) {
			return true
		}
	}
	return false
}

func anyMediaOverlap(produced, accepted []string) bool {
	for _, a := range accepted {
		if acceptsMedia(produced, a) {
			return true
		}
		at, as := splitMedia(a)
		if at == "*" || as == "*" || as == "" {
			for _, p := range produced {
				if acceptsMedia([]string{a}, p) {
					return true
				}
			}
		}
	}
	return false
}

func splitMedia(m string) (typ, sub string) {
	m, _, _ = strings.Cut(m, ";")
	typ, sub, _ = strings.Cut(strings.ToLower(strings.TrimSpace(m)), "/")
	return typ, strings.TrimSpace(sub)
}
