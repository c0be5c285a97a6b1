package push_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/push/pushtest"
)

// Log messages the tests count.
const (
	msgTripped   = "push: webhook destination keeps failing; notifications to it fail at once until a probe after the cooldown succeeds"
	msgRecovered = "push: webhook destination answers again"
	msgDropped   = "push: too many notifications pending for a webhook destination; dropping the ones beyond"
	msgAllDrop   = "push: too many notifications pending; dropping the ones beyond"
	msgAttempt   = "push: delivery attempt failed"
)

func webhook(i int, url string) push.Config {
	return push.Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{ID: fmt.Sprint("c", i), TaskID: fmt.Sprint("t", i), URL: url}}
}

func working(i int) a2a.Event {
	return a2a.NewStatusUpdate(fmt.Sprint("t", i), "ctx", a2a.TaskStateWorking, nil)
}

// notifyAll starts one Notify per config and returns their errors as they
// come.
func notifyAll(ctx context.Context, t *testing.T, s *push.Sender, cfgs []push.Config) <-chan error {
	t.Helper()
	errs := make(chan error, len(cfgs))
	for i, c := range cfgs {
		go func() { errs <- s.Notify(ctx, c, working(i), nil) }()
	}
	return errs
}

// receive takes n errors from errs, failing the test if ctx ends first.
func receive(ctx context.Context, t *testing.T, errs <-chan error, n int) []error {
	t.Helper()
	out := make([]error, 0, n)
	for range n {
		select {
		case err := <-errs:
			out = append(out, err)
		case <-ctx.Done():
			t.Fatalf("only %d of %d notifications returned: %v", len(out), n, ctx.Err())
		}
	}
	return out
}

// another returns the first error that is not target.
func another(errs []error, target error) error {
	for _, err := range errs {
		if !errors.Is(err, target) {
			return err
		}
	}
	return nil
}

func count(errs []error, target error) int {
	n := 0
	for _, err := range errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}

// TestStalledWebhook sends many notifications to a webhook that accepts
// and never answers: the connections it sees stay within MaxConnsPerHost,
// the notifications beyond MaxPendingPerHost are dropped at once (logged
// once), and once it fails the breaker opens (logged once) and no further
// notification connects.
func TestStalledWebhook(t *testing.T) {
	const (
		n         = 200
		perHost   = 3
		pending   = 10
		threshold = 4
	)
	hook := pushtest.NewStalled(t)
	logs := pushtest.NewLogs()
	s := &push.Sender{
		Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, Logger: logs.Logger(),
		// The webhook is released by the test, not by a timeout.
		Timeout: time.Minute, MaxAttempts: 3, BaseBackoff: time.Millisecond,
		MaxConnsPerHost: perHost, MaxPendingPerHost: pending,
		BreakerThreshold: threshold, BreakerCooldown: time.Hour,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfgs := make([]push.Config, n)
	for i := range cfgs {
		cfgs[i] = webhook(i, hook.URL)
	}
	errs := notifyAll(ctx, t, s, cfgs)

	// Nothing answers, so all but the pending ones are dropped at once.
	dropped := receive(ctx, t, errs, n-pending)
	if got := count(dropped, push.ErrOverloaded); got != n-pending {
		t.Fatalf("%d of %d notifications beyond MaxPendingPerHost dropped, want all; another: %v", got, n-pending, another(dropped, push.ErrOverloaded))
	}
	if err := hook.WaitOpen(ctx, perHost); err != nil {
		t.Fatalf("the webhook never had %d connections open: %v", perHost, err)
	}
	if got := logs.Count(msgDropped); got != 1 {
		t.Errorf("drops logged %d times, want once", got)
	}

	hook.Release()
	rest := receive(ctx, t, errs, pending)
	if got := count(rest, push.ErrUnavailable); got == 0 {
		t.Errorf("no notification failed fast on the open breaker: %v", rest[0])
	}
	for _, err := range rest {
		if err == nil {
			t.Fatal("a notification to a webhook that never answers succeeded")
		}
	}
	if got := logs.Count(msgTripped); got != 1 {
		t.Errorf("the breaker's opening logged %d times, want once", got)
	}
	_, most, total := hook.Counts()
	if most > perHost {
		t.Errorf("the webhook had %d connections open at once, want at most %d", most, perHost)
	}
	// The attempts that failed to open the breaker, and those in flight
	// when it opened.
	if total > threshold+perHost-1 {
		t.Errorf("the webhook accepted %d connections, want at most %d", total, threshold+perHost-1)
	}

	// Once open, the breaker fails notifications without connecting.
	after := receive(ctx, t, notifyAll(ctx, t, s, cfgs[:20]), 20)
	if got := count(after, push.ErrUnavailable); got != 20 {
		t.Errorf("%d of 20 notifications after the breaker opened failed fast, want all; another: %v", got, another(after, push.ErrUnavailable))
	}
	if _, _, again := hook.Counts(); again != total {
		t.Errorf("the webhook accepted %d connections after the breaker opened", again-total)
	}
	if got := logs.Count(msgTripped); got != 1 {
		t.Errorf("the breaker's opening logged %d times, want once", got)
	}
}

// TestMaxConns bounds the attempts in flight across destinations, and the
// notifications pending across destinations.
func TestMaxConns(t *testing.T) {
	const (
		maxConns   = 4
		maxPending = 30
		n          = 40
	)
	hook := pushtest.NewStalled(t)
	logs := pushtest.NewLogs()
	s := &push.Sender{
		Guard: netguard.Guard{Allow: []string{"127.0.0.0/8", "localhost"}}, Logger: logs.Logger(),
		Timeout: time.Minute, MaxAttempts: 1,
		MaxConns: maxConns, MaxConnsPerHost: 3, MaxPending: maxPending, MaxPendingPerHost: n,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Two destinations (two names for one server), each allowed 3.
	other := strings.Replace(hook.URL, "127.0.0.1", "localhost", 1)
	cfgs := make([]push.Config, n)
	for i := range cfgs {
		cfgs[i] = webhook(i, hook.URL)
		if i%2 == 1 {
			cfgs[i].URL = other
		}
	}
	errs := notifyAll(ctx, t, s, cfgs)
	dropped := receive(ctx, t, errs, n-maxPending)
	if got := count(dropped, push.ErrOverloaded); got != n-maxPending {
		t.Fatalf("%d of %d notifications beyond MaxPending dropped, want all; another: %v", got, n-maxPending, another(dropped, push.ErrOverloaded))
	}
	if err := hook.WaitOpen(ctx, maxConns); err != nil {
		t.Fatalf("the webhook never had %d connections open: %v", maxConns, err)
	}
	if got := logs.Count(msgAllDrop); got != 1 {
		t.Errorf("drops logged %d times, want once", got)
	}
	hook.Release()
	receive(ctx, t, errs, maxPending)
	if _, most, _ := hook.Counts(); most > maxConns {
		t.Errorf("%d connections open at once, want at most MaxConns %d", most, maxConns)
	}
}

// TestBreakerProbe: after the cooldown one attempt probes the destination;
// meanwhile others fail fast; a failed probe keeps the breaker open without
// logging a new opening, a successful one closes it.
func TestBreakerProbe(t *testing.T) {
	var calls atomic.Int32
	probing := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1, 2, 3: // open the breaker, fail the first probe
			w.WriteHeader(http.StatusServiceUnavailable)
		case 4: // the second probe, held until the test has tried others
			close(probing)
			<-release
			w.WriteHeader(http.StatusNoContent)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	logs := pushtest.NewLogs()
	s := &push.Sender{
		Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, Logger: logs.Logger(),
		MaxAttempts: 1, BreakerThreshold: 2,
		// Past at once: every attempt after the opening is a probe.
		BreakerCooldown: time.Nanosecond,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := webhook(0, srv.URL)
	for i := range 3 {
		if err := s.Notify(ctx, c, working(0), nil); err == nil || errors.Is(err, push.ErrUnavailable) {
			t.Fatalf("notification %d = %v, want the webhook's 503", i+1, err)
		}
	}
	if got := logs.Count(msgTripped); got != 1 {
		t.Fatalf("the breaker's opening logged %d times, want once (the failed probe is no new opening)", got)
	}
	probe := make(chan error, 1)
	go func() { probe <- s.Notify(ctx, c, working(0), nil) }()
	select {
	case <-probing:
	case <-ctx.Done():
		t.Fatal("no probe reached the webhook")
	}
	for range 5 {
		if err := s.Notify(ctx, c, working(0), nil); !errors.Is(err, push.ErrUnavailable) {
			t.Fatalf("notification during the probe = %v, want ErrUnavailable", err)
		}
	}
	close(release)
	if err := <-probe; err != nil {
		t.Fatalf("probe = %v", err)
	}
	if err := s.Notify(ctx, c, working(0), nil); err != nil {
		t.Fatalf("notification after a successful probe = %v", err)
	}
	if got := calls.Load(); got != 5 {
		t.Fatalf("webhook called %d times, want 5", got)
	}
	if got := logs.Count(msgRecovered); got != 1 {
		t.Fatalf("the breaker's closing logged %d times, want once", got)
	}
}

// TestConcurrentNotifyKeepsCounts checks that the bounds release what they
// take: after many notifications to a healthy webhook, all succeed and the
// sender admits a full load again.
func TestConcurrentNotifyKeepsCounts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	s := &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, MaxConnsPerHost: 2, MaxPendingPerHost: 8, MaxPending: 8}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for round := range 5 {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := s.Notify(ctx, webhook(i, srv.URL), working(i), nil); err != nil {
					t.Errorf("round %d: %v", round, err)
				}
			}()
		}
		wg.Wait()
	}
}
