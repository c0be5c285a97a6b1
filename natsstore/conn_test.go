package natsstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// A connection nats.go closes for good (here: the server refuses a
// protocol line longer than its max_control_line) ends the owner's
// Context, saying why; one that drops and comes back does not.
func TestConnContext(t *testing.T) {
	dir := t.TempDir()
	e, err := embedded.Start(embedded.Config{Dir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { e.Close() }()
	nc, _, err := natsstore.Connect(t.Context(), e.URL(), natsstore.ConnConfig{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := nc.Context(context.Background())
	defer cancel()

	// The server goes away and comes back: nats.go reconnects, the
	// context goes on.
	port := e.Port()
	e.Close()
	waitFor(t, 5*time.Second, "the connection to notice the server stopped", func() bool { return !nc.IsConnected() })
	if e, err = embedded.Start(embedded.Config{Dir: dir, Port: port}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the connection to come back", nc.IsConnected)
	if err := ctx.Err(); err != nil {
		t.Fatalf("a reconnected connection ended the context: %v", context.Cause(ctx))
	}

	if err := nc.Publish(strings.Repeat("a", 5000), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("the context goes on 5 s after the connection closed (%v)", nc.Status())
	}
	cause := context.Cause(ctx)
	if !errors.Is(cause, natsstore.ErrClosed) || !strings.Contains(cause.Error(), "maximum control line exceeded") {
		t.Fatalf("cause %v, want ErrClosed saying why", cause)
	}

	// A context made after the close ends at once, as does one whose
	// connection its owner closes.
	late, cancelLate := nc.Context(context.Background())
	defer cancelLate()
	select {
	case <-late.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a context of a closed connection goes on")
	}
	other, _, err := natsstore.Connect(t.Context(), e.URL(), natsstore.ConnConfig{Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	octx, ocancel := other.Context(context.Background())
	defer ocancel()
	other.Close()
	select {
	case <-octx.Done():
		if cause := context.Cause(octx); !errors.Is(cause, natsstore.ErrClosed) {
			t.Fatalf("owner's close: cause %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the context goes on after its owner closed the connection")
	}
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(limit); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
	}
}
