package server

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/a2amesh/a2amesh/a2a"
)

// Limits bound what clients can make a Handler hold and do at once, so that
// no request, and no rate of requests, can take the agent down. The zero
// value of every field is its default, chosen so that a server with no
// configuration holds under hostile load; where a field says so, a
// negative value removes the limit.
type Limits struct {
	// MaxIDBytes bounds every identifier a request carries: task, context,
	// message and push config ids, referenced task ids, the tenant, and
	// page tokens (which may be four times as long). Longer ones are
	// refused with -32602. Stores key their records by these ids, so the
	// bound keeps every key short whatever the store. 0 means 256.
	MaxIDBytes int
	// MaxTaskBytes bounds a task's size: the bytes of the JSON encoding of
	// what it holds (its history, status and artifacts), estimated as each
	// event is committed. A message that would take its task past it is
	// refused with -32602 before anything starts; an agent event that
	// would fails the task, saying so. 0 means 8 MiB.
	MaxTaskBytes int
	// MaxLiveTasks bounds the tasks this Handler holds that have not
	// finished (submitted, working, or waiting for input); a message that
	// would start one more is refused with a retryable -32603 (see
	// a2a.Busy). 0 means 10,000; negative: no limit.
	MaxLiveTasks int
	// InputTimeout is how long a task may wait for input (INPUT_REQUIRED,
	// AUTH_REQUIRED) before the server cancels it, as CancelTask would:
	// the agent's Cancel hook releases what it kept for the task (a
	// checkpoint), and the task ends CANCELED with a message saying why,
	// which clients can still read until it is evicted like any finished
	// task. 0 means 24 hours; negative: tasks wait for ever.
	InputTimeout time.Duration
	// MaxRuns bounds the agent's runs going on at once (each message that
	// starts or continues a task is one run until the task settles). With
	// a real model this is also a bound on what the agent spends. A
	// message beyond it waits for a run to end (see MaxQueuedRuns,
	// QueueTimeout). 0 means 256; negative: no limit.
	MaxRuns int
	// MaxQueuedRuns bounds the messages waiting for a run; one more is
	// refused at once with a retryable -32603. 0 means as many as MaxRuns;
	// negative: none wait.
	MaxQueuedRuns int
	// QueueTimeout is how long a message waits for a run before it is
	// refused with a retryable -32603. 0 means 10 seconds.
	QueueTimeout time.Duration
	// MaxFinishedTasks and MaxFinishedBytes bound the finished tasks kept
	// for Config.Retention (with their event logs and webhooks): beyond
	// either, the oldest go first, so memory stays bounded at any request
	// rate. A task's bytes are its size as for MaxTaskBytes plus about 100
	// per event: what the in-memory stores take to hold it finished,
	// packed (a task heavy with content takes up to twice its size). 0
	// means 20,000 tasks and 64 MiB; negative: no limit. A negative
	// Retention (stores that drop finished tasks themselves) disables
	// both.
	MaxFinishedTasks int
	MaxFinishedBytes int64
	// MaxPushConfigsPerTask bounds the push notification configs (webhooks)
	// of a task, and so the requests one event makes; creating one more
	// is refused with -32602 (replacing one, by its id, is not creating).
	// 0 means 10.
	MaxPushConfigsPerTask int
	// MaxListBytes bounds a ListTasks page: tasks are added, in order, until
	// the next would take the page past it (a page holds at least one
	// task, itself bounded by MaxTaskBytes), and nextPageToken continues
	// from there. 0 means 4 MiB.
	MaxListBytes int
}

// Defaults of the zero Limits.
const (
	DefaultMaxIDBytes       = 256
	DefaultMaxTaskBytes     = 8 << 20
	DefaultMaxLiveTasks     = 10_000
	DefaultInputTimeout     = 24 * time.Hour
	DefaultMaxRuns          = 256
	DefaultQueueTimeout     = 10 * time.Second
	DefaultMaxFinishedTasks = 20_000
	DefaultMaxFinishedBytes = 64 << 20
	DefaultMaxListBytes     = 4 << 20
	DefaultMaxPushConfigs   = 10
	// ListHistoryLength is how many of each task's latest messages
	// ListTasks returns when the request does not say (historyLength
	// unset); a list is an overview, GetTask has the rest.
	ListHistoryLength = 10
)

// withDefaults returns l with each zero field set to its default, and each
// negative "no limit" field set to 0.
func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		switch {
		case *v == 0:
			*v = d
		case *v < 0:
			*v = 0
		}
	}
	def(&l.MaxLiveTasks, DefaultMaxLiveTasks)
	def(&l.MaxRuns, DefaultMaxRuns)
	def(&l.MaxFinishedTasks, DefaultMaxFinishedTasks)
	switch {
	case l.MaxQueuedRuns == 0:
		l.MaxQueuedRuns = l.MaxRuns
	case l.MaxQueuedRuns < 0:
		l.MaxQueuedRuns = 0
	}
	switch {
	case l.MaxFinishedBytes == 0:
		l.MaxFinishedBytes = DefaultMaxFinishedBytes
	case l.MaxFinishedBytes < 0:
		l.MaxFinishedBytes = 0
	}
	switch {
	case l.InputTimeout == 0:
		l.InputTimeout = DefaultInputTimeout
	case l.InputTimeout < 0:
		l.InputTimeout = 0
	}
	if l.MaxIDBytes <= 0 {
		l.MaxIDBytes = DefaultMaxIDBytes
	}
	if l.MaxTaskBytes <= 0 {
		l.MaxTaskBytes = DefaultMaxTaskBytes
	}
	if l.QueueTimeout <= 0 {
		l.QueueTimeout = DefaultQueueTimeout
	}
	if l.MaxListBytes <= 0 {
		l.MaxListBytes = DefaultMaxListBytes
	}
	if l.MaxPushConfigsPerTask <= 0 {
		l.MaxPushConfigsPerTask = DefaultMaxPushConfigs
	}
	return l
}

// checkID refuses an identifier longer than the limit or not valid UTF-8;
// field names it in the request ("params.id").
func (h *Handler) checkID(field, id string) error {
	if len(id) > h.limits.MaxIDBytes {
		return a2a.Errorf(a2a.CodeInvalidParams, "%s is %d bytes long; identifiers are at most %d bytes", field, len(id), h.limits.MaxIDBytes)
	}
	if !utf8.ValidString(id) {
		return a2a.Errorf(a2a.CodeInvalidParams, "%s is not valid UTF-8", field)
	}
	return nil
}

// checkIDs checks several identifiers: field/id pairs.
func (h *Handler) checkIDs(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := h.checkID(pairs[i], pairs[i+1]); err != nil {
			return err
		}
	}
	return nil
}

// retryRun is the retry guidance of a message refused for want of a run.
const retryRun = time.Second

// admitRun takes one of the MaxRuns run permits for a message, waiting
// (among at most MaxQueuedRuns others, for up to QueueTimeout) when all
// are taken. The caller gives the permit back with releaseRun once its run
// has ended.
func (h *Handler) admitRun(ctx context.Context) error {
	if h.runs == nil {
		return nil
	}
	select {
	case h.runs <- struct{}{}:
		return nil
	default:
	}
	if h.queued.Add(1) > int64(h.limits.MaxQueuedRuns) {
		h.queued.Add(-1)
		return a2a.Busy(retryRun, "the agent is running %d tasks, its limit, and %d more messages are waiting; retry later", h.limits.MaxRuns, h.limits.MaxQueuedRuns)
	}
	defer h.queued.Add(-1)
	timer := time.NewTimer(h.limits.QueueTimeout)
	defer timer.Stop()
	select {
	case h.runs <- struct{}{}:
		return nil
	case <-timer.C:
		return a2a.Busy(retryRun, "the agent is running %d tasks, its limit, and none ended within %v; retry later", h.limits.MaxRuns, h.limits.QueueTimeout)
	case <-ctx.Done():
		return ctx.Err()
	case <-h.base.Done():
		return a2a.Errorf(a2a.CodeInternal, "the server is shutting down")
	case <-h.drain.draining:
		return errDraining()
	}
}

func (h *Handler) releaseRun() {
	if h.runs != nil {
		<-h.runs
	}
}
