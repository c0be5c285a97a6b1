// Package outage lets work in progress ride out a store that cannot be
// reached for a while, such as a NATS server restarting: the call is
// retried, with growing pauses, for a bounded time.
package outage

import (
	"context"
	"time"
)

// Outlast calls op, and again while it fails with an error that transient
// reports, until it has been failing so for limit or ctx is done; it
// returns op's last error. notify, if not nil, is called once, with the
// first such error, when the waiting starts. The pauses grow from 50 ms
// to one second.
//
// Only calls that are safe to repeat belong here: a retried call may
// follow one whose effect took place but whose answer was lost.
func Outlast(ctx context.Context, limit time.Duration, transient func(error) bool, notify func(error), op func() error) error {
	wait, start := 50*time.Millisecond, time.Time{}
	for {
		err := op()
		if err == nil || !transient(err) {
			return err
		}
		if start.IsZero() {
			start = time.Now()
			if notify != nil {
				notify(err)
			}
		} else if time.Since(start) >= limit {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait = min(2*wait, time.Second)
	}
}
