package main

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bound is how long a test waits for anything expected to happen at once
// (a process starting, a restart with a delay of milliseconds): a bound
// against hanging, not a timing assertion.
const bound = 20 * time.Second

// output collects what a test's processes and logs write, line by line.
type output struct {
	mu    sync.Mutex
	all   strings.Builder
	lines chan string
}

func newOutput() *output { return &output{lines: make(chan string, 1000)} }

func (o *output) Write(b []byte) (int, error) {
	o.mu.Lock()
	o.all.Write(b)
	o.mu.Unlock()
	for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		select {
		case o.lines <- line:
		default: // the test has read enough
		}
	}
	return len(b), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String()
}

// await returns the submatches of the first line to match re, failing the
// test if none comes within bound.
func (o *output) await(t *testing.T, re string) []string {
	t.Helper()
	r := regexp.MustCompile(re)
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		select {
		case line := <-o.lines:
			if m := r.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-timer.C:
			t.Fatalf("no line matching %q within %s; the output:\n%s", re, bound, o.String())
			return nil
		}
	}
}

// testSupervisor returns a supervisor under policy writing processes'
// output and its log to out, stopped (within bound) when the test ends.
func testSupervisor(t *testing.T, ctx context.Context, policy restartPolicy, out *output) *supervisor {
	t.Helper()
	log := slog.New(slog.NewTextHandler(out, nil))
	s := newSupervisor(ctx, policy, log, out, out)
	t.Cleanup(func() { stopWithin(t, s) })
	return s
}

// stopWithin stops s, failing the test if that takes longer than bound.
func stopWithin(t *testing.T, s *supervisor) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("the supervisor did not stop its processes within %s", bound)
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func pidOf(t *testing.T, m []string) int {
	t.Helper()
	pid, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// A process that dies is started again, and stop ends it.
func TestSupervisorRestarts(t *testing.T) {
	out := newOutput()
	s := testSupervisor(t, context.Background(), restartPolicy{FirstDelay: 10 * time.Millisecond}, out)
	if _, err := s.start("worker", "sh", "-c", `echo "pid $$"; exec sleep 60`); err != nil {
		t.Fatal(err)
	}
	first := pidOf(t, out.await(t, `^worker +\| pid (\d+)$`))
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	out.await(t, `worker stopped; restarting it" .*status="signal: killed" restart_in=10ms`)
	second := pidOf(t, out.await(t, `^worker +\| pid (\d+)$`))
	if second == first || !alive(second) {
		t.Fatalf("after the kill of %d: pid %d, alive %v", first, second, alive(second))
	}
	stopWithin(t, s)
	if alive(second) {
		t.Errorf("process %d outlived stop", second)
	}
	select {
	case err := <-s.Failed():
		t.Errorf("one restart made the supervisor give up: %v", err)
	default:
	}
}

// A process that keeps exiting makes the supervisor give up, naming it and
// how it exited; the others run on until stop.
func TestSupervisorGivesUp(t *testing.T) {
	out := newOutput()
	s := testSupervisor(t, context.Background(), restartPolicy{FirstDelay: time.Millisecond, MaxDelay: 4 * time.Millisecond}, out)
	if _, err := s.start("steady", "sh", "-c", `echo "pid $$"; exec sleep 60`); err != nil {
		t.Fatal(err)
	}
	steady := pidOf(t, out.await(t, `^steady +\| pid (\d+)$`))
	if _, err := s.start("flaky", "sh", "-c", "echo started; exit 3"); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-s.Failed():
	case <-time.After(bound):
		t.Fatalf("the supervisor did not give up within %s:\n%s", bound, out)
	}
	if want := "flaky kept failing: it stopped 5 times within 1m0s, the last time with exit status 3"; err.Error() != want {
		t.Errorf("gave up with %q, want %q", err, want)
	}
	stopWithin(t, s)
	logs := out.String()
	if n := strings.Count(logs, "flaky      | started"); n != 5 {
		t.Errorf("flaky started %d times, want 5 (the first start and 4 restarts):\n%s", n, logs)
	}
	// The delay doubles up to MaxDelay.
	var delays []string
	for _, m := range regexp.MustCompile(`flaky stopped; restarting it" .* restart_in=(\S+)`).FindAllStringSubmatch(logs, -1) {
		delays = append(delays, m[1])
	}
	if got := strings.Join(delays, " "); got != "1ms 2ms 4ms 4ms" {
		t.Errorf("restart delays %s, want 1ms 2ms 4ms 4ms", got)
	}
	if alive(steady) {
		t.Errorf("process %d outlived stop", steady)
	}
}

// Exits counted only within the window, and a delay back to the first
// after a process ran for StableAfter: a process that keeps exiting, each
// exit alone in its window, is restarted again and again at the first delay.
func TestSupervisorWindowAndReset(t *testing.T) {
	out := newOutput()
	s := testSupervisor(t, context.Background(), restartPolicy{FirstDelay: time.Millisecond, MaxExits: 2,
		Window: time.Nanosecond, StableAfter: time.Nanosecond}, out)
	if _, err := s.start("flaky", "sh", "-c", "echo started; exit 1"); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		out.await(t, `flaky stopped; restarting it" .*restart_in=1ms stops="1 of 2`)
	}
	stopWithin(t, s)
	select {
	case err := <-s.Failed():
		t.Errorf("exits outside the window made the supervisor give up: %v", err)
	default:
	}
}

// A process that ignores SIGTERM is killed after StopTimeout.
func TestSupervisorStopKills(t *testing.T) {
	out := newOutput()
	s := testSupervisor(t, context.Background(), restartPolicy{StopTimeout: 50 * time.Millisecond}, out)
	if _, err := s.start("stubborn", "sh", "-c", `trap "" TERM; echo "pid $$"; exec sleep 60`); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, out.await(t, `^stubborn +\| pid (\d+)$`))
	stopWithin(t, s)
	if alive(pid) {
		t.Errorf("process %d outlived stop", pid)
	}
}

// Once the supervisor's context is done (Ctrl-C, which reaches every
// process), a process that exits is not started again.
func TestSupervisorNoRestartAfterCancel(t *testing.T) {
	out := newOutput()
	ctx, cancel := context.WithCancel(context.Background())
	s := testSupervisor(t, ctx, restartPolicy{FirstDelay: time.Millisecond}, out)
	if _, err := s.start("worker", "sh", "-c", `echo "pid $$"; exec sleep 60`); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, out.await(t, `^worker +\| pid (\d+)$`))
	cancel()
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	done := s.procs[0].done
	s.mu.Unlock()
	select {
	case <-done:
	case <-time.After(bound):
		t.Fatalf("the supervisor still keeps the process %s after its context ended and the process exited", bound)
	}
	if strings.Contains(out.String(), "restarting") {
		t.Errorf("restarted after the context ended:\n%s", out)
	}
}

// A command that cannot start fails start.
func TestSupervisorStartFails(t *testing.T) {
	s := testSupervisor(t, context.Background(), restartPolicy{}, newOutput())
	if _, err := s.start("ghost", "/nonexistent/a2amesh"); err == nil || !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("start of a missing binary: %v", err)
	}
}
