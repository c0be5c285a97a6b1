package natsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// ErrUnavailable means the NATS server cannot be reached at the moment, so
// the call was not made; the connection keeps reconnecting and a later
// call may succeed. Test with errors.Is.
var ErrUnavailable = errors.New("natsstore: the NATS server is unavailable")

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
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	return ctx, cancel, nil
}
