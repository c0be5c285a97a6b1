package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"
)

// variant is one way of running a server for a side-by-side comparison:
// its command, its --auth-config (none: open), its environment beyond
// a2aload's, and the headers every request then carries.
type variant struct {
	name    string
	bin     string   // command, as target.bin
	config  string   // --auth-config path; "" runs the server open
	env     []string // KEY=value added to the process's environment
	headers []header
}

// sideBySide loads servers that run side by side in turn, for a short
// slice each, round after round, the order rotating: on a shared machine
// whose speed drifts by tens of percent within seconds, only slices this
// close together compare.
type sideBySide struct {
	rounds int
	d      time.Duration // measured load per server, binding, scenario and round
	warm   time.Duration // unmeasured load of each server before each scenario and binding
	b      bindingsBench // conns, grpcConns, maxReq; headers are each variant's
}

// loadFlags are the flags every comparing command takes: how long and
// how hard to load, and how many rounds.
type loadFlags struct {
	rounds, conns, grpcConns, maxReq *int
	d, warm                          *time.Duration
}

// addLoadFlags adds the load flags to fs, with the command's default
// rounds and measured duration, and its words for what rotates each round
// and where the warm-up goes.
func addLoadFlags(fs *flag.FlagSet, rounds int, d time.Duration, rotates, warmup string) *loadFlags {
	return &loadFlags{
		rounds:    fs.Int("rounds", rounds, "rounds; the order of "+rotates+" rotates each round"),
		d:         fs.Duration("duration", d, "measured load per server, binding, scenario and round"),
		warm:      fs.Duration("warmup", 2*time.Second, "unmeasured load "+warmup),
		conns:     fs.Int("conns", 32, "concurrent requests: HTTP connections, or gRPC calls in flight"),
		grpcConns: fs.Int("grpc-conns", 4, "HTTP/2 connections the gRPC calls share"),
		maxReq:    fs.Int("max", 2_000_000, "request cap per measurement"),
	}
}

// load returns the sideBySide the parsed flags give, or an error naming
// the command when one of them cannot be used.
func (f *loadFlags) load(cmd string) (sideBySide, error) {
	if *f.rounds < 1 || *f.conns < 1 || *f.grpcConns < 1 || *f.d <= 0 {
		return sideBySide{}, errors.New(cmd + ": --rounds, --conns, --grpc-conns and --duration must be positive")
	}
	return sideBySide{rounds: *f.rounds, d: *f.d, warm: *f.warm,
		b: bindingsBench{conns: *f.conns, grpcConns: *f.grpcConns, maxReq: *f.maxReq, warm: *f.warm, d: *f.d}}, nil
}

// variantServer is a running server of one variant.
type variantServer struct {
	variant
	t   *target
	eps map[string]endpoint
	b   *bindingsBench
	// run is the load run of the scenario and binding being measured.
	run func(time.Duration) (result, error)
}

// run starts one echo server per variant (listening on 127.0.0.1 from
// port on, two ports each: HTTP and gRPC), loads them over each binding
// with the send and stream scenarios, and returns the measurements by
// scenario, binding and variant name, one per round. The servers stop
// when it returns.
func (sb sideBySide) run(ctx context.Context, variants []variant, bindings []string, port int) (map[string]map[string]map[string][]measurement, error) {
	servers := make([]*variantServer, len(variants))
	for i, v := range variants {
		addr, grpcAddr := fmt.Sprintf("127.0.0.1:%d", port+2*i), fmt.Sprintf("127.0.0.1:%d", port+1+2*i)
		t := &target{name: v.name, bin: v.bin, addr: addr, also: []string{grpcAddr}, env: v.env,
			args: []string{"--addr", addr, "--grpc-addr", grpcAddr, "--retention", "5s", "--log-level", "warn"}}
		if v.config != "" {
			t.args = append(t.args, "--auth-config", v.config)
		}
		defer t.stop()
		if err := t.start(); err != nil {
			return nil, err
		}
		eps, err := cardEndpoints(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		for _, bd := range bindings {
			if _, ok := eps[bd]; !ok {
				return nil, fmt.Errorf("%s: the card lists no %s interface", v.name, bd)
			}
		}
		b := sb.b
		b.headers = v.headers
		servers[i] = &variantServer{variant: v, t: t, eps: eps, b: &b}
	}
	results := map[string]map[string]map[string][]measurement{} // scenario, binding, variant; one per round
	for _, key := range []string{"send", "stream"} {
		sc := scenarios[key]
		results[key] = map[string]map[string][]measurement{}
		for _, bd := range bindings {
			res := map[string][]measurement{}
			results[key][bd] = res
			for _, s := range servers {
				if err := s.prepare(ctx, bd, sc, sb.warm); err != nil {
					return nil, err
				}
			}
			for r := range sb.rounds {
				for _, s := range rotated(servers, r) {
					m, err := s.t.measureWith(func() (result, error) { return s.run(sb.d) })
					if err == nil {
						err = ctx.Err() // interrupted: the numbers are cut short
					}
					if err != nil {
						return nil, fmt.Errorf("%s over %s, %s: %w", s.name, bd, sc.name, err)
					}
					res[s.name] = append(res[s.name], m)
					fmt.Fprintf(os.Stderr, "round %d %-14s %-9s %-12s %8.0f req/s  p50 %-10v p99 %-10v cpu %v/req\n",
						r+1, sc.name, bd, s.name, m.res.rate(), m.res.pct(.5), m.res.pct(.99), m.cpuPerReq())
				}
			}
		}
	}
	return results, nil
}

// prepare checks that s answers sc over binding as the echo agent does,
// given the variant's credentials, sets s.run to its load run and warms
// it up for warm.
func (s *variantServer) prepare(ctx context.Context, binding string, sc scenario, warm time.Duration) error {
	ep := s.eps[binding]
	if err := verify(ctx, ep, sc, s.headers); err != nil {
		return fmt.Errorf("%s over %s, %s: %w", s.name, binding, sc.name, err)
	}
	run, err := s.b.driver(ctx, ep, sc)
	if err != nil {
		return err
	}
	s.run = run
	if warm > 0 {
		if _, err := s.t.measureWith(func() (result, error) { return run(warm) }); err != nil {
			return fmt.Errorf("%s over %s, warm-up: %w", s.name, binding, err)
		}
	}
	return nil
}

// variantRatios are a variant's per-round ratios to the reference
// variant's measurement of the same round, each the median over the
// rounds.
type variantRatios struct{ rate, p50, p99, cpu float64 }

func ratiosTo(ref, ms []measurement) variantRatios {
	var rate, p50, p99, cpu []float64
	for i := range min(len(ref), len(ms)) {
		o, m := ref[i], ms[i]
		rate = append(rate, m.res.rate()/o.res.rate())
		p50 = append(p50, ratio(m.res.pct(.5), o.res.pct(.5)))
		p99 = append(p99, ratio(m.res.pct(.99), o.res.pct(.99)))
		cpu = append(cpu, ratio(m.cpuPerReq(), o.cpuPerReq()))
	}
	return variantRatios{medianOf(rate), medianOf(p50), medianOf(p99), medianOf(cpu)}
}

// medianOf returns the median of xs (the upper one of an even count), 0
// for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
