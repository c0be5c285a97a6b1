package localcluster

// The kubelet's part: starting containers, probing them, restarting them,
// and terminating pods as their grace periods say.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func (ctr *container) start() error {
	spec, err := json.Marshal(ctr.init)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command("ip", "netns", "exec", ctr.pod.ns, self)
	cmd.Env = []string{initEnv + "=" + string(spec)}
	cmd.Stdout, cmd.Stderr = ctr.log, ctr.log
	// The container's processes die with the test process, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pod %s: container %s: %w", ctr.pod.Name, ctr.spec.Name, err)
	}
	exited := make(chan struct{})
	ctr.mu.Lock()
	ctr.cmd, ctr.exited = cmd, exited
	ctr.mu.Unlock()
	go func() {
		_ = cmd.Wait() // the exit is the event; its status is in the log
		close(exited)
	}()
	return nil
}

// signal sends sig to the container's process.
func (ctr *container) signal(sig syscall.Signal) {
	ctr.mu.Lock()
	cmd := ctr.cmd
	ctr.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(sig) // fails only once it has exited
	}
}

func (ctr *container) exitedCh() chan struct{} {
	ctr.mu.Lock()
	defer ctr.mu.Unlock()
	return ctr.exited
}

// supervise is the pod's kubelet loop: it probes readiness and liveness,
// restarts a container that exits or fails its liveness probe (unless the
// pod is terminating), and ends when the pod's containers are gone.
func (p *Pod) supervise(ctx context.Context) {
	defer close(p.done)
	probeCtx, stopProbing := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		p.probeReadiness(probeCtx)
	}()
	var wg sync.WaitGroup
	for _, ctr := range p.ctrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctr.run(ctx)
		}()
	}
	wg.Wait()
	stopProbing()
	<-probed
	p.mu.Lock()
	p.ready = false
	p.mu.Unlock()
}

func (ctr *container) run(ctx context.Context) {
	liveFails := 0
	var tick <-chan time.Time
	probe := ctr.spec.LivenessProbe
	if probe != nil {
		t := time.NewTicker(period(probe))
		defer t.Stop()
		tick = t.C
	}
	started := time.Now()
	for {
		select {
		case <-ctr.exitedCh():
			ctr.mu.Lock()
			stopping := ctr.stopping
			ctr.mu.Unlock()
			if stopping || ctx.Err() != nil {
				return
			}
			fmt.Fprintf(ctr.log, "localcluster: container exited; restarting\n")
			if err := ctr.restart(ctx); err != nil {
				fmt.Fprintf(ctr.log, "localcluster: restart: %v\n", err)
				return
			}
			liveFails, started = 0, time.Now()
		case <-tick:
			if time.Since(started) < time.Duration(probe.InitialDelaySeconds)*time.Second {
				continue
			}
			if ctr.pod.check(ctx, probe) == nil {
				liveFails = 0
				continue
			}
			liveFails++
			if liveFails >= threshold(probe.FailureThreshold, 3) {
				fmt.Fprintf(ctr.log, "localcluster: liveness probe failed %d times; killing\n", liveFails)
				ctr.signal(syscall.SIGKILL)
			}
		case <-ctx.Done():
			ctr.signal(syscall.SIGKILL)
			<-ctr.exitedCh()
			return
		}
	}
}

func (ctr *container) restart(ctx context.Context) error {
	ctr.mu.Lock()
	ctr.restarts++
	n := ctr.restarts
	ctr.mu.Unlock()
	// The kubelet's back-off starts at 10 s; a shorter one keeps a test
	// short while still not spinning.
	select {
	case <-time.After(time.Duration(min(n, 5)) * 200 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	return ctr.start()
}

func (p *Pod) probeReadiness(ctx context.Context) {
	var probes []*corev1.Probe
	for _, ctr := range p.ctrs {
		if ctr.spec.ReadinessProbe != nil {
			probes = append(probes, ctr.spec.ReadinessProbe)
		}
	}
	every := time.Second
	for _, pr := range probes {
		every = min(every, period(pr))
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ok := p.running()
		for _, pr := range probes {
			ok = ok && p.check(ctx, pr) == nil
		}
		p.mu.Lock()
		p.ready = ok
		p.mu.Unlock()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// running reports whether every container's process is up.
func (p *Pod) running() bool {
	for _, ctr := range p.ctrs {
		select {
		case <-ctr.exitedCh():
			return false
		default:
		}
	}
	return true
}

func (p *Pod) isTerminating() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.terminating
}

// check runs one probe from the node, as the kubelet does: an HTTP GET
// that answers 200-399, or a TCP connection that opens.
func (p *Pod) check(ctx context.Context, pr *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(threshold(pr.TimeoutSeconds, 1))*time.Second)
	defer cancel()
	switch {
	case pr.HTTPGet != nil:
		port, err := p.port(pr.HTTPGet.Port.String())
		if err != nil {
			return err
		}
		u := fmt.Sprintf("http://%s%s", net.JoinHostPort(p.IP.String(), strconv.Itoa(port)), pr.HTTPGet.Path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := p.c.probe.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("%s: %s", u, resp.Status)
		}
		return nil
	case pr.TCPSocket != nil:
		port, err := p.port(pr.TCPSocket.Port.String())
		if err != nil {
			return err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(p.IP.String(), strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case pr.Exec != nil:
		return p.exec(ctx, pr.Exec.Command)
	}
	return errors.New("a probe with no handler")
}

// exec runs a command in the pod's first container, as `kubectl exec`
// and exec probes and hooks do: in the container's namespaces and root,
// as its user, with its environment.
func (p *Pod) exec(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return errors.New("exec: no command")
	}
	ctr := p.ctrs[0]
	ctr.mu.Lock()
	cmd := ctr.cmd
	ctr.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New("exec: the container is not running")
	}
	args := []string{"-t", strconv.Itoa(cmd.Process.Pid), "-m", "-n", "-r", "-w",
		"-S", strconv.Itoa(ctr.init.UID), "-G", strconv.Itoa(ctr.init.GID), "--"}
	ex := exec.CommandContext(ctx, "nsenter", append(args, argv...)...)
	ex.Env = ctr.init.Env
	out, err := ex.CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec %s: %w: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

// port resolves a port number or a container port's name.
func (p *Pod) port(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	for _, ctr := range p.ctrs {
		for _, cp := range ctr.spec.Ports {
			if cp.Name == s {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("pod %s has no port named %q", p.Name, s)
}

func period(pr *corev1.Probe) time.Duration {
	return time.Duration(threshold(pr.PeriodSeconds, 10)) * time.Second
}

func threshold(v, def int32) int {
	if v <= 0 {
		return int(def)
	}
	return int(v)
}

// terminate deletes the pod as the kubelet does: it leaves the Services'
// endpoints at once, its preStop hook runs, then SIGTERM, and SIGKILL once
// terminationGracePeriodSeconds (counted from the start) have passed. It
// returns when the containers are gone.
func (p *Pod) terminate(ctx context.Context) error {
	p.mu.Lock()
	p.terminating = true
	p.deleted = time.Now()
	p.mu.Unlock()
	grace := 30 * time.Second
	if g := p.spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	deadline := time.Now().Add(grace)
	var wg sync.WaitGroup
	errs := make([]error, len(p.ctrs))
	for i, ctr := range p.ctrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ctr.stop(ctx, deadline)
		}()
	}
	wg.Wait()
	<-p.done
	return errors.Join(errs...)
}

func (ctr *container) stop(ctx context.Context, deadline time.Time) error {
	if h := ctr.spec.Lifecycle; h != nil && h.PreStop != nil {
		hctx, cancel := context.WithDeadline(ctx, deadline)
		err := ctr.preStop(hctx, h.PreStop)
		cancel()
		if err != nil {
			fmt.Fprintf(ctr.log, "localcluster: preStop: %v\n", err)
		}
	}
	ctr.mu.Lock()
	ctr.stopping = true
	ctr.mu.Unlock()
	ctr.signal(syscall.SIGTERM)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ctr.exitedCh():
		return ctr.exitErr()
	case <-t.C:
	case <-ctx.Done():
	}
	ctr.signal(syscall.SIGKILL)
	<-ctr.exitedCh()
	return fmt.Errorf("pod %s: container %s: killed after the grace period", ctr.pod.Name, ctr.spec.Name)
}

// exitErr is the container's exit status as an error, nil for 0.
func (ctr *container) exitErr() error {
	ctr.mu.Lock()
	defer ctr.mu.Unlock()
	if ctr.cmd.ProcessState == nil || ctr.cmd.ProcessState.Success() {
		return nil
	}
	return fmt.Errorf("pod %s: container %s: %s", ctr.pod.Name, ctr.spec.Name, ctr.cmd.ProcessState)
}

func (ctr *container) preStop(ctx context.Context, h *corev1.LifecycleHandler) error {
	switch {
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case h.HTTPGet != nil:
		return ctr.pod.check(ctx, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: h.HTTPGet}})
	case h.Exec != nil:
		return ctr.pod.exec(ctx, h.Exec.Command)
	}
	return errors.New("a preStop hook with no handler")
}

// kill ends the pod's containers at once, as when its node is lost.
func (p *Pod) kill() {
	for _, ctr := range p.ctrs {
		ctr.mu.Lock()
		ctr.stopping = true
		ctr.mu.Unlock()
		ctr.signal(syscall.SIGKILL)
	}
}
