package natsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
)

// ErrUnavailable means the NATS server cannot be reached at the moment, so
// the call was not made, or it was and no answer came within CallTimeout;
// the connection keeps reconnecting and a later call may succeed. Test
// with errors.Is: it also matches eventlog.ErrUnavailable,
// taskstore.ErrUnavailable and adk.ErrCheckPointUnavailable, which tell an
// A2A server and an ADK Runner to wait for NATS with the work they hold.
var ErrUnavailable error = unavailable{}

type unavailable struct{}

func (unavailable) Error() string { return "natsstore: the NATS server is unavailable" }

func (unavailable) Is(target error) bool {
	return target == eventlog.ErrUnavailable || target == taskstore.ErrUnavailable || target == adk.ErrCheckPointUnavailable
}

// CallTimeout bounds each call to the NATS server that the caller's
// context does not bound sooner: a request whose connection drops waits
// for its reply, and without a bound would wait for as long as the
// caller's context, which for a task may be hours.
const CallTimeout = 5 * time.Second

// call checks that nc is connected, failing fast with ErrUnavailable when
// it is not, and returns ctx bounded by CallTimeout.
func call(ctx context.Context, nc *nats.Conn) (context.Context, context.CancelFunc, error) {
	if !nc.IsConnected() {
		return ctx, func() {}, fmt.Errorf("%w (connection %s)", ErrUnavailable, nc.Status())
	}
	ctx, cancel := context.WithTimeoutCause(ctx, CallTimeout, errNoAnswer)
	return ctx, cancel, nil
}

// errNoAnswer is why a call's context ends after CallTimeout.
var errNoAnswer = fmt.Errorf("%w: no answer within %v", ErrUnavailable, CallTimeout)

// unanswered marks err, returned by a call made with ctx from call, as
// ErrUnavailable when it says that the call got no answer: no JetStream
// server responded (as while a restarted server recovers its streams), or
// none within CallTimeout (the caller's own deadline is left as it is).
func unanswered(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrTimeout):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case errors.Is(err, context.DeadlineExceeded) && context.Cause(ctx) == errNoAnswer:
		return fmt.Errorf("%w: %w", errNoAnswer, err)
	}
	return err
}
