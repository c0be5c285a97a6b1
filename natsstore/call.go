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

// ErrTooLarge means a write was refused before it was sent because it
// would not fit in one NATS message: the server's max_payload (1 MiB by
// default, configurable on the server), which bounds a task snapshot, the
// events of one append, a webhook and a checkpoint. Test with errors.Is;
// errors.As with *TooLargeError tells what, its size and the limit.
// Stores.MaxPayload tells the limit up front.
var ErrTooLarge = errors.New("natsstore: too large for the NATS server's max_payload")

// TooLargeError is a write refused with ErrTooLarge.
type TooLargeError struct {
	// What was too large: "task <id>", "events 3 to 5 of task <id>",
	// "push config <task>/<id>", "checkpoint <id>".
	What string
	// Size is the message it would have been, in bytes (its headers
	// included), and Limit the server's max_payload.
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("natsstore: %s is %d bytes, more than the NATS server takes in one message (max_payload %d bytes)", e.What, e.Size, e.Limit)
}

// Is matches ErrTooLarge, and nats.ErrMaxPayload, the client's own error
// for the same refusal.
func (e *TooLargeError) Is(target error) bool {
	return target == ErrTooLarge || target == nats.ErrMaxPayload
}

// fits returns a *TooLargeError if a message of size bytes (data and
// headers) is more than nc's server takes; what names it for the error.
func fits(nc *nats.Conn, size int, what func() string) error {
	if limit := nc.MaxPayload(); limit > 0 && int64(size) > limit {
		return &TooLargeError{What: what(), Size: int64(size), Limit: limit}
	}
	return nil
}

// kvHeaderRoom is the most the headers of a conditional KV write take
// (the expected revision and a TTL): a value is checked with them, since
// the server counts them against max_payload too.
const kvHeaderRoom = len("NATS/1.0\r\n") + len(jetstream.ExpectedLastSubjSeqHeader+": 18446744073709551615\r\n") +
	len(jetstream.MsgTTLHeader+": 2562047h47m16.854775807s\r\n") + len("\r\n")
