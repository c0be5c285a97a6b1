package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// streamsCmd measures what holding many streams open costs one server
// process (issue 18, "Scale of one process"): it starts n "slow:" echo
// tasks at once (SendMessage with returnImmediately), opens a
// SubscribeToTask stream on each, waits until an event has come down
// every stream, then closes the streams from the client's side and
// cancels the tasks. Before, between and after the phases it reads the
// server's resident memory and open files from /proc and its goroutines,
// heap and stacks from its /debug/pprof/, and reports each phase and the
// cost per running task and per open stream. The tasks' runs are
// stretched (--slow-interval) to outlast the phases, at one event per
// stream per interval. The servers run one after the other, each alone
// with the load generator on the machine.
func streamsCmd(args []string) error {
	fs := flag.NewFlagSet("streams", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command")
	peer := fs.String("peer", "", "a2a-go v2.4.0 echo server binary to hold the same streams after ours (empty: none)")
	state := fs.String("state", "memory", "where ours keeps its tasks and events: memory, or nats (JetStream on an embedded NATS server in a process of its own)")
	n := fs.Int("streams", 10_000, "tasks running at once, and streams held open, one on each")
	warm := fs.Int("warmup", 100, "streams opened and closed the same way before the idle sample")
	interval := fs.Duration("slow-interval", 30*time.Second, "time between the 20 chunks of each task's run: longer than starting the tasks and opening the streams take, so that the tasks do not grow before the streams are sampled; a run lasts 20 times it")
	conns := fs.Int("conns", 32, "requests starting or canceling tasks at once, and streams waiting for their first event")
	settle := fs.Duration("settle", 10*time.Second, "wait after the tasks are canceled before the last sample (finished tasks are kept 5 s)")
	timeout := fs.Duration("timeout", 3*time.Minute, "bound on each phase")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *n < 1 || *warm < 0 || *conns < 1 || *interval <= 0 || *timeout <= 0 {
		return errors.New("streams: --streams and --conns must be positive, --warmup not negative, --slow-interval and --timeout positive")
	}
	if *state != "memory" && *state != "nats" {
		return fmt.Errorf("streams: --state %q: memory or nats", *state)
	}
	// Every stream is a connection of its own, at both ends.
	limit, err := raiseOpenFiles()
	if err != nil {
		return err
	}
	if need := uint64(*n + 1000); limit < need {
		return fmt.Errorf("streams: a2aload may open %d files (RLIMIT_NOFILE), %d streams need about %d: raise the hard limit (ulimit -Hn)", limit, *n, need)
	}
	cfg := heldConfig{n: *n, warm: *warm, interval: *interval, conns: *conns, settle: *settle, timeout: *timeout}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var servers []*heldServer
	a2amesh := &heldServer{name: "a2amesh", stores: "in memory", debug: "127.0.0.1:19162",
		t: &target{name: "a2amesh", bin: *ours, addr: "127.0.0.1:19161", path: "/"}}
	a2amesh.t.args = []string{"--addr", a2amesh.t.addr, "--debug-addr", a2amesh.debug, "--retention", "5s", "--log-level", "warn",
		"--slow-interval", interval.String(), "--max-runs", strconv.Itoa(max(*n, server.DefaultMaxRuns))}
	if *n > server.DefaultMaxLiveTasks {
		a2amesh.t.args = append(a2amesh.t.args, "--max-tasks", strconv.Itoa(*n))
	}
	if *state == "nats" {
		dir, err := os.MkdirTemp("", "a2aload-streams-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		self, err := os.Executable()
		if err != nil {
			return err
		}
		a2amesh.stores, a2amesh.natsDebug = "JetStream", "127.0.0.1:19166"
		a2amesh.nats = &target{name: "nats-server", bin: self, addr: "127.0.0.1:19165",
			args: []string{"nats-server", "--port", "19165", "--dir", dir, "--debug-addr", a2amesh.natsDebug}}
		a2amesh.t.args = append(a2amesh.t.args, "--state", "nats", "--nats", "nats://"+a2amesh.nats.addr)
	}
	servers = append(servers, a2amesh)
	if *peer != "" {
		p := &heldServer{name: "a2a-go v2.4.0", stores: "in memory", debug: "127.0.0.1:19164",
			t: &target{name: "a2a-go v2.4.0", bin: *peer, addr: "127.0.0.1:19163", path: "/"}}
		p.t.args = []string{"--addr", p.t.addr, "--debug-addr", p.debug, "--slow-interval", interval.String()}
		servers = append(servers, p)
	}
	var failed error
	for _, s := range servers {
		s.res, s.err = s.hold(ctx, cfg)
		if s.err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, s.err)
			if s == a2amesh {
				failed = s.err
			}
		}
	}
	fmt.Printf("`a2aload streams --streams %d --slow-interval %v --state %s`: each server alone with the load generator, started as", *n, *interval, *state)
	for i, s := range servers {
		fmt.Printf(map[bool]string{true: " `%s`", false: ", then `%s`"}[i == 0], shellJoin(s.t))
	}
	fmt.Printf(". Each task is a \"slow:\" echo run of 20 chunks %v apart; %d requests (or stream openings) at a time; samples after a warm-up of %d streams, the last one %v after the tasks were canceled.\n\n",
		*interval, *conns, *warm, *settle)
	reportHeld(os.Stdout, *n, servers)
	return failed
}

// heldConfig is how streamsCmd loads each server.
type heldConfig struct {
	n, warm, conns            int
	interval, settle, timeout time.Duration
}

// heldServer is a server streamsCmd measures, and what it measured.
type heldServer struct {
	name, stores string
	t            *target
	debug        string // its /debug/pprof/ address
	// nats, with --state nats, is the NATS server it keeps its state on,
	// measured beside it.
	nats      *target
	natsDebug string
	res       heldResult
	err       error
}

// The moments streamsCmd samples a server at.
const (
	phaseIdle    = iota // after the warm-up, its tasks evicted
	phaseRuns           // n tasks running
	phaseStreams        // and a stream open on each, which has had the task
	phaseClosed         // the streams closed by the client, the tasks still running
	phaseAfter          // the tasks canceled, and settled
	phases
)

// heldResult is what one server measured.
type heldResult struct {
	server, nats [phases]procSample
	reached      int // phases sampled
	// startTook and openTook are how long starting the n tasks and
	// opening the n streams took; chunked is how many streams had
	// carried a chunk of the runs when they were sampled.
	startTook, openTook time.Duration
	chunked             int64
}

// hold runs the phases on s, started for them and stopped after.
func (s *heldServer) hold(ctx context.Context, cfg heldConfig) (heldResult, error) {
	var res heldResult
	if s.nats != nil {
		defer s.nats.stop()
		if err := s.nats.start(); err != nil {
			return res, err
		}
	}
	defer s.t.stop()
	if err := s.t.start(); err != nil {
		return res, err
	}
	if err := awaitListening(s.debug); err != nil {
		return res, fmt.Errorf("%s's /debug/pprof/: %w", s.name, err)
	}
	need := uint64(cfg.n + 1000)
	for _, t := range []*target{s.t, s.nats} {
		if t == nil {
			continue
		}
		if limit, err := openFilesLimit(t.cmd.Process.Pid); err != nil || limit < need {
			return res, fmt.Errorf("%s may open %d files (%v); %d streams need about %d", t.name, limit, err, cfg.n, need)
		}
	}
	h, err := newHolder(ctx, "http://"+s.t.addr+"/", cfg.conns, 2*cfg.interval+30*time.Second)
	if err != nil {
		return res, fmt.Errorf("%s: %w", s.name, err)
	}
	defer h.hc.CloseIdleConnections()
	pause := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	sample := func(phase int) error {
		// Only the streams' connections are counted: the others close,
		// and the server has a moment to see them go.
		h.hc.CloseIdleConnections()
		if err := pause(500 * time.Millisecond); err != nil {
			return err
		}
		var err error
		if res.server[phase], err = sampleProc(ctx, s.t.cmd.Process.Pid, s.debug); err != nil {
			return err
		}
		if s.nats != nil {
			if res.nats[phase], err = sampleProc(ctx, s.nats.cmd.Process.Pid, s.natsDebug); err != nil {
				return err
			}
		}
		res.reached = phase + 1
		fmt.Fprintf(os.Stderr, "%s, %d streams, %s: %+v\n", s.name, cfg.n, phaseNames[phase], res.server[phase])
		return nil
	}
	if cfg.warm > 0 {
		w, err := newHolder(ctx, "http://"+s.t.addr+"/", cfg.conns, 2*cfg.interval+30*time.Second)
		if err != nil {
			return res, err
		}
		err = w.start(ctx, cfg.warm)
		if err == nil {
			err = w.open(ctx, cfg.timeout)
		}
		if cerr := w.close(cfg.timeout); err == nil {
			err = cerr
		}
		if err == nil {
			err = w.cancel(ctx)
		}
		w.hc.CloseIdleConnections()
		if err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
		if err := pause(cfg.settle); err != nil {
			return res, err
		}
	}
	if err := sample(phaseIdle); err != nil {
		return res, err
	}
	t0 := time.Now()
	if err := h.start(ctx, cfg.n); err != nil {
		return res, fmt.Errorf("starting %d tasks: %w", cfg.n, err)
	}
	res.startTook = time.Since(t0)
	if err := pause(time.Second); err != nil { // every run under way
		return res, err
	}
	if err := sample(phaseRuns); err != nil {
		return res, err
	}
	t0 = time.Now()
	err = h.open(ctx, cfg.timeout)
	res.openTook = time.Since(t0)
	if err == nil {
		// Sampled before the runs' first chunks, as far as the interval
		// allows: what the tasks hold grows with every chunk, and that is
		// not what the streams cost.
		res.chunked = h.live.Load()
		err = sample(phaseStreams)
	}
	if err == nil {
		// Then an event comes down every stream.
		err = h.awaitLive(ctx, cfg.timeout)
	}
	if cerr := h.close(cfg.timeout); err == nil {
		err = cerr
	}
	if err != nil {
		return res, fmt.Errorf("holding %d streams: %w", cfg.n, err)
	}
	if err := pause(2 * time.Second); err != nil { // the server sees the connections close
		return res, err
	}
	if err := sample(phaseClosed); err != nil {
		return res, err
	}
	if err := h.cancel(ctx); err != nil {
		return res, fmt.Errorf("canceling %d tasks: %w", cfg.n, err)
	}
	if err := pause(cfg.settle); err != nil {
		return res, err
	}
	return res, sample(phaseAfter)
}

var phaseNames = [phases]string{"idle", "tasks running", "streams open", "streams closed", "tasks canceled, settled"}

// holder starts tasks whose runs last, holds a stream open on each and
// ends them, through the project's client SDK: one connection per
// stream, as every HTTP/1.1 client has.
type holder struct {
	c     *client.Client
	hc    *http.Client
	conns int
	ids   []string
	// The streams run on goroutines of their own until stop, or until
	// they fail.
	streams      sync.WaitGroup
	stop         context.CancelFunc
	opened, live atomic.Int64 // streams that had their first event, and an event after it
	mu           sync.Mutex
	failures     int
	firstFailure error
}

// newHolder returns a holder of streams on the agent at url; idle is the
// client's StreamIdleTimeout.
func newHolder(ctx context.Context, url string, conns int, idle time.Duration) (*holder, error) {
	hc := &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        2 * conns,
		MaxIdleConnsPerHost: 2 * conns,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
	}}
	// A stream that is cut fails: a resumption would hide it.
	c, err := client.New(ctx, url, client.Config{HTTPClient: hc, ResumeAttempts: -1, StreamIdleTimeout: idle})
	if err != nil {
		return nil, err
	}
	return &holder{c: c, hc: hc, conns: conns}, nil
}

// start starts n "slow:" tasks, returning as soon as each exists.
func (h *holder) start(ctx context.Context, n int) error {
	h.ids = make([]string, n)
	req := func() *a2a.SendMessageRequest {
		return &a2a.SendMessageRequest{
			Message:       a2a.NewTextMessage(a2a.RoleUser, echo.SlowPrefix+" held open"),
			Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
		}
	}
	return h.each(ctx, n, func(ctx context.Context, i int) error {
		ev, err := h.c.SendMessage(ctx, req())
		if err != nil {
			return err
		}
		t, ok := ev.(*a2a.Task)
		if !ok || t.Status.State.Terminal() {
			return fmt.Errorf("the answer is %T %+v, not a task under way", ev, ev)
		}
		h.ids[i] = t.ID
		return nil
	})
}

// cancel cancels every task, each of which must end CANCELED.
func (h *holder) cancel(ctx context.Context) error {
	return h.each(ctx, len(h.ids), func(ctx context.Context, i int) error {
		t, err := h.c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: h.ids[i]})
		if err != nil {
			return err
		}
		if t.Status.State != a2a.TaskStateCanceled {
			return fmt.Errorf("task %s is %s after CancelTask", t.ID, t.Status.State)
		}
		return nil
	})
}

// each runs f for 0 … n-1, h.conns at a time, until the first error.
func (h *holder) each(ctx context.Context, n int, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range min(h.conns, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(ctx, i); err != nil {
					once.Do(func() { first = fmt.Errorf("%d of %d: %w", i+1, n, err) })
					cancel()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

// open opens a stream on every task, h.conns of them waiting for their
// first event at a time, and returns once each has had it (the task), or
// one failed, or timeout passed.
func (h *holder) open(ctx context.Context, timeout time.Duration) error {
	var sctx context.Context
	sctx, h.stop = context.WithCancel(ctx)
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	waiting := make(chan struct{}, h.conns)
	for _, id := range h.ids {
		select {
		case waiting <- struct{}{}:
		case <-deadline.C:
			return fmt.Errorf("%d of %d streams opened in %v", h.opened.Load(), len(h.ids), timeout)
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := h.err(); err != nil {
			return fmt.Errorf("%d of %d streams open: %w", h.opened.Load(), len(h.ids), err)
		}
		h.streams.Add(1)
		go h.follow(sctx, id, waiting)
	}
	return h.await(ctx, timeout, "streams opened", &h.opened)
}

// awaitLive waits until an event after the first has come down every
// stream.
func (h *holder) awaitLive(ctx context.Context, timeout time.Duration) error {
	return h.await(ctx, timeout, "streams had an event after the task", &h.live)
}

// await waits until count reaches the number of tasks, a stream fails, or
// timeout passes.
func (h *holder) await(ctx context.Context, timeout time.Duration, what string, count *atomic.Int64) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(timeout)
	for {
		if err := h.err(); err != nil {
			return err
		}
		got := count.Load()
		if got == int64(len(h.ids)) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d %s in %v", got, len(h.ids), what, timeout)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// follow holds a stream on task id until ctx ends. It takes a place in
// waiting before it starts and gives it back at the first event.
func (h *holder) follow(ctx context.Context, id string, waiting chan struct{}) {
	defer h.streams.Done()
	first, live := true, false
	release := func() {
		if first {
			first = false
			<-waiting
		}
	}
	defer release()
	for ev, err := range h.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			if ctx.Err() == nil {
				h.fail(fmt.Errorf("the stream of task %s: %w", id, err))
			}
			return
		}
		if first {
			if _, ok := ev.Event.(*a2a.Task); !ok {
				h.fail(fmt.Errorf("the stream of task %s opened with a %T, not the task", id, ev.Event))
				return
			}
			h.opened.Add(1)
			release()
			continue
		}
		if s, ok := a2a.StateOf(ev.Event); ok && s.Terminal() {
			h.fail(fmt.Errorf("task %s ended %s while its stream was held: its run is shorter than the phases (raise --slow-interval)", id, s))
			return
		}
		if !live {
			live = true
			h.live.Add(1)
		}
	}
	if ctx.Err() == nil {
		h.fail(fmt.Errorf("the stream of task %s ended while held", id))
	}
}

func (h *holder) fail(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures == 0 {
		h.firstFailure = err
	}
	h.failures++
}

// err is the first stream failure, with the count.
func (h *holder) err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failures == 0 {
		return nil
	}
	return fmt.Errorf("%d streams failed; the first: %w", h.failures, h.firstFailure)
}

// close closes every stream from the client's side and waits, up to
// timeout, until their goroutines have ended. It returns what failed
// while they were open.
func (h *holder) close(timeout time.Duration) error {
	if h.stop != nil {
		h.stop()
	}
	done := make(chan struct{})
	go func() {
		h.streams.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(timeout):
		return fmt.Errorf("streams still open %v after they were closed", timeout)
	}
	return h.err()
}

// procSample is what a process holds at one moment.
type procSample struct {
	RSS        int64 // resident memory
	Heap       int64 // heap in use after collections
	Stacks     int64 // goroutine stacks in use
	Goroutines int
	Files      int // open file descriptors
}

// sampleProc samples process pid: memory and open files from /proc, and
// goroutines, heap and stacks in use from its /debug/pprof/ on debugAddr.
// The heap profile is asked for twice, each time after a collection: the
// second collection frees what sync.Pools held through the first.
func sampleProc(ctx context.Context, pid int, debugAddr string) (procSample, error) {
	var s procSample
	g, err := getDebug(ctx, debugAddr, "goroutine?debug=1")
	if err != nil {
		return s, err
	}
	if s.Goroutines, err = goroutinesOf(g); err != nil {
		return s, err
	}
	var hp []byte
	for range 2 {
		if hp, err = getDebug(ctx, debugAddr, "heap?debug=1&gc=1"); err != nil {
			return s, err
		}
	}
	if s.Heap, err = memStat(hp, "HeapInuse"); err != nil {
		return s, err
	}
	if s.Stacks, err = memStat(hp, "Stack"); err != nil {
		return s, err
	}
	if s.RSS, _, err = memory(pid); err != nil {
		return s, err
	}
	s.Files, err = openFiles(pid)
	return s, err
}

func getDebug(ctx context.Context, addr, profile string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/"+profile, nil)
	if err != nil {
		return nil, err
	}
	// A connection kept open would be one more goroutine in the next
	// sample.
	req.Close = true
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET /debug/pprof/%s: HTTP %s", profile, resp.Status)
	}
	return b, err
}

// goroutinesOf reads the count from a goroutine profile in its text form
// (debug=1): runtime.NumGoroutine, which Prometheus's go_goroutines is.
func goroutinesOf(profile []byte) (int, error) {
	line, _, _ := bytes.Cut(profile, []byte("\n"))
	n, ok := bytes.CutPrefix(line, []byte("goroutine profile: total "))
	if !ok {
		return 0, fmt.Errorf("not a goroutine profile: %.80q", line)
	}
	return strconv.Atoi(string(bytes.TrimSpace(n)))
}

// memStat reads a runtime.MemStats field from the end of a heap profile
// in its text form (debug=1): "# HeapInuse = 344064", or the first of two
// numbers, in use, as in "# Stack = 262144 / 262144".
func memStat(profile []byte, name string) (int64, error) {
	key := "\n# " + name + " = "
	i := bytes.LastIndex(profile, []byte(key))
	if i < 0 {
		return 0, fmt.Errorf("no %s in the heap profile", name)
	}
	v, _, _ := bytes.Cut(profile[i+len(key):], []byte("\n"))
	v, _, _ = bytes.Cut(v, []byte(" "))
	return strconv.ParseInt(string(v), 10, 64)
}

// reportHeld writes the samples of each server, then what a running task
// and an open stream cost each, and how far each came back after.
func reportHeld(w io.Writer, n int, servers []*heldServer) {
	mib := func(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
	measures := []struct {
		name  string
		value func(procSample) int64
		bytes bool
	}{
		{"RSS", func(p procSample) int64 { return p.RSS }, true},
		{"heap in use", func(p procSample) int64 { return p.Heap }, true},
		{"stacks", func(p procSample) int64 { return p.Stacks }, true},
		{"goroutines", func(p procSample) int64 { return int64(p.Goroutines) }, false},
		{"open files", func(p procSample) int64 { return int64(p.Files) }, false},
	}
	fmt.Fprintf(w, "| server (stores) | | %s | %d tasks running | and a stream open on each | streams closed | tasks canceled, settled |\n", phaseNames[phaseIdle], n)
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, s := range servers {
		rows := []struct {
			name string
			ss   []procSample
		}{{fmt.Sprintf("%s (%s)", s.name, s.stores), s.res.server[:]}}
		if s.nats != nil {
			rows = append(rows, struct {
				name string
				ss   []procSample
			}{"its NATS server", s.res.nats[:]})
		}
		for _, r := range rows {
			for k, m := range measures {
				name := ""
				if k == 0 {
					name = r.name
				}
				fmt.Fprintf(w, "| %s | %s |", name, m.name)
				for i, p := range r.ss {
					switch {
					case i >= s.res.reached:
						fmt.Fprint(w, " — |")
					case m.bytes:
						fmt.Fprintf(w, " %s |", mib(m.value(p)))
					default:
						fmt.Fprintf(w, " %d |", m.value(p))
					}
				}
				fmt.Fprintln(w)
			}
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| server (stores) | | per running task | per open stream | after − idle |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	// per is what one of n costs, from sample a to sample b.
	per := func(m func(procSample) int64, bytes bool, a, b procSample) string {
		d := float64(m(b)-m(a)) / float64(n)
		if bytes {
			return fmt.Sprintf("%.1f KiB", d/1024)
		}
		return fmt.Sprintf("%.2f", d)
	}
	for _, s := range servers {
		name := fmt.Sprintf("%s (%s)", s.name, s.stores)
		r := s.res
		if s.err != nil || r.reached < phases {
			fmt.Fprintf(w, "| %s | failed after %q | %v | | |\n", name, phaseNames[max(r.reached-1, 0)], s.err)
			continue
		}
		report := func(name string, ss []procSample) {
			for k, m := range measures {
				if k > 0 {
					name = ""
				}
				after := fmt.Sprintf("%+d", m.value(ss[phaseAfter])-m.value(ss[phaseIdle]))
				if m.bytes {
					after = fmt.Sprintf("%+.1f MiB", float64(m.value(ss[phaseAfter])-m.value(ss[phaseIdle]))/(1<<20))
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", name, m.name,
					per(m.value, m.bytes, ss[phaseIdle], ss[phaseRuns]), per(m.value, m.bytes, ss[phaseRuns], ss[phaseStreams]), after)
			}
		}
		report(name, r.server[:])
		if s.nats != nil {
			report("its NATS server", r.nats[:])
		}
	}
	fmt.Fprintln(w)
	for _, s := range servers {
		if s.err == nil {
			fmt.Fprintf(w, "%s: %d tasks started in %v (%.0f a second), %d streams opened in %v (%.0f a second); %d streams had carried a chunk when sampled open, all %d later.\n", s.name,
				n, s.res.startTook.Round(100*time.Millisecond), float64(n)/s.res.startTook.Seconds(),
				n, s.res.openTook.Round(100*time.Millisecond), float64(n)/s.res.openTook.Seconds(), s.res.chunked, n)
		}
	}
	if len(servers) == 2 && servers[0].err == nil && servers[1].err == nil {
		o, p := servers[0].res.server, servers[1].res.server
		x := func(m func(procSample) int64, a, b int) float64 {
			return float64(m(o[b])-m(o[a])) / float64(m(p[b])-m(p[a]))
		}
		fmt.Fprintf(w, "\n%s against %s: per running task RSS %.2f×, heap %.2f×, goroutines %.2f×; per open stream RSS %.2f×, heap %.2f×, goroutines %.2f×.\n",
			servers[0].name, servers[1].name,
			x(measures[0].value, phaseIdle, phaseRuns), x(measures[1].value, phaseIdle, phaseRuns), x(measures[3].value, phaseIdle, phaseRuns),
			x(measures[0].value, phaseRuns, phaseStreams), x(measures[1].value, phaseRuns, phaseStreams), x(measures[3].value, phaseRuns, phaseStreams))
	}
	fmt.Fprintln(w)
}

// shellJoin is t's command line as a shell would take it.
func shellJoin(t *target) string {
	var b bytes.Buffer
	b.WriteString(t.bin)
	for _, a := range t.args {
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}
