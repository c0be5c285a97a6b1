package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// The bindings, in the order the tables list them.
const (
	bindingJSONRPC = "JSON-RPC"
	bindingREST    = "HTTP+JSON"
	bindingGRPC    = "gRPC"
)

var bindingOrder = []string{bindingJSONRPC, bindingREST, bindingGRPC}

// cardBindings maps the card's protocolBinding values to the bindings.
var cardBindings = map[string]string{"JSONRPC": bindingJSONRPC, "HTTP+JSON": bindingREST, "GRPC": bindingGRPC}

// endpoint is where a server serves one binding of A2A 1.0, as its card
// says.
type endpoint struct {
	binding string
	addr    string // host:port
	path    string // the HTTP bindings' base path, ending in "/"
}

// bindingsCmd measures every binding of both servers: each server
// x binding x scenario on a fresh server process (so that its CPU and
// memory are that binding's alone and no earlier load's tasks weigh on
// it), the order of bindings and servers rotating each round. A server
// serves the bindings its card lists; one it does not list is reported
// as not served.
func bindingsCmd(args []string) error {
	fs := flag.NewFlagSet("bindings", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command (given --addr and --grpc-addr)")
	peer := fs.String("peer", "bin/a2agoecho", "a2a-go v2.4.0 echo server binary (given --addr, --rest-addr and --grpc-addr)")
	lf := addLoadFlags(fs, 3, 8*time.Second, "bindings and servers", "before each measurement")
	if err := fs.Parse(args); err != nil {
		return err
	}
	load, err := lf.load("bindings")
	if err != nil {
		return err
	}
	// Interrupted, the run ends its load and stops its servers as on any
	// other path.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	servers := []*target{
		{name: "a2amesh", bin: *ours, addr: "127.0.0.1:19121", also: []string{"127.0.0.1:19122"}},
		{name: "a2a-go v2.4.0", bin: *peer, addr: "127.0.0.1:19123", also: []string{"127.0.0.1:19124", "127.0.0.1:19125"}},
	}
	servers[0].args = []string{"--addr", servers[0].addr, "--grpc-addr", servers[0].also[0], "--retention", "5s", "--log-level", "warn"}
	servers[1].args = []string{"--addr", servers[1].addr, "--rest-addr", servers[1].also[0], "--grpc-addr", servers[1].also[1]}
	served := map[string]map[string]endpoint{}
	for _, s := range servers {
		eps, err := discover(ctx, s)
		if err != nil {
			return err
		}
		served[s.name] = eps
	}
	b := &load.b
	order := []string{"send", "stream"}
	results := map[string]map[string]map[string][]measurement{} // scenario, server, binding
	for r := range load.rounds {
		for _, key := range order {
			sc := scenarios[key]
			for _, bd := range rotated(bindingOrder, r) {
				for _, s := range rotated(servers, r) {
					ep, ok := served[s.name][bd]
					if !ok {
						continue
					}
					m, err := b.measure(ctx, s, ep, sc)
					if err != nil {
						return err
					}
					if results[key] == nil {
						results[key] = map[string]map[string][]measurement{}
					}
					if results[key][s.name] == nil {
						results[key][s.name] = map[string][]measurement{}
					}
					results[key][s.name][bd] = append(results[key][s.name][bd], m)
					fmt.Fprintf(os.Stderr, "round %d %-14s %-13s %-9s %8.0f req/s  p50 %-10v p99 %-10v cpu %v/req  rss %d MiB  driver cpu %v/req\n",
						r+1, sc.name, s.name, bd, m.res.rate(), m.res.pct(.5), m.res.pct(.99), m.cpuPerReq(), m.rss>>20, m.perReq(m.driverCPU))
				}
			}
		}
	}
	fmt.Printf("Each measurement: %v after %v of warm-up on a fresh server process; %d concurrent requests (HTTP: one connection each; gRPC: calls over %d connections); median of %d round(s) by throughput.\n\n",
		load.d, load.warm, load.b.conns, load.b.grpcConns, load.rounds)
	for _, key := range order {
		reportBindings(os.Stdout, scenarios[key], servers[0].name, servers[1].name, results[key])
	}
	return nil
}

// discover starts s once to read its card and returns the endpoint of
// each binding it serves.
func discover(ctx context.Context, s *target) (map[string]endpoint, error) {
	t := *s
	defer t.stop()
	if err := t.start(); err != nil {
		return nil, err
	}
	eps, err := cardEndpoints(ctx, t.addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return eps, nil
}

// cardEndpoints reads the agent card served at addr and returns the
// endpoint of each A2A 1.0 binding it lists, the first of each (the
// card's order is the server's preference).
func cardEndpoints(ctx context.Context, addr string) (map[string]endpoint, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/.well-known/agent-card.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	defer resp.Body.Close()
	var card struct {
		SupportedInterfaces []struct {
			URL             string `json:"url"`
			ProtocolBinding string `json:"protocolBinding"`
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"supportedInterfaces"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&card); err != nil {
		return nil, fmt.Errorf("agent card: %w", err)
	}
	eps := map[string]endpoint{}
	for _, in := range card.SupportedInterfaces {
		b, ok := cardBindings[in.ProtocolBinding]
		if _, seen := eps[b]; !ok || seen || !strings.HasPrefix(in.ProtocolVersion, "1.") {
			continue
		}
		ep, err := endpointOf(b, in.URL)
		if err != nil {
			return nil, fmt.Errorf("the card's %s interface: %w", in.ProtocolBinding, err)
		}
		eps[b] = ep
	}
	if _, ok := eps[bindingJSONRPC]; !ok {
		return nil, errors.New("the card lists no JSON-RPC 1.0 interface")
	}
	return eps, nil
}

// endpointOf reads an interface URL: http://host:port/path for the HTTP
// bindings, host:port (or a URL) for gRPC. The host must be a loopback
// address: the benchmark loads only servers on this machine.
func endpointOf(binding, raw string) (endpoint, error) {
	ep := endpoint{binding: binding, addr: raw, path: "/"}
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		if err != nil {
			return ep, err
		}
		if binding != bindingGRPC && u.Scheme != "http" {
			return ep, fmt.Errorf("%q: only http:// is measured", raw)
		}
		ep.addr, ep.path = u.Host, u.Path
		if !strings.HasSuffix(ep.path, "/") {
			ep.path += "/"
		}
	}
	host, _, err := net.SplitHostPort(ep.addr)
	if err != nil {
		return ep, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return ep, fmt.Errorf("%q is not on a loopback address", raw)
	}
	return ep, nil
}

// bindingsBench holds the load every measurement gets.
type bindingsBench struct {
	conns, grpcConns, maxReq int
	warm, d                  time.Duration
	// headers go with every request, the check's too.
	headers []header
}

// measure starts a fresh process of s, checks that it answers sc over ep
// as the echo agent does, warms it up and measures it.
func (b *bindingsBench) measure(ctx context.Context, s *target, ep endpoint, sc scenario) (measurement, error) {
	t := *s
	defer t.stop()
	if err := t.start(); err != nil {
		return measurement{}, err
	}
	if err := verify(ctx, ep, sc, b.headers); err != nil {
		return measurement{}, fmt.Errorf("%s over %s, %s: %w", s.name, ep.binding, sc.name, err)
	}
	run, err := b.driver(ctx, ep, sc)
	if err != nil {
		return measurement{}, err
	}
	if _, err := t.measureWith(func() (result, error) { return run(b.warm) }); err != nil {
		return measurement{}, fmt.Errorf("%s, warm-up: %w", ep.binding, err)
	}
	m, err := t.measureWith(func() (result, error) { return run(b.d) })
	if err == nil {
		err = ctx.Err() // interrupted: the numbers are cut short
	}
	if err != nil {
		return measurement{}, fmt.Errorf("%s, %s: %w", ep.binding, sc.name, err)
	}
	return m, nil
}

// driver returns the load run of sc over ep: the minimal HTTP/1.1 client
// for the JSON bindings (a stream's SSE body read to its end), grpc-go
// with prepared bytes for gRPC; every request carries b.headers.
func (b *bindingsBench) driver(ctx context.Context, ep endpoint, sc scenario) (func(time.Duration) (result, error), error) {
	switch ep.binding {
	case bindingJSONRPC:
		req := withHeaders(request(ep.addr, ep.path, sc.method, "1.0", sc.text), b.headers)
		return func(d time.Duration) (result, error) { return load(ctx, ep.addr, req, b.conns, d, b.maxReq) }, nil
	case bindingREST:
		req := withHeaders(restRequest(ep.addr, ep.path+strings.TrimPrefix(sc.rest, "/"), sc.text), b.headers)
		return func(d time.Duration) (result, error) { return load(ctx, ep.addr, req, b.conns, d, b.maxReq) }, nil
	case bindingGRPC:
		req, err := grpcSendRequest(sc.text)
		if err != nil {
			return nil, err
		}
		return func(d time.Duration) (result, error) {
			return loadGRPC(ctx, ep.addr, sc.grpc, req, b.headers, b.conns, b.grpcConns, d, b.maxReq)
		}, nil
	}
	return nil, fmt.Errorf("no load driver for %s", ep.binding)
}

// reportBindings writes one scenario's table: every server and binding,
// a2amesh's throughput and CPU per request over a2a-go's on the same
// binding, and each a2amesh binding's throughput over a2amesh JSON-RPC's.
func reportBindings(w io.Writer, sc scenario, ours, peer string, res map[string]map[string][]measurement) {
	fmt.Fprintf(w, "## %s\n\n", sc.name)
	fmt.Fprintln(w, "| server | binding | req/s | p50 | p99 | server CPU / req | RSS | × a2a-go, same binding | CPU / req ÷ a2a-go's | × a2amesh JSON-RPC | load driver CPU / req |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	med := func(server, b string) (measurement, bool) {
		ms := res[server][b]
		if len(ms) == 0 {
			return measurement{}, false
		}
		return median(ms), true
	}
	base, haveBase := med(ours, bindingJSONRPC)
	var vsPeer, vsJSONRPC []string
	for _, server := range []string{ours, peer} {
		for _, b := range bindingOrder {
			m, ok := med(server, b)
			if !ok {
				fmt.Fprintf(w, "| %s | %s | not served (not on its card) | | | | | | | | |\n", server, b)
				continue
			}
			peerX, cpuX, jsonX := "", "", ""
			if server == ours {
				if p, ok := med(peer, b); ok {
					x := m.res.rate() / p.res.rate()
					peerX = fmt.Sprintf("**%.1f×**", x)
					cpuX = fmt.Sprintf("%.3f×", ratio(m.cpuPerReq(), p.cpuPerReq()))
					vsPeer = append(vsPeer, fmt.Sprintf("%s %.1f× (%s)", b, x, verdict(x >= 10)))
				}
				if haveBase {
					x := m.res.rate() / base.res.rate()
					jsonX = fmt.Sprintf("%.2f×", x)
					if b != bindingJSONRPC {
						vsJSONRPC = append(vsJSONRPC, fmt.Sprintf("%s %.2f× (%s)", b, x, verdict(x >= 0.8 && x <= 1.2)))
					}
				}
			}
			fmt.Fprintf(w, "| %s | %s | %.0f | %v | %v | %v | %d MiB | %s | %s | %s | %v |\n", server, b, m.res.rate(),
				m.res.pct(.5).Round(time.Microsecond), m.res.pct(.99).Round(time.Microsecond),
				m.cpuPerReq().Round(100*time.Nanosecond), m.rss>>20, peerX, cpuX, jsonX, m.perReq(m.driverCPU).Round(100*time.Nanosecond))
		}
	}
	fmt.Fprintln(w)
	if len(vsPeer) > 0 {
		fmt.Fprintf(w, "Target, every a2amesh binding ≥ 10× a2a-go's: %s.\n", strings.Join(vsPeer, ", "))
	}
	if len(vsJSONRPC) > 0 {
		fmt.Fprintf(w, "Target, gRPC and HTTP+JSON within 0.8-1.2× of a2amesh JSON-RPC: %s.\n", strings.Join(vsJSONRPC, ", "))
	}
	fmt.Fprintln(w)
}

func verdict(met bool) string {
	if met {
		return "met"
	}
	return "missed"
}
