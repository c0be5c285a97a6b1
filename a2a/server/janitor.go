package server

import (
	"context"
	"errors"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
)

// The Handler keeps account of the tasks it holds, to bound them:
//
//   - live tasks (not finished) it started or continued, against
//     MaxLiveTasks; those waiting for input are canceled after
//     InputTimeout;
//   - finished tasks, oldest first, which are evicted (snapshot, log and
//     webhooks) after Retention, or sooner when there are more than
//     MaxFinishedTasks of them or they weigh more than MaxFinishedBytes.
//
// Eviction over a count or size runs as new tasks start, so a burst of
// new tasks pays for the old ones it displaces; eviction by age and the
// input timeout run on a timer that is armed only while there is
// something to wait for, so an idle Handler has no goroutine.

// maxSweepEvery bounds the least time between two timed sweeps, which let a
// busy Handler sweep in batches: a task may outlive its retention (or
// input timeout) by this much, or by an eighth of it if that is less.
const maxSweepEvery = time.Second

// sweepEvery returns the least time between two timed sweeps.
func (h *Handler) sweepEvery() time.Duration {
	d := maxSweepEvery
	if h.retention > 0 {
		d = min(d, h.retention/8)
	}
	if h.limits.InputTimeout > 0 {
		d = min(d, h.limits.InputTimeout/8)
	}
	return max(d, time.Millisecond)
}

type liveTask struct {
	// waiting is when the task last started waiting for input; zero
	// while it is submitted or working.
	waiting time.Time
}

type finished struct {
	id string
	// at is when the task finished, in Unix nanoseconds: a server keeps
	// many finished tasks, and an entry takes 32 bytes so, where a
	// time.Time would make it 48. (Retention is then measured by the wall
	// clock alone: a step of the clock moves evictions by as much.)
	at    int64
	bytes int
}

// due is when a finished task's retention ends.
func (h *Handler) due(f finished) time.Time { return time.Unix(0, f.at).Add(h.retention) }

type waitingTask struct {
	id string
	at time.Time // matches live[id].waiting while the entry is current
}

// noteState records the state a commit left a task in, with the task's
// estimated size; the caller holds the task's slot lock.
func (h *Handler) noteState(id string, state a2a.TaskState, size int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case state.Terminal():
		if _, ok := h.live[id]; !ok && h.retention < 0 {
			return
		}
		delete(h.live, id)
		if h.retention >= 0 {
			now := time.Now()
			h.finished = append(h.finished, finished{id: id, at: now.UnixNano(), bytes: size})
			h.finishedBytes += int64(size)
			due := h.due(h.finished[0])
			if h.overLocked() {
				// New tasks evict what they displace; when none come, the
				// next sweep does.
				due = now
			}
			h.armLocked(due)
		}
	case state.Interrupted():
		now := time.Now()
		h.live[id] = liveTask{waiting: now}
		if h.limits.InputTimeout > 0 {
			h.waiting = append(h.waiting, waitingTask{id: id, at: now})
			h.compactWaitingLocked()
			h.armLocked(h.waiting[0].at.Add(h.limits.InputTimeout))
		}
	default:
		h.live[id] = liveTask{}
	}
}

// overLocked reports whether more finished tasks are kept than the limits
// allow.
func (h *Handler) overLocked() bool {
	return (h.limits.MaxFinishedTasks > 0 && len(h.finished) > h.limits.MaxFinishedTasks) ||
		(h.limits.MaxFinishedBytes > 0 && h.finishedBytes > h.limits.MaxFinishedBytes)
}

// forget drops a task the Handler no longer holds: it is gone from the
// stores.
func (h *Handler) forget(id string) {
	h.mu.Lock()
	delete(h.live, id)
	h.mu.Unlock()
}

// forgetIdle drops a task that began to wait for input here at at and has
// not been expired: it was resumed, and a run here keeps the account of it
// (its commits record its states) while one elsewhere does there.
func (h *Handler) forgetIdle(id string, at time.Time) {
	h.mu.Lock()
	s := h.slots[id]
	h.mu.Unlock()
	busy := false
	if s != nil { // slot locks are never taken under h.mu
		s.mu.Lock()
		busy = s.busy
		s.mu.Unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if lt, ok := h.live[id]; ok && (lt.waiting.Equal(at) || lt.waiting.IsZero() && !busy) {
		delete(h.live, id)
	}
}

// compactWaitingLocked drops the stale entries of the waiting queue (tasks
// that have since been resumed or ended) when they make up most of it, so
// that a task interrupted and resumed over and over does not grow it.
func (h *Handler) compactWaitingLocked() {
	if len(h.waiting) < 64 || len(h.waiting) < 2*len(h.live) {
		return
	}
	kept := h.waiting[:0]
	for _, w := range h.waiting {
		if lt, ok := h.live[w.id]; ok && lt.waiting.Equal(w.at) {
			kept = append(kept, w)
		}
	}
	clear(h.waiting[len(kept):])
	h.waiting = kept
}

// admitTask refuses a new task when MaxLiveTasks are live.
func (h *Handler) admitTask() error {
	if h.limits.MaxLiveTasks <= 0 {
		return nil
	}
	h.mu.Lock()
	n := len(h.live)
	h.mu.Unlock()
	if n >= h.limits.MaxLiveTasks {
		return a2a.Busy(5*time.Second, "the agent holds %d unfinished tasks, its limit; retry when some have finished (tasks waiting for input are canceled after %v)", n, h.limits.InputTimeout)
	}
	return nil
}

// armLocked makes sure the sweep timer fires by at (not sooner than
// sweepEvery from now). h.mu is held.
func (h *Handler) armLocked(at time.Time) {
	if h.closed {
		return
	}
	d := max(time.Until(at), h.sweepEvery())
	if h.sweepArmed {
		if !h.sweepAt.After(time.Now().Add(d)) {
			return
		}
		if !h.sweepTimer.Stop() {
			return // firing now: it re-arms as needed
		}
		h.wg.Done()
	}
	h.sweepArmed, h.sweepAt = true, time.Now().Add(d)
	h.wg.Add(1)
	if h.sweepTimer == nil {
		h.sweepTimer = time.AfterFunc(d, h.sweep)
	} else {
		h.sweepTimer.Reset(d)
	}
}

// sweep evicts the finished tasks past retention and cancels the tasks
// that waited for input too long, then re-arms for the next ones.
func (h *Handler) sweep() {
	defer h.wg.Done()
	h.mu.Lock()
	h.sweepArmed = false
	h.mu.Unlock()
	ctx := h.base
	h.evict(ctx)
	h.expireWaiting(ctx)
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.finished) > 0 {
		h.armLocked(h.due(h.finished[0]))
	}
	if len(h.waiting) > 0 {
		h.armLocked(h.waiting[0].at.Add(h.limits.InputTimeout))
	}
}

// evict deletes the finished tasks that are past retention or beyond the
// count and size bounds, oldest first.
func (h *Handler) evict(ctx context.Context) {
	if h.retention < 0 {
		return
	}
	cutoff := time.Now().Add(-h.retention).UnixNano()
	h.mu.Lock()
	n := 0
	bytes := h.finishedBytes
	for n < len(h.finished) {
		f := h.finished[n]
		over := (h.limits.MaxFinishedTasks > 0 && len(h.finished)-n > h.limits.MaxFinishedTasks) ||
			(h.limits.MaxFinishedBytes > 0 && bytes > h.limits.MaxFinishedBytes)
		if !over && f.at >= cutoff {
			break
		}
		bytes -= int64(f.bytes)
		n++
	}
	if n == 0 {
		h.mu.Unlock()
		return
	}
	expired := make([]string, n)
	for i, f := range h.finished[:n] {
		expired[i] = f.id
	}
	clear(h.finished[:n])
	h.finished = h.finished[n:] // a queue: append reallocates and drops the head
	h.finishedBytes = bytes
	h.mu.Unlock()
	// The tasks are off the queue now: a request that goes away must not
	// cut their deletion short.
	ctx = context.WithoutCancel(ctx)
	for _, id := range expired {
		if err := errors.Join(
			h.tasks.Delete(ctx, id), h.events.Delete(ctx, id), h.pushCfgs.DeleteTask(ctx, id),
		); err != nil {
			h.log.Warn("a2a: evicting a finished task failed", "task", id, "err", err)
		}
	}
}

// expireWaiting cancels the tasks that have waited for input longer than
// InputTimeout.
func (h *Handler) expireWaiting(ctx context.Context) {
	if h.limits.InputTimeout <= 0 {
		return
	}
	cutoff := time.Now().Add(-h.limits.InputTimeout)
	for ctx.Err() == nil {
		h.mu.Lock()
		if len(h.waiting) == 0 || !h.waiting[0].at.Before(cutoff) {
			h.mu.Unlock()
			return
		}
		w := h.waiting[0]
		h.waiting[0] = waitingTask{}
		h.waiting = h.waiting[1:]
		lt, ok := h.live[w.id]
		current := ok && lt.waiting.Equal(w.at)
		h.mu.Unlock()
		if !current {
			continue
		}
		canceled, err := h.expire(ctx, w.id)
		switch {
		case errors.Is(err, taskstore.ErrNotFound):
			h.forget(w.id)
		case err != nil:
			h.log.Warn("a2a: canceling a task that waited too long for input failed", "task", w.id, "err", err)
		case !canceled:
			// Resumed, here (its run keeps the account) or by another
			// replica (which does).
			h.forgetIdle(w.id, w.at)
		}
	}
}

// ExpireWaiting cancels a task that has waited for input (INPUT_REQUIRED or
// AUTH_REQUIRED) since the given time for longer than Limits.InputTimeout,
// as CancelTask would (the agent's Cancel hook releases what it kept),
// with a status message saying why. A task that is not waiting, or not
// for that long, or that a message resumes meanwhile, is left alone. The
// Handler does this itself for the tasks it saw begin to wait; stores
// shared by replicas call it for the tasks a replica that is gone left
// waiting (natsstore.Replicas), no other replica having seen them begin.
func (h *Handler) ExpireWaiting(ctx context.Context, taskID string, since time.Time) error {
	if h.limits.InputTimeout <= 0 || time.Since(since) < h.limits.InputTimeout {
		return nil
	}
	_, err := h.expire(ctx, taskID)
	if errors.Is(err, taskstore.ErrNotFound) {
		return nil
	}
	return err
}
