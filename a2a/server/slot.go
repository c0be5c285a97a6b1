package server

import (
	"context"
	"sync"
)

// slot serializes the work on one task within this process. One holder at
// a time (a run of the agent, or a cancellation) has the task; commits to
// the task's record and log happen under mu so they are logged in the
// order they are stored. Slots exist while something references them.
type slot struct {
	id   string
	refs int // guarded by Handler.mu

	mu      sync.Mutex
	busy    bool
	free    chan struct{} // closed when busy is cleared
	run     *run          // the run holding the task, if a run holds it
	lastSeq uint64        // the latest event committed through this slot
	pushing bool          // a push dispatcher is delivering the task's events
}

// slotRef returns the task's slot, creating it, and counts a reference.
// Lock order: slot.mu may be held when taking Handler.mu, never the reverse.
func (h *Handler) slotRef(id string) *slot {
	h.mu.Lock()
	s := h.slots[id]
	if s == nil {
		s = &slot{id: id}
		h.slots[id] = s
	}
	s.refs++
	h.mu.Unlock()
	return s
}

func (h *Handler) slotUnref(s *slot) {
	h.mu.Lock()
	if s.refs--; s.refs == 0 {
		delete(h.slots, s.id)
	}
	h.mu.Unlock()
}

// acquire waits until the task is free and takes it for r (nil for a
// cancellation), or fails when ctx is done.
func (s *slot) acquire(ctx context.Context, r *run) error {
	for {
		s.mu.Lock()
		if !s.busy {
			s.busy, s.run, s.free = true, r, make(chan struct{})
			s.mu.Unlock()
			return nil
		}
		free := s.free
		s.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *slot) release() {
	s.mu.Lock()
	s.busy, s.run = false, nil
	close(s.free)
	s.mu.Unlock()
}
