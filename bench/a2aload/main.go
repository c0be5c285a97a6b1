// Command a2aload drives A2A servers with load and compares them.
//
//	a2aload run --addr 127.0.0.1:9001 --scenario send --conns 32 --duration 10s
//	a2aload run --binding grpc --addr 127.0.0.1:9002 --scenario stream
//	a2aload compare --ours "bin/a2amesh serve echo" --peer bin/a2agoecho --floor bin/hertzfloor
//	a2aload bindings --ours "bin/a2amesh serve echo" --peer bin/a2agoecho
//	a2aload hops --ours bin/hops --peer bin/adkgohops
//	a2aload state --echo "bin/a2amesh serve echo"
//	a2aload soak --ours "bin/a2amesh serve echo" --peer bin/a2agoecho
//	a2aload streams --ours "bin/a2amesh serve echo" --peer bin/a2agoecho [--state nats]
//	a2aload retain --ours "bin/a2amesh serve echo" --before "bin/a2amesh-before serve echo"
//	a2aload auth --ours "bin/a2amesh serve echo"
//	a2aload telemetry --ours "bin/a2amesh serve echo" --before "bin/a2amesh-before serve echo"
//
// compare starts the three servers as separate processes (a2amesh's echo
// service, the a2a-go v2.4.0 echo server, and a bare Hertz JSON-RPC echo
// that is the floor no A2A server can beat), drives each in turn with the
// same requests, alternating the order every round, and reports
// throughput, latency, server CPU per request and memory as ratios. Every
// load loop is bounded in both time and request count. bindings does the
// same for each binding both servers serve (JSON-RPC, HTTP+JSON, gRPC).
// auth measures what authenticating each request costs: the echo server
// open beside it gated by an API key and by bearer JWTs. telemetry
// measures what tracing every request costs beside tracing off. streams
// holds 10,000 tasks running and a stream open on each on one process and
// reports what each costs it. retain measures what a finished task costs
// the echo server to keep (RSS per task, GC per request), beside another
// build. run --header sends credentials to a gated server.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = runCmd(os.Args[2:])
	case "compare":
		err = compareCmd(os.Args[2:])
	case "hops":
		err = hopsCmd(os.Args[2:])
	case "state":
		err = stateCmd(os.Args[2:])
	case "soak":
		err = soakCmd(os.Args[2:])
	case "retain":
		err = retainCmd(os.Args[2:])
	case "bindings":
		err = bindingsCmd(os.Args[2:])
	case "auth":
		err = authCmd(os.Args[2:])
	case "telemetry":
		err = telemetryCmd(os.Args[2:])
	case "streams":
		err = streamsCmd(os.Args[2:])
	case "nats-server":
		err = natsServerCmd(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "a2aload:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: a2aload run|compare|bindings|auth|telemetry|hops|state|soak|streams|retain [flags] (see -h of each)")
	os.Exit(2)
}

// scenario is one kind of request: its JSON-RPC method, and its route in
// the HTTP+JSON binding and method in the gRPC one.
type scenario struct {
	name, method, text string
	rest, grpc         string
}

var scenarios = map[string]scenario{
	"send":   {"blocking send", "SendMessage", "hello", "/message:send", grpcSend},
	"stream": {"streaming send", "SendStreamingMessage", "hello world", "/message:stream", grpcStream},
}

func runCmd(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:9001", "server address")
	path := fs.String("path", "/", "JSON-RPC endpoint path, or the HTTP+JSON binding's base path")
	binding := fs.String("binding", "jsonrpc", "jsonrpc, rest (HTTP+JSON) or grpc")
	scen := fs.String("scenario", "send", "send or stream")
	conns := fs.Int("conns", 32, "concurrent requests: HTTP connections, or gRPC calls in flight")
	grpcConns := fs.Int("grpc-conns", 4, "HTTP/2 connections the gRPC calls share")
	d := fs.Duration("duration", 10*time.Second, "how long to load")
	maxReq := fs.Int("max", 5_000_000, "stop after this many requests")
	var hs headerFlag
	fs.Var(&hs, "header", "a header every request carries, as \"Name: value\" (repeatable): credentials, such as \"Authorization: Bearer TOKEN\" or \"X-API-Key: KEY\"; gRPC metadata over gRPC")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sc, ok := scenarios[*scen]
	if !ok {
		return fmt.Errorf("unknown scenario %q", *scen)
	}
	b, ok := map[string]string{"jsonrpc": bindingJSONRPC, "rest": bindingREST, "grpc": bindingGRPC}[*binding]
	if !ok {
		return fmt.Errorf("unknown binding %q", *binding)
	}
	lb := &bindingsBench{conns: *conns, grpcConns: *grpcConns, maxReq: *maxReq, headers: hs}
	run, err := lb.driver(context.Background(), endpoint{binding: b, addr: *addr, path: *path}, sc)
	if err != nil {
		return err
	}
	res, err := run(*d)
	if err != nil {
		return err
	}
	fmt.Printf("%s over %s: %d requests, %d errors, %.0f req/s, p50 %v, p99 %v\n",
		sc.name, b, res.Requests, res.Errors, res.rate(), res.pct(0.50), res.pct(0.99))
	return nil
}

// target is a server under test.
type target struct {
	name string
	bin  string
	args []string
	addr string
	path string
	// also are the other addresses it listens on (other bindings'), to be
	// free before it starts and listening before it counts as started.
	also []string
	// env is added to a2aload's environment for the process.
	env []string
	cmd *exec.Cmd
}

// rotated returns ts starting at ts[r % len(ts)], so that over the rounds
// each target takes its turn first.
func rotated[T any](ts []T, r int) []T {
	k := r % len(ts)
	return append(slices.Clone(ts[k:]), ts[:k]...)
}

// start runs the target: t.bin is a command, its arguments after the
// binary's path ("bin/a2amesh serve echo"), then t.args.
//
// A server left over from another run on one of its addresses would be
// measured in its place, so they must be free first. The process is
// killed if a2aload dies.
func (t *target) start() error {
	addrs := append([]string{t.addr}, t.also...)
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			return fmt.Errorf("start %s: something already listens on %s", t.name, a)
		}
	}
	argv := append(strings.Fields(t.bin), t.args...)
	t.cmd = exec.Command(argv[0], argv[1:]...)
	if len(t.env) > 0 {
		t.cmd.Env = append(os.Environ(), t.env...)
	}
	t.cmd.Stdout, t.cmd.Stderr = io.Discard, os.Stderr
	t.cmd.SysProcAttr = dieWithParent()
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", t.name, err)
	}
	for _, a := range addrs {
		if err := awaitListening(a); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return nil
}

// awaitListening waits up to 5 s for something to accept connections on
// addr.
func awaitListening(addr string) error {
	for range 500 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("nothing listens on %s after 5s", addr)
}

func (t *target) stop() {
	if t.cmd != nil && t.cmd.Process != nil {
		_ = t.cmd.Process.Kill() // a benchmark server has nothing to flush
		_ = t.cmd.Wait()
	}
}

// measurement is one load run against one target.
type measurement struct {
	res result
	cpu time.Duration
	rss int64 // resident memory right after the run, bytes
	// driverCPU is the CPU time a2aload spent in the run: on shared
	// cores, what the load driver takes the server cannot have.
	driverCPU time.Duration
}

func (m measurement) cpuPerReq() time.Duration { return m.perReq(m.cpu) }

func (m measurement) perReq(cpu time.Duration) time.Duration {
	if m.res.Requests == 0 {
		return 0
	}
	return cpu / time.Duration(m.res.Requests)
}

func (t *target) measure(ctx context.Context, sc scenario, conns int, d time.Duration, maxReq int) (measurement, error) {
	req := request(t.addr, t.path, sc.method, "1.0", sc.text)
	return t.measureWith(func() (result, error) { return load(ctx, t.addr, req, conns, d, maxReq) })
}

// measureWith runs a load run and reads the server's CPU time (and
// a2aload's) around it and its memory after it. Any failed or refused
// request fails it.
func (t *target) measureWith(run func() (result, error)) (measurement, error) {
	pid, self := t.cmd.Process.Pid, os.Getpid()
	cpu0, err := cpuTime(pid)
	if err != nil {
		return measurement{}, err
	}
	own0, err := cpuTime(self)
	if err != nil {
		return measurement{}, err
	}
	res, err := run()
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", t.name, err)
	}
	cpu1, err := cpuTime(pid)
	if err != nil {
		return measurement{}, err
	}
	own1, err := cpuTime(self)
	if err != nil {
		return measurement{}, err
	}
	if res.Errors > 0 || res.Refused > 0 {
		return measurement{}, fmt.Errorf("%s: %d of %d requests failed and %d were refused", t.name, res.Errors, res.Requests+res.Errors, res.Refused)
	}
	rss, _, err := memory(pid)
	if err != nil {
		return measurement{}, err
	}
	return measurement{res: res, cpu: cpu1 - cpu0, rss: rss, driverCPU: own1 - own0}, nil
}

func compareCmd(args []string) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command")
	peer := fs.String("peer", "bin/a2agoecho", "a2a-go v2.4.0 echo server binary")
	floor := fs.String("floor", "bin/hertzfloor", "bare Hertz JSON-RPC echo binary")
	rounds := fs.Int("rounds", 3, "rounds; the order of servers rotates each round")
	d := fs.Duration("duration", 8*time.Second, "measured load per server, scenario and round")
	warm := fs.Duration("warmup", 2*time.Second, "unmeasured load before each measurement")
	conns := fs.Int("conns", 32, "concurrent connections")
	maxReq := fs.Int("max", 2_000_000, "request cap per measurement")
	sustain := fs.Duration("sustain", 60*time.Second, "sustained blocking-send run for the memory check (0 skips it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	targets := []*target{
		{name: "hertz floor", bin: *floor, addr: "127.0.0.1:19101", path: "/"},
		{name: "a2amesh", bin: *ours, addr: "127.0.0.1:19102", path: "/"},
		{name: "a2a-go v2.4.0", bin: *peer, addr: "127.0.0.1:19103", path: "/"},
	}
	targets[0].args = []string{"--addr", targets[0].addr}
	targets[1].args = []string{"--addr", targets[1].addr, "--retention", "5s", "--log-level", "warn"}
	targets[2].args = []string{"--addr", targets[2].addr}
	for _, t := range targets {
		defer t.stop()
		if err := t.start(); err != nil {
			return err
		}
	}
	ctx := context.Background()
	order := []string{"send", "stream"}
	results := map[string]map[string][]measurement{}
	for r := range *rounds {
		for _, key := range order {
			sc := scenarios[key]
			rot := rotated(targets, r)
			for _, t := range rot {
				if _, err := t.measure(ctx, sc, *conns, *warm, *maxReq); err != nil {
					return err
				}
				m, err := t.measure(ctx, sc, *conns, *d, *maxReq)
				if err != nil {
					return err
				}
				if results[key] == nil {
					results[key] = map[string][]measurement{}
				}
				results[key][t.name] = append(results[key][t.name], m)
				fmt.Fprintf(os.Stderr, "round %d %-15s %-14s %8.0f req/s  p50 %-10v p99 %-10v cpu %v/req\n",
					r+1, sc.name, t.name, m.res.rate(), m.res.pct(.5), m.res.pct(.99), m.cpuPerReq())
			}
		}
	}
	report(os.Stdout, targets, order, results)
	if *sustain > 0 {
		fmt.Println()
		fmt.Printf("## Memory through a %v sustained blocking-send run\n\n", *sustain)
		fmt.Println("| server | RSS after warm-up | RSS at end | growth | peak RSS | req/s |")
		fmt.Println("|---|---|---|---|---|---|")
		for _, t := range targets[1:] {
			if err := sustained(ctx, t, *conns, *sustain, *maxReq*100); err != nil {
				return err
			}
		}
	}
	return nil
}

// median returns the measurement with the median throughput.
func median(ms []measurement) measurement {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b measurement) int {
		switch {
		case a.res.rate() < b.res.rate():
			return -1
		case a.res.rate() > b.res.rate():
			return 1
		}
		return 0
	})
	return s[len(s)/2]
}

func report(w io.Writer, targets []*target, order []string, results map[string]map[string][]measurement) {
	floor, ours, peer := targets[0].name, targets[1].name, targets[2].name
	for _, key := range order {
		sc := scenarios[key]
		fmt.Fprintf(w, "## %s (median of rounds)\n\n", sc.name)
		fmt.Fprintln(w, "| server | req/s | × floor | p50 | p99 | server CPU / req | peak RSS |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		base := median(results[key][floor]).res.rate()
		for _, t := range targets {
			m := median(results[key][t.name])
			_, peak, _ := memory(t.cmd.Process.Pid)
			fmt.Fprintf(w, "| %s | %.0f | %.2f | %v | %v | %v | %d MiB |\n", t.name, m.res.rate(), m.res.rate()/base,
				m.res.pct(.5).Round(time.Microsecond), m.res.pct(.99).Round(time.Microsecond), m.cpuPerReq().Round(100*time.Nanosecond), peak>>20)
		}
		o, p := median(results[key][ours]), median(results[key][peer])
		fmt.Fprintf(w, "\n%s vs %s: %.1f× the throughput, p99 %.2f×, CPU per request %.2f×.\n\n", ours, peer,
			o.res.rate()/p.res.rate(), ratio(o.res.pct(.99), p.res.pct(.99)), ratio(o.cpuPerReq(), p.cpuPerReq()))
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// sustained loads t with blocking sends for d and reports how its memory
// moved after the first fifth of the run.
func sustained(ctx context.Context, t *target, conns int, d time.Duration, maxReq int) error {
	pid := t.cmd.Process.Pid
	warmUp := d / 5
	done := make(chan struct{})
	var afterWarm int64
	go func() {
		defer close(done)
		select {
		case <-time.After(warmUp):
			afterWarm, _, _ = memory(pid)
		case <-ctx.Done():
		}
	}()
	res, err := load(ctx, t.addr, request(t.addr, t.path, "SendMessage", "1.0", "hello"), conns, d, maxReq)
	<-done
	if err != nil {
		return err
	}
	end, peak, err := memory(pid)
	if err != nil {
		return err
	}
	if afterWarm == 0 {
		return errors.New("no memory sample after warm-up")
	}
	fmt.Printf("| %s | %d MiB | %d MiB | %+.0f%% | %d MiB | %.0f |\n", t.name, afterWarm>>20, end>>20,
		100*float64(end-afterWarm)/float64(afterWarm), peak>>20, res.rate())
	return nil
}
