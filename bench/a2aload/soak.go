package main

import (
	"context"
	"flag"
	"fmt"
	"time"
)

// soakCmd runs servers at their default flags under sustained hostile
// load and reports how their memory moves: blocking sends as fast as they
// are answered; a flood of tasks left waiting for input; and a flood of
// slow runs started with returnImmediately. A server whose memory holds
// under these is not OOM-killed by load, whatever the rate; one whose
// memory grows with the load is, in time. Each phase starts a fresh
// process.
func soakCmd(args []string) error {
	fs := flag.NewFlagSet("soak", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command")
	peer := fs.String("peer", "bin/a2agoecho", "a2a-go v2.4.0 echo server binary (blocking sends only; empty skips it)")
	d := fs.Duration("duration", 60*time.Second, "load per phase and server")
	slow := fs.Duration("slow-duration", 3*time.Minute, "load of the slow-runs phase, whose finished tasks (22 events each, 50 a second at the default run limit) take about a minute to reach the default bounds on finished tasks")
	conns := fs.Int("conns", 32, "concurrent connections")
	maxReq := fs.Int("max", 50_000_000, "request cap per phase")
	if err := fs.Parse(args); err != nil {
		return err
	}
	type phase struct {
		name, text, config string
		peer               bool
		d                  time.Duration
	}
	phases := []phase{
		{name: "blocking sends", text: "hello", peer: true, d: *d},
		{name: "tasks left waiting for input", text: "input: nobody answers", d: *d},
		{name: "slow runs, returnImmediately", text: "slow: x", config: `{"returnImmediately":true}`, d: *slow},
	}
	fmt.Printf("## Memory at default flags under sustained load (%v per phase, %v for slow runs; %d connections)\n\n", *d, *slow, *conns)
	fmt.Println("RSS is sampled every second; growth is from the end of the first fifth of the run to the end, and the slope is fitted over the second half.")
	fmt.Println()
	fmt.Println("| load | server | answered/s | refused, retryable | RSS after warm-up | RSS at end | growth | slope, second half | peak RSS |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	ctx := context.Background()
	for _, ph := range phases {
		servers := []*target{{name: "a2amesh", bin: *ours, addr: "127.0.0.1:19111", path: "/"}}
		if ph.peer && *peer != "" {
			servers = append(servers, &target{name: "a2a-go v2.4.0", bin: *peer, addr: "127.0.0.1:19112", path: "/"})
		}
		for _, t := range servers {
			t.args = []string{"--addr", t.addr} // and nothing else: the defaults are what is measured
			if err := t.start(); err != nil {
				return err
			}
			req := requestWith(t.addr, t.path, "SendMessage", "1.0", ph.text, ph.config)
			s, err := soak(ctx, t, req, *conns, ph.d, *maxReq)
			t.stop()
			if err != nil {
				return fmt.Errorf("%s, %s: %w", ph.name, t.name, err)
			}
			fmt.Printf("| %s | %s | %.0f | %d | %d MiB | %d MiB | %+.0f%% | %+.1f MiB/min | %d MiB |\n", ph.name, t.name,
				float64(s.res.Requests-s.res.Refused)/s.res.Elapsed.Seconds(), s.res.Refused,
				s.warm>>20, s.end>>20, 100*float64(s.end-s.warm)/float64(s.warm), s.slope, s.peak>>20)
		}
	}
	return nil
}

type soakResult struct {
	res             result
	warm, end, peak int64
	slope           float64 // MiB per minute over the second half
}

// soak loads t with req for d, sampling its memory every second.
func soak(ctx context.Context, t *target, req []byte, conns int, d time.Duration, maxReq int) (soakResult, error) {
	pid := t.cmd.Process.Pid
	type sample struct {
		at  time.Duration
		rss int64
	}
	samples := make(chan []sample, 1)
	stop := make(chan struct{})
	go func() {
		var ss []sample
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if rss, _, err := memory(pid); err == nil {
					ss = append(ss, sample{time.Since(start), rss})
				}
			case <-stop:
				samples <- ss
				return
			}
		}
	}()
	res, err := load(ctx, t.addr, req, conns, d, maxReq)
	close(stop)
	ss := <-samples
	if err != nil {
		return soakResult{}, err
	}
	if res.Errors > 0 {
		return soakResult{}, fmt.Errorf("%d requests failed (not refused: failed)", res.Errors)
	}
	out := soakResult{res: res}
	var err2 error
	if out.end, out.peak, err2 = memory(pid); err2 != nil {
		return out, err2
	}
	// The first sample after the warm-up fifth, and a least-squares slope
	// over the second half.
	var n, sx, sy, sxx, sxy float64
	for _, s := range ss {
		if out.warm == 0 && s.at >= d/5 {
			out.warm = s.rss
		}
		if s.at >= d/2 {
			x, y := s.at.Minutes(), float64(s.rss)/(1<<20)
			n, sx, sy, sxx, sxy = n+1, sx+x, sy+y, sxx+x*x, sxy+x*y
		}
	}
	if out.warm == 0 || n < 2 {
		return out, fmt.Errorf("too few memory samples (%d) for a %v run", len(ss), d)
	}
	out.slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return out, nil
}
