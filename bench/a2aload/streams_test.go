package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/bench/peers/goecho"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestHolderCycle holds streams open on slow tasks of a2amesh's echo
// agent and of a2a-go's, as streamsCmd does with thousands: every task
// starts, every stream opens with the task and then carries an event,
// the streams close from the client's side, and every task cancels.
func TestHolderCycle(t *testing.T) {
	// Runs of 20 s: far longer than the phases, in which each stream
	// waits for one chunk (1 s).
	const interval = time.Second
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"a2amesh", func(t *testing.T) string { return startSlowEcho(t, interval) }},
		{"a2a-go", func(t *testing.T) string { return startSlowPeer(t, interval) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h, err := newHolder(ctx, tc.url(t), 4, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer h.hc.CloseIdleConnections()
			const n = 12
			if err := h.start(ctx, n); err != nil {
				t.Fatal(err)
			}
			err = h.open(ctx, time.Minute)
			if err == nil {
				err = h.awaitLive(ctx, time.Minute)
			}
			if cerr := h.close(time.Minute); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := h.cancel(ctx); err != nil {
				t.Fatal(err)
			}
			if h.opened.Load() != n || h.live.Load() != n {
				t.Errorf("%d streams opened and %d carried an event, want %d", h.opened.Load(), h.live.Load(), n)
			}
		})
	}
}

// startSlowEcho serves a2amesh's echo agent, its "slow:" chunks interval
// apart, until the test ends, and returns its URL.
func startSlowEcho(t *testing.T, interval time.Duration) string {
	t.Helper()
	ln := listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, &echo.Executor{SlowInterval: interval}, echo.Card(""), serve.Config{
		Listener: ln, Retention: 5 * time.Second, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("a2amesh: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + "/"
}

// startSlowPeer serves a2a-go's echo peer over JSON-RPC, its "slow:"
// chunks interval apart, until the test ends, and returns its URL.
func startSlowPeer(t *testing.T, interval time.Duration) string {
	t.Helper()
	ln := listen(t)
	url := "http://" + ln.Addr().String() + "/"
	srv := httptest.NewUnstartedServer(goecho.NewHandler(url, goecho.Options{Executor: goecho.Executor{SlowInterval: interval}}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return url
}

func TestProfileReaders(t *testing.T) {
	var g, h bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&g, 1); err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(&h, 1); err != nil {
		t.Fatal(err)
	}
	if n, err := goroutinesOf(g.Bytes()); err != nil || n < 1 {
		t.Errorf("goroutinesOf this process's profile = %d, %v", n, err)
	}
	for _, name := range []string{"HeapInuse", "Stack"} {
		if v, err := memStat(h.Bytes(), name); err != nil || v <= 0 {
			t.Errorf("memStat(this process's heap profile, %s) = %d, %v", name, v, err)
		}
	}
	for _, tc := range []struct {
		profile, name string
		want          int64
		err           bool
	}{
		{"x\n# HeapInuse = 344064\n# Stack = 262144 / 327680\n", "HeapInuse", 344064, false},
		{"x\n# HeapInuse = 344064\n# Stack = 262144 / 327680\n", "Stack", 262144, false},
		{"x\n# HeapInuse = 344064\n", "Stack", 0, true},
		{"x\n# HeapInuse = many\n", "HeapInuse", 0, true},
	} {
		v, err := memStat([]byte(tc.profile), tc.name)
		if (err != nil) != tc.err || v != tc.want {
			t.Errorf("memStat(%q, %s) = %d, %v; want %d (error: %v)", tc.profile, tc.name, v, err, tc.want, tc.err)
		}
	}
	for _, tc := range []struct {
		profile string
		want    int
		err     bool
	}{
		{"goroutine profile: total 20011\n1 @ 0x1\n", 20011, false},
		{"heap profile: 1: 2 [3: 4] @ heap/1048576\n", 0, true},
	} {
		n, err := goroutinesOf([]byte(tc.profile))
		if (err != nil) != tc.err || n != tc.want {
			t.Errorf("goroutinesOf(%q) = %d, %v; want %d (error: %v)", tc.profile, n, err, tc.want, tc.err)
		}
	}
}
