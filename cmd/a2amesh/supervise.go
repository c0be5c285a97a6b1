package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// restartPolicy is how up keeps its processes running. A process that
// exits while the mesh runs is started again after a delay that doubles
// with each exit, from FirstDelay up to MaxDelay, and starts again from
// FirstDelay once the process had run for StableAfter. When a process has
// exited MaxExits times within Window, up gives up: it stops every process
// and exits with an error naming the one that kept failing. Zero (or a
// negative value) in a field means its default.
type restartPolicy struct {
	// FirstDelay is the wait before the first restart; 250 ms by default.
	FirstDelay time.Duration
	// MaxDelay caps the wait between restarts; 30 s by default.
	MaxDelay time.Duration
	// StableAfter is how long a process must have run for its next
	// restart to wait FirstDelay again; 1 minute by default.
	StableAfter time.Duration
	// MaxExits within Window make up give up; 5 by default.
	MaxExits int
	// Window is how far back exits are counted; 1 minute by default.
	Window time.Duration
	// StopTimeout is how long a process may take to exit after SIGTERM
	// before it is killed; 10 s by default.
	StopTimeout time.Duration
}

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (p restartPolicy) withDefaults() restartPolicy {
	return restartPolicy{
		FirstDelay:  orDefault(p.FirstDelay, 250*time.Millisecond),
		MaxDelay:    orDefault(p.MaxDelay, 30*time.Second),
		StableAfter: orDefault(p.StableAfter, time.Minute),
		MaxExits:    orDefault(p.MaxExits, 5),
		Window:      orDefault(p.Window, time.Minute),
		StopTimeout: orDefault(p.StopTimeout, 10*time.Second),
	}
}

// outputDrain bounds how long a process's output may stay open after it
// exited (held by a process it started) before it is cut.
const outputDrain = 2 * time.Second

// supervisor runs processes and keeps them running under its policy until
// stop, each line of their output written to stdout or stderr with the
// process's name in front. Once its context is done it restarts nothing:
// the processes are stopping with it (Ctrl-C reaches them all).
type supervisor struct {
	ctx            context.Context
	policy         restartPolicy
	log            *slog.Logger
	stdout, stderr io.Writer
	// failed receives the error of the first process that kept failing.
	failed chan error

	mu    sync.Mutex
	procs []*supervised
}

func newSupervisor(ctx context.Context, policy restartPolicy, log *slog.Logger, stdout, stderr io.Writer) *supervisor {
	return &supervisor{ctx: ctx, policy: policy.withDefaults(), log: log, stdout: stdout, stderr: stderr, failed: make(chan error, 1)}
}

// supervised is one process the supervisor keeps running.
type supervised struct {
	name string
	path string
	args []string
	// cancel ends the keeping: the process is stopped and not restarted.
	cancel context.CancelFunc
	// done is closed when the keeping has ended and the process is gone.
	done chan struct{}
}

// instance is one run of a supervised process.
type instance struct {
	cmd     *exec.Cmd
	started time.Time
	exited  chan struct{} // closed once err is set and the output is written
	err     error
}

// Failed returns a channel that receives the error of the first process
// that kept failing; the supervisor has stopped keeping that process.
func (s *supervisor) Failed() <-chan error { return s.failed }

// start starts path with args as the process name and keeps it running
// until stop. It fails if the process cannot be started the first time.
func (s *supervisor) start(name, path string, args ...string) (pid int, err error) {
	p := &supervised{name: name, path: path, args: args, done: make(chan struct{})}
	in, err := s.launch(p)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	go s.keep(ctx, p, in)
	return in.cmd.Process.Pid, nil
}

// stop stops every process, the last started first, and waits until they
// are gone.
func (s *supervisor) stop() {
	s.mu.Lock()
	procs := s.procs
	s.procs = nil
	s.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].cancel()
		<-procs[i].done
	}
}

func (s *supervisor) launch(p *supervised) (*instance, error) {
	cmd := exec.Command(p.path, p.args...)
	stdout, stderr := prefixed(p.name, s.stdout), prefixed(p.name, s.stderr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = childAttrs()
	cmd.WaitDelay = outputDrain
	if err := cmd.Start(); err != nil {
		stdout.Close()
		stderr.Close()
		return nil, fmt.Errorf("start %s: %w", p.name, err)
	}
	in := &instance{cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		in.err = cmd.Wait()
		stdout.Close()
		stderr.Close()
		close(in.exited)
	}()
	return in, nil
}

// keep watches p's process, in, and starts it again when it exits, until
// ctx ends (then it stops the process) or the process exits too often.
func (s *supervisor) keep(ctx context.Context, p *supervised, in *instance) {
	defer close(p.done)
	pol := s.policy
	delay := pol.FirstDelay
	var exits []time.Time // within the window
	var startErr error
	for {
		var status string
		if in != nil {
			select {
			case <-ctx.Done():
				s.terminate(in)
				return
			case <-in.exited:
			}
			status = exitStatus(in.err)
			if time.Since(in.started) >= pol.StableAfter {
				delay = pol.FirstDelay
			}
		} else {
			status = startErr.Error()
		}
		if ctx.Err() != nil || s.ctx.Err() != nil {
			return
		}
		now := time.Now()
		for len(exits) > 0 && now.Sub(exits[0]) > pol.Window {
			exits = exits[1:]
		}
		exits = append(exits, now)
		if len(exits) >= pol.MaxExits {
			err := fmt.Errorf("%s kept failing: it stopped %d times within %s, the last time with %s", p.name, len(exits), pol.Window, status)
			select {
			case s.failed <- err:
			default: // another process failed first; that is the one reported
			}
			return
		}
		s.log.Warn(p.name+" stopped; restarting it", "process", p.name, "status", status, "restart_in", delay,
			"stops", fmt.Sprintf("%d of %d within %s", len(exits), pol.MaxExits, pol.Window))
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		delay = min(2*delay, pol.MaxDelay)
		in, startErr = s.launch(p)
		if in != nil {
			s.log.Warn(p.name+" restarted", "process", p.name, "pid", in.cmd.Process.Pid)
		}
	}
}

// terminate stops in: SIGTERM, then SIGKILL after the policy's
// StopTimeout; it returns once the process has exited.
func (s *supervisor) terminate(in *instance) {
	_ = in.cmd.Process.Signal(syscall.SIGTERM) // fails only if it has exited, which <-in.exited sees
	t := time.NewTimer(s.policy.StopTimeout)
	defer t.Stop()
	select {
	case <-in.exited:
	case <-t.C:
		_ = in.cmd.Process.Kill()
		<-in.exited // Wait returns within outputDrain once the process is dead
	}
}

// exitStatus says how a process ended, from its Wait error.
func exitStatus(err error) string {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "exit status 0"
	case errors.As(err, &exit):
		return exit.ProcessState.String()
	}
	return err.Error()
}

// lineWriter writes each line written to it to w with a name in front.
type lineWriter struct {
	pw   *io.PipeWriter
	done chan struct{}
}

// prefixed returns a lineWriter of name's output on w; Close waits until
// the last line is written.
func prefixed(name string, w io.Writer) *lineWriter {
	r, pw := io.Pipe()
	lw := &lineWriter{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(lw.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintf(w, "%-10s | %s\n", name, sc.Text())
		}
		_, _ = io.Copy(io.Discard, r) // a line too long: drop the rest rather than block the child
	}()
	return lw
}

func (lw *lineWriter) Write(b []byte) (int, error) { return lw.pw.Write(b) }

func (lw *lineWriter) Close() error {
	err := lw.pw.Close()
	<-lw.done
	return err
}
