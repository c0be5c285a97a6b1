package push_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/push/pushtest"
)

// unaccepting returns the URL of a webhook that never accepts: a listener
// on 127.0.0.1 whose accept queue (backlog 0) the test fills, so that the
// kernel drops further connection requests and a dial hangs.
func unaccepting(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 8 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("filling the accept queue: %v", err)
			}
			return "http://" + addr + "/hook"
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Fatal("8 connections to a listener with a backlog of 0 all completed: this kernel does not leave dials hanging, which the test needs")
	return ""
}

// TestUnacceptingWebhook sends many notifications to a webhook whose
// connections never complete: dials give up after DialTimeout, and the
// breaker opens after BreakerThreshold of them, so at most that many and
// those in flight are ever tried; everything returns.
func TestUnacceptingWebhook(t *testing.T) {
	const (
		n         = 50
		perHost   = 2
		threshold = 2
	)
	url := unaccepting(t)
	logs := pushtest.NewLogs()
	s := &push.Sender{
		Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, Logger: logs.Logger(),
		DialTimeout: 100 * time.Millisecond, MaxAttempts: 2, BaseBackoff: time.Millisecond,
		MaxConnsPerHost: perHost, MaxPendingPerHost: 5,
		BreakerThreshold: threshold, BreakerCooldown: time.Hour,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfgs := make([]push.Config, n)
	for i := range cfgs {
		cfgs[i] = webhook(i, url)
	}
	errs := receive(ctx, t, notifyAll(ctx, t, s, cfgs), n)
	if count(errs, push.ErrUnavailable) == 0 {
		t.Errorf("no notification failed fast on the open breaker: %v", errs[0])
	}
	for _, err := range errs {
		if err == nil {
			t.Fatal("a notification to a webhook that never accepts succeeded")
		}
	}
	if got := logs.Count(msgAttempt); got > threshold+perHost-1 {
		t.Errorf("%d attempts failed, want at most %d: the breaker should stop them", got, threshold+perHost-1)
	}
	if got := logs.Count(msgTripped); got != 1 {
		t.Errorf("the breaker's opening logged %d times, want once", got)
	}
}
