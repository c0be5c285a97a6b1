package natsstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrClosed means a connection to NATS has closed for good: nats.go no
// longer reconnects it, and every store on it fails from then on. nats.go
// closes a connection itself when the server answers with an error it does
// not recover from (a protocol line longer than the server's
// max_control_line, a repeated authorization failure); only a new
// connection, in practice a restart of the process, helps.
var ErrClosed = errors.New("natsstore: the connection to NATS has closed for good")

// Conn is a connection Connect made: it reconnects on its own after a
// loss, for ever, until it is closed, by its owner or by nats.go (see
// ErrClosed). Context tells its owner the second.
type Conn struct {
	*nats.Conn
	closed chan struct{} // closed once the connection is
}

// Connect connects to url, reconnecting for ever after a loss, and returns
// the connection and a JetStream handle. The log says when the connection
// drops, comes back, or closes for a reason other than its owner's Close.
//
// A server not reachable yet (a process that starts before NATS, or
// beside a NATS too busy to answer in time) is tried again until ctx ends;
// a refused authorization or a malformed URL is returned at once, as no
// retry mends it.
func Connect(ctx context.Context, url, name string, log *slog.Logger) (*Conn, jetstream.JetStream, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &Conn{closed: make(chan struct{})}
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats: reconnected", "url", c.ConnectedUrl()) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("nats: error", "subject", sub.Subject, "err", err)
			} else {
				log.Warn("nats: error", "err", err)
			}
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if err := nc.LastError(); err != nil {
				log.Error("nats: the connection closed for good; nothing stored on NATS can be reached through it any more", "err", err)
			}
			close(c.closed)
		})}
	var nc *nats.Conn
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		var err error
		if nc, err = nats.Connect(url, opts...); err == nil {
			break
		}
		if !retryable(err) {
			return nil, nil, fmt.Errorf("natsstore: connect to %s: %w", url, err)
		}
		log.Warn("nats: not reachable yet; trying again", "url", url, "err", err, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fmt.Errorf("natsstore: connect to %s: %w (%w)", url, err, context.Cause(ctx))
		case <-t.C:
		}
	}
	c.Conn = nc
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("natsstore: jetstream: %w", err)
	}
	return c, js, nil
}

// retryable reports whether a failed first connection may succeed if
// tried again.
func retryable(err error) bool {
	var urlErr *url.Error
	return !errors.As(err, &urlErr) && !errors.Is(err, nats.ErrAuthorization) && !errors.Is(err, nats.ErrAuthExpired) &&
		!errors.Is(err, nats.ErrAuthRevoked) && !errors.Is(err, nats.ErrAccountAuthExpired)
}

// Context returns a copy of ctx that also ends when the connection closes
// for good, its cause then an error that matches ErrClosed and says why.
// A service ties its serving to it, so that a connection nats.go gave up
// on stops the process rather than leaving it up and failing every
// request. Call cancel when done with it.
func (c *Conn) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-c.closed:
			cancel(c.closedErr())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// closedErr says why the connection closed.
func (c *Conn) closedErr() error {
	if err := c.LastError(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ErrClosed
}
