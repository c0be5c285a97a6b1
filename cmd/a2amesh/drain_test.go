package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
)

// `a2amesh serve echo` on SIGTERM: not ready at once, the task running
// (echo's slow task, 5 s) finishes and its client gets every event, a new
// message is refused with a retryable error, and the process exits 0.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	out := newOutput()
	cmd := exec.Command(os.Args[0], "serve", "echo", "--addr", "127.0.0.1:0", "--drain-delay", "0", "--drain-timeout", "1m")
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	url := out.await(t, `^echo ready at (\S+)$`)[1]

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := client.New(ctx, url, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	var n int
	var last a2a.Event
	var signaled time.Time
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "slow: drain me")}) {
		if err != nil {
			t.Fatalf("the running task's stream: %v\n%s", err, out)
		}
		n, last = n+1, ev.Event
		if n != 2 { // the task is working: SIGTERM
			continue
		}
		signaled = time.Now()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		out.await(t, "draining: not ready")
		if code := get(t, url+"readyz"); code != http.StatusServiceUnavailable {
			t.Fatalf("/readyz %d while draining, want 503", code)
		}
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
		if err == nil || a2a.AsError(err).RetryAfter <= 0 {
			t.Fatalf("a message while draining: %v, want a retryable refusal", err)
		}
	}
	if st, _ := a2a.StateOf(last); st != a2a.TaskStateCompleted || n != 23 { // the task, working, 20 chunks, completed
		t.Fatalf("%d events ending with %v, want 23 ending with the task completed", n, last)
	}
	select {
	case err := <-exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) || err != nil {
			t.Fatalf("exit: %v\n%s", err, out)
		}
		t.Logf("exited 0, %s after SIGTERM", time.Since(signaled).Round(time.Millisecond))
	case <-time.After(time.Minute):
		t.Fatalf("still running a minute after SIGTERM\n%s", out)
	}
}

// get GETs url on a connection of its own and returns the status, 0 if the
// request failed.
func get(t *testing.T, url string) int {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}
