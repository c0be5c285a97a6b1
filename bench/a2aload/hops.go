package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/natsstore"
)

// hopsCmd measures what a remote hop adds: a leaf agent answered directly
// (0 hops), through one relay process (1 hop) and through two (2 hops), for
// a2amesh (bench/hops, task events published to NATS) and for adk-go with
// a2a-go (bench/adkgohops), in one run. Latency and CPU (summed over every
// process of the topology, NATS included) are per request; their growth
// per hop is what a hop costs. For a2amesh every task event is then checked
// on NATS: each task's events numbered 1..n without a gap, ending in a
// final state, one task per request and process.
func hopsCmd(args []string) error {
	fs := flag.NewFlagSet("hops", flag.ExitOnError)
	ours := fs.String("ours", "bin/hops", "a2amesh hop benchmark binary (bench/hops)")
	peer := fs.String("peer", "bin/adkgohops", "adk-go + a2a-go hop benchmark binary (bench/adkgohops); empty skips it")
	rounds := fs.Int("rounds", 3, "rounds; the median round is reported")
	d := fs.Duration("duration", 5*time.Second, "measured load per topology and round")
	warm := fs.Duration("warmup", time.Second, "unmeasured load before each measurement")
	conns := fs.Int("conns", 1, "concurrent connections (1 measures latency without queueing)")
	maxReq := fs.Int("max", 200_000, "request cap per measurement")
	sustain := fs.Duration("sustain", 30*time.Second, "sustained load through one hop for the memory check (0 skips it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	impls := []*hopImpl{
		{name: "a2amesh", bin: *ours, nats: true, version: "1.0"},
		{name: "a2amesh, hops over gRPC", bin: *ours, nats: true, version: "1.0", grpc: true},
	}
	if *peer != "" {
		impls = append(impls, &hopImpl{name: "adk-go v0.3.0 + a2a-go v0.3.3", bin: *peer, version: "0.3"})
	}
	ctx := context.Background()
	results := map[string]map[int][]measurement{}
	for r := range *rounds {
		for _, impl := range impls {
			for hops := range 3 {
				m, err := impl.run(ctx, hops, func(front *target) (measurement, error) {
					if _, err := impl.measure(ctx, front, *conns, *warm, *maxReq); err != nil {
						return measurement{}, err
					}
					return impl.measure(ctx, front, *conns, *d, *maxReq)
				})
				if err != nil {
					return fmt.Errorf("%s, %d hops: %w", impl.name, hops, err)
				}
				if results[impl.name] == nil {
					results[impl.name] = map[int][]measurement{}
				}
				results[impl.name][hops] = append(results[impl.name][hops], m)
				fmt.Fprintf(os.Stderr, "round %d %-30s %d hops: p50 %-10v p99 %-10v cpu %v/req (%d requests)\n",
					r+1, impl.name, hops, m.res.pct(.5), m.res.pct(.99), m.cpuPerReq(), m.res.Requests)
			}
		}
	}

	fmt.Printf("## What a remote hop adds (median of %d rounds, %d connection(s), loopback)\n\n", *rounds, *conns)
	fmt.Println("| implementation | hops | p50 | p99 | CPU / request | added per hop: p50 | p99 | CPU |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, impl := range impls {
		base := medianLatency(results[impl.name][0])
		for hops := range 3 {
			m := medianLatency(results[impl.name][hops])
			added := "|  |  |  |"
			if hops > 0 {
				n := time.Duration(hops)
				added = fmt.Sprintf("| %v | %v | %v |", ((m.res.pct(.5) - base.res.pct(.5)) / n).Round(time.Microsecond),
					((m.res.pct(.99) - base.res.pct(.99)) / n).Round(time.Microsecond),
					((m.cpuPerReq() - base.cpuPerReq()) / n).Round(time.Microsecond))
			}
			fmt.Printf("| %s | %d | %v | %v | %v %s\n", impl.name, hops, m.res.pct(.5).Round(time.Microsecond),
				m.res.pct(.99).Round(time.Microsecond), m.cpuPerReq().Round(time.Microsecond), added)
		}
	}
	if *sustain > 0 {
		fmt.Printf("\n## Memory through %v of sustained requests through one hop\n\n", *sustain)
		fmt.Println("| implementation | process | RSS at half time | RSS at end | growth | per request of the 2nd half | requests |")
		fmt.Println("|---|---|---|---|---|---|---|")
		for _, impl := range impls {
			if err := impl.sustained(ctx, *sustain, *maxReq*10); err != nil {
				return err
			}
		}
	}
	return nil
}

// medianLatency returns the measurement with the median p50.
func medianLatency(ms []measurement) measurement {
	s := slices.Clone(ms)
	slices.SortFunc(s, func(a, b measurement) int { return int(a.res.pct(.5) - b.res.pct(.5)) })
	return s[len(s)/2]
}

// hopImpl is one implementation's hop benchmark binary.
type hopImpl struct {
	name, bin string
	nats      bool
	// grpc: every agent also serves gRPC, and each relay calls the next
	// agent over it (the load still enters the front over JSON-RPC).
	grpc    bool
	version string // the A2A version its servers speak
	sent    int    // requests answered in this topology, for the events check
	dirs    []string
}

// stop stops procs, the front first, and removes their data.
func (h *hopImpl) stop(procs []*target) {
	for i := len(procs) - 1; i >= 0; i-- {
		procs[i].stop()
	}
	for _, d := range h.dirs {
		os.RemoveAll(d)
	}
	h.dirs = nil
}

// topology starts the leaf, then hops relays in front of it (and NATS
// first, for a2amesh); the last started is the front.
func (h *hopImpl) topology(hops int) (procs []*target, natsURL string, err error) {
	base := 19300
	var common []string
	if h.nats {
		dir, err := os.MkdirTemp("", "a2aload-nats-")
		if err != nil {
			return nil, "", err
		}
		h.dirs = append(h.dirs, dir)
		n := &target{name: "nats", bin: h.bin, addr: "127.0.0.1:19399",
			args: []string{"nats", "--port", "19399", "--dir", dir}}
		if err := n.start(); err != nil {
			return nil, "", err
		}
		procs = append(procs, n)
		natsURL = "nats://" + n.addr
		common = []string{"--nats", natsURL, "--log-level", "warn", "--retention", "5s"}
	}
	grpc := func(i int) []string {
		if !h.grpc {
			return nil
		}
		return []string{"--grpc-addr", "127.0.0.1:" + strconv.Itoa(base+50+i), "--hop", "GRPC"}
	}
	leaf := &target{name: "leaf", bin: h.bin, addr: "127.0.0.1:" + strconv.Itoa(base), path: "/",
		args: append(append([]string{"leaf", "--addr", "127.0.0.1:" + strconv.Itoa(base)}, common...), grpc(0)...)}
	if err := leaf.start(); err != nil {
		return procs, "", err
	}
	procs = append(procs, leaf)
	for i := 1; i <= hops; i++ {
		addr := "127.0.0.1:" + strconv.Itoa(base+i)
		relay := &target{name: "relay" + strconv.Itoa(i), bin: h.bin, addr: addr, path: "/",
			args: append(append([]string{"relay", "--addr", addr, "--to", "http://" + procs[len(procs)-1].addr + "/"}, common...), grpc(i)...)}
		if err := relay.start(); err != nil {
			return procs, "", err
		}
		procs = append(procs, relay)
	}
	return procs, natsURL, nil
}

// run starts a topology, measures it with fn, checks its events, stops it.
func (h *hopImpl) run(ctx context.Context, hops int, fn func(front *target) (measurement, error)) (measurement, error) {
	procs, natsURL, err := h.topology(hops)
	defer h.stop(procs)
	if err != nil {
		return measurement{}, err
	}
	h.sent = 0
	front := procs[len(procs)-1]
	cpu0, err := cpuOf(procs)
	if err != nil {
		return measurement{}, err
	}
	m, err := fn(front)
	if err != nil {
		return m, err
	}
	cpu1, err := cpuOf(procs)
	if err != nil {
		return m, err
	}
	// The CPU of every process of the topology, over the measured run
	// (the warm-up's share is taken out in proportion to its requests).
	m.cpu = (cpu1 - cpu0) * time.Duration(m.res.Requests) / time.Duration(max(h.sent, 1))
	if natsURL != "" {
		if err := checkEvents(ctx, natsURL, h.sent*(hops+1)); err != nil {
			return m, err
		}
	}
	return m, nil
}

func cpuOf(procs []*target) (time.Duration, error) {
	var total time.Duration
	for _, p := range procs {
		c, err := cpuTime(p.cmd.Process.Pid)
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// measure loads the front with blocking sends.
func (h *hopImpl) measure(ctx context.Context, front *target, conns int, d time.Duration, maxReq int) (measurement, error) {
	req := h.request(front.addr)
	res, err := load(ctx, front.addr, req, conns, d, maxReq)
	if err != nil {
		return measurement{}, err
	}
	if res.Errors > 0 {
		return measurement{}, fmt.Errorf("%d of %d requests failed", res.Errors, res.Requests+res.Errors)
	}
	h.sent += res.Requests
	return measurement{res: res}, nil
}

func (h *hopImpl) request(addr string) []byte {
	if h.version == "0.3" {
		body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m-1","role":"user","parts":[{"kind":"text","text":"hello"}]}}}`
		return fmt.Appendf(nil, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	}
	return request(addr, "/", "SendMessage", "1.0", "hello")
}

// sustained loads a one-hop topology for d and reports the memory of its
// relay and leaf.
func (h *hopImpl) sustained(ctx context.Context, d time.Duration, maxReq int) error {
	procs, _, err := h.topology(1)
	defer h.stop(procs)
	if err != nil {
		return err
	}
	front := procs[len(procs)-1]
	// Half the time fills the servers' task retention (5 s) and lets the
	// heap settle; the other half shows whether memory still grows.
	warmUp := d / 2
	after := map[string]int64{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(warmUp)
		for _, p := range procs {
			after[p.name], _, _ = memory(p.cmd.Process.Pid)
		}
	}()
	res, err := load(ctx, front.addr, h.request(front.addr), 4, d, maxReq)
	<-done
	if err != nil {
		return err
	}
	for _, p := range procs {
		if p.name == "nats" {
			continue
		}
		end, _, err := memory(p.cmd.Process.Pid)
		if err != nil {
			return err
		}
		a := after[p.name]
		// The load is steady, so the second half saw about half the requests.
		perReq := float64(end-a) / float64(max(res.Requests/2, 1))
		fmt.Printf("| %s | %s | %d MiB | %d MiB | %+.0f%% | %+.1f KB | %d |\n", h.name, p.name, a>>20, end>>20,
			100*float64(end-a)/float64(max(a, 1)), perReq/1024, res.Requests)
	}
	return nil
}

// checkEvents reads every event the topology published and checks that
// none is missing: tasks tasks, each numbered 1..n, each ending settled.
// Events still on their way (publishing is asynchronous) get 30 s.
func checkEvents(ctx context.Context, url string, tasks int) error {
	nc, js, err := natsstore.Connect(ctx, url, natsstore.ConnConfig{Name: "a2aload"})
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	last := map[string]uint64{}
	settled := 0
	for we, err := range natsstore.Watch(ctx, js, time.Unix(0, 0)) {
		if err != nil {
			return err
		}
		key := we.Agent + "/" + we.TaskID
		if we.Seq != last[key]+1 {
			return fmt.Errorf("events lost: %s has event %d after %d", key, we.Seq, last[key])
		}
		last[key] = we.Seq
		if s, ok := a2a.StateOf(we.Event); ok && s.Settled() {
			if settled++; settled == tasks {
				break
			}
		}
	}
	if len(last) != tasks || settled != tasks {
		return fmt.Errorf("events lost: %d tasks published, %d settled, %d expected", len(last), settled, tasks)
	}
	return nil
}
