package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
	"github.com/a2amesh/a2amesh/services/echo"
)

// stateCmd compares the echo service with its state in memory and on
// JetStream (--state nats) under the same load, rounds rotating which goes
// first, and then measures how long an event made on one JetStream replica
// takes to reach a subscriber on another. Beside them run two floors
// (bench/jsfloor): the echo service with in-memory stores that publishes
// each commit to JetStream, once or twice, waiting for the acks, so the
// report shows what acknowledged writes alone cost on this machine.
func stateCmd(args []string) error {
	fs := flag.NewFlagSet("state", flag.ExitOnError)
	echo := fs.String("echo", "bin/a2amesh serve echo", "a2amesh echo service command")
	floor := fs.String("floor", "bin/jsfloor", "durable-write floor binary (empty: no floors)")
	rounds := fs.Int("rounds", 3, "rounds; which configuration goes first rotates each round")
	d := fs.Duration("duration", 8*time.Second, "measured load per configuration, scenario and round")
	warm := fs.Duration("warmup", 2*time.Second, "unmeasured load before each measurement")
	conns := fs.Int("conns", 32, "concurrent connections")
	maxReq := fs.Int("max", 2_000_000, "request cap per measurement")
	followers := fs.Int("followers", 8, "concurrent tasks followed from the other replica in the delay measurement")
	delayFor := fs.Duration("delay-duration", 20*time.Second, "how long to measure the cross-replica delay (0 skips it)")
	natsCPUs := fs.String("nats-cpus", "", "CPUs the NATS server runs on (taskset -c list), as in a deployment that gives it cores of its own; run a2aload itself under taskset on the others (empty: NATS shares every CPU)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "a2aload-state-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	nats := &target{name: "nats-server", bin: self, addr: "127.0.0.1:19210", args: []string{"nats-server", "--port", "19210", "--dir", dir}}
	if *natsCPUs != "" {
		// taskset execs the server: its pid, whose CPU is measured, stays.
		nats.bin = "taskset -c " + *natsCPUs + " " + self
	}
	url := "nats://" + nats.addr
	echoArgs := func(addr string, extra ...string) []string {
		return append([]string{"--addr", addr, "--retention", "5s", "--log-level", "warn"}, extra...)
	}
	mem := &target{name: "in-memory stores", bin: *echo, addr: "127.0.0.1:19211", path: "/"}
	js := &target{name: "JetStream stores", bin: *echo, addr: "127.0.0.1:19212", path: "/"}
	replica := &target{name: "JetStream replica B", bin: *echo, addr: "127.0.0.1:19213", path: "/"}
	mem.args = echoArgs(mem.addr)
	// Ended tasks are kept as long as events, as the floors keep what they
	// publish: the stream removes both by age, in order.
	js.args = echoArgs(js.addr, "--state", "nats", "--nats", url, "--events-max-age", "1m", "--retention", "1m")
	replica.args = echoArgs(replica.addr, "--state", "nats", "--nats", url, "--events-max-age", "1m", "--retention", "1m")
	measured := []*target{mem, js}
	if *floor != "" {
		for i, name := range []string{"floor: 1 publish/commit", "floor: 2 publishes/commit"} {
			addr := fmt.Sprintf("127.0.0.1:%d", 19214+i)
			measured = append(measured, &target{name: name, bin: *floor, addr: addr, path: "/",
				args: []string{"--addr", addr, "--nats", url, "--retention", "5s", "--publishes", strconv.Itoa(i + 1)}})
		}
	}
	for _, t := range append([]*target{nats, replica}, measured...) {
		defer t.stop()
		if err := t.start(); err != nil {
			return err
		}
	}

	ctx := context.Background()
	// The delay first, on an otherwise idle mesh: after the load the
	// servers are still evicting thousands of tasks.
	if *delayFor > 0 {
		delays, err := crossReplica(ctx, "http://"+js.addr+"/", "http://"+replica.addr+"/", *followers, *delayFor)
		if err != nil {
			return err
		}
		slices.Sort(delays)
		at := func(p float64) time.Duration { return delays[int(p*float64(len(delays)-1))] }
		fmt.Printf("## An event made on replica A, delivered to a subscriber on replica B\n\n")
		fmt.Printf("%d events (\"slow:\" echo chunks, %d tasks at a time): p50 %v, p99 %v, max %v.\n\n",
			len(delays), *followers, at(.5).Round(time.Microsecond), at(.99).Round(time.Microsecond), delays[len(delays)-1].Round(time.Microsecond))
	}
	order := []string{"send", "stream"}
	type run struct {
		m       measurement
		natsCPU time.Duration
	}
	results := map[string]map[string][]run{}
	for r := range *rounds {
		for _, key := range order {
			sc := scenarios[key]
			for _, t := range rotated(measured, r) {
				if _, err := t.measure(ctx, sc, *conns, *warm, *maxReq); err != nil {
					return err
				}
				n0, err := cpuTime(nats.cmd.Process.Pid)
				if err != nil {
					return err
				}
				m, err := t.measure(ctx, sc, *conns, *d, *maxReq)
				if err != nil {
					return err
				}
				n1, err := cpuTime(nats.cmd.Process.Pid)
				if err != nil {
					return err
				}
				if results[key] == nil {
					results[key] = map[string][]run{}
				}
				results[key][t.name] = append(results[key][t.name], run{m, n1 - n0})
				fmt.Fprintf(os.Stderr, "round %d %-15s %-17s %8.0f req/s  p50 %-10v p99 %-10v cpu %v/req, NATS %v/req\n",
					r+1, sc.name, t.name, m.res.rate(), m.res.pct(.5), m.res.pct(.99), m.cpuPerReq(), (n1-n0)/time.Duration(max(m.res.Requests, 1)))
			}
		}
	}
	for _, key := range order {
		if *rounds == 0 {
			break
		}
		sc := scenarios[key]
		fmt.Printf("## %s: stores in memory vs on JetStream, and the floors (median of %d rounds)\n\n", sc.name, *rounds)
		fmt.Println("| stores | req/s | × in-memory | p50 | p99 | server CPU / req | NATS server CPU / req |")
		fmt.Println("|---|---|---|---|---|---|---|")
		var base float64
		for _, t := range measured {
			runs := slices.Clone(results[key][t.name])
			slices.SortFunc(runs, func(a, b run) int { return cmp.Compare(a.m.res.rate(), b.m.res.rate()) })
			m, natsCPU := runs[len(runs)/2].m, runs[len(runs)/2].natsCPU
			if base == 0 {
				base = m.res.rate()
			}
			fmt.Printf("| %s | %.0f | %.2f | %v | %v | %v | %v |\n", t.name, m.res.rate(), m.res.rate()/base,
				m.res.pct(.5).Round(time.Microsecond), m.res.pct(.99).Round(time.Microsecond), m.cpuPerReq().Round(100*time.Nanosecond),
				(natsCPU / time.Duration(max(m.res.Requests, 1))).Round(100*time.Nanosecond))
		}
		fmt.Println()
	}
	return nil
}

// crossReplica starts "slow:" echo tasks on replica a and follows each from
// replica b, until d has passed: each chunk says when a's agent made it,
// and the delay is from then until b delivered it to this subscriber.
// Chunks made before b's subscription was live do not count.
func crossReplica(ctx context.Context, a, b string, followers int, d time.Duration) ([]time.Duration, error) {
	ca, err := client.New(ctx, a, client.Config{})
	if err != nil {
		return nil, err
	}
	defer ca.CloseIdleConnections()
	cb, err := client.New(ctx, b, client.Config{})
	if err != nil {
		return nil, err
	}
	defer cb.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu     sync.Mutex
		delays []time.Duration
		errs   []error
		wg     sync.WaitGroup
	)
	for range followers {
		wg.Go(func() {
			// Bounded in count as well as in time.
			for range 1000 {
				got, err := followOne(ctx, ca, cb)
				mu.Lock()
				delays = append(delays, got...)
				if err != nil && ctx.Err() == nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil || ctx.Err() != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(delays) == 0 {
		return nil, errors.New("no event was delivered on replica B")
	}
	return delays, nil
}

func followOne(ctx context.Context, ca, cb *client.Client) ([]time.Duration, error) {
	var taskID string
	// The first event names the task; the run goes on without this stream.
	for ev, err := range ca.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, echo.SlowPrefix+" twenty characters..")}) {
		if err != nil {
			return nil, fmt.Errorf("start a task on replica A: %w", err)
		}
		taskID, _ = ev.Event.TaskIDs()
		break
	}
	var delays []time.Duration
	var live time.Time
	for ev, err := range cb.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID}) {
		now := time.Now()
		if err != nil {
			return delays, fmt.Errorf("follow task %s on replica B: %w", taskID, err)
		}
		if live.IsZero() {
			live = now // the task as it is: from here on events are live
			continue
		}
		u, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent)
		if !ok {
			continue
		}
		s, _ := u.Artifact.Metadata[echo.SentAtKey].(string)
		sent, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return delays, fmt.Errorf("chunk without %s: %w", echo.SentAtKey, err)
		}
		if sent.After(live) {
			delays = append(delays, now.Sub(sent))
		}
	}
	return delays, nil
}

// natsServerCmd runs an embedded NATS server in a process of its own, so
// that its CPU is measured apart from the load and the A2A servers.
func natsServerCmd(args []string) error {
	fs := flag.NewFlagSet("nats-server", flag.ExitOnError)
	port := fs.Int("port", 4222, "port on 127.0.0.1")
	dir := fs.String("dir", "", "JetStream data directory (required)")
	debugAddr := fs.String("debug-addr", "", "address for /debug/pprof/ (empty: off)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return errors.New("nats-server: --dir is required")
	}
	srv, err := embedded.Start(embedded.Config{Dir: *dir, Port: *port})
	if err != nil {
		return err
	}
	defer srv.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cli.ServeDebug(ctx, *debugAddr, slog.Default())
	<-ctx.Done()
	return nil
}
