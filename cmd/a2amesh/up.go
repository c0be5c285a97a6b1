package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/gateway/console"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// up runs the mesh: an embedded NATS server (unless --nats names one),
// every service as a process of its own, and the gateway, until ctx ends.
// A process that exits meanwhile is started again (restartPolicy); one
// that keeps exiting stops the mesh, and up fails naming it.
func up(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := cli.NewFlags("up", "A2AMESH")
	dataDir := f.String("data-dir", ".a2amesh", "directory for NATS data and checkpoints")
	natsURL := f.StringEnv("nats", "NATS_URL", "", "NATS server to use (empty: run one in-process)")
	natsPort := f.Int("nats-port", 4222, "port of the in-process NATS server (-1: a port the kernel picks)")
	basePort := f.Int("base-port", defaultBasePort(), "the gateway's port; the agents take the eight after it (0: ports the kernel picks)")
	logLevel := f.String("log-level", "warn", "log level of the services: debug, info, warn or error")
	state := f.String("state", "memory", "where the services keep their tasks: memory (each process) or nats (JetStream, durable)")
	topology := f.String("topology", "", "mesh topology for the gateway (empty: deploy/topology.yaml, on the agents' addresses)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if *natsURL != "" && f.Given("nats-port") {
		return errors.New("--nats-port: applies only to the in-process NATS server, which --nats replaces; drop one")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil)) // restarts, at warn
	dir, err := filepath.Abs(*dataDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	addrs, err := meshAddrs(*basePort)
	if err != nil {
		return err
	}

	url := *natsURL
	if url == "" {
		srv, err := embedded.Start(embedded.Config{Dir: filepath.Join(dir, "nats"), Port: *natsPort})
		if err != nil {
			return err
		}
		defer srv.Close()
		url = srv.URL()
	}

	sup := newSupervisor(ctx, restartPolicy{}, log, stdout, stderr)
	defer sup.stop()
	// No load balancer to wait for on a stop: drain at once.
	common := []string{"--nats", url, "--log-level", *logLevel, "--state", *state, "--drain-delay", "0"}
	if *state != "nats" { // on NATS, the checkpoints are there too
		common = append(common, "--data-dir", dir)
	}
	fmt.Fprintf(stdout, "a2amesh: NATS at %s, data in %s\n", url, dir)
	pids := map[string]int{}
	for _, def := range meshServices() {
		args := append([]string{"serve", def.name, "--addr", addrs[def.name]}, common...)
		args = append(args, peerFlags(def, addrs)...)
		if pids[def.name], err = sup.start(def.name, exe, args...); err != nil {
			return err
		}
	}
	gwArgs := append([]string{"gateway", "--addr", addrs["gateway"]}, common...)
	switch {
	case *topology != "":
		gwArgs = append(gwArgs, "--topology", *topology)
	case *basePort != defaultBasePort():
		path, err := writeTopology(dir, addrs)
		if err != nil {
			return err
		}
		gwArgs = append(gwArgs, "--topology", path)
	}
	if pids["gateway"], err = sup.start("gateway", exe, gwArgs...); err != nil {
		return err
	}

	// Wait until every agent serves its card.
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for name, addr := range addrs {
		if err := waitCard(readyCtx, "http://"+addr+"/", sup.Failed()); err != nil {
			return fmt.Errorf("%s did not come up: %w", name, err)
		}
	}
	gw := "http://" + addrs["gateway"] + "/"
	fmt.Fprintln(stdout, "a2amesh: the mesh is up")
	for _, def := range meshServices() {
		fmt.Fprintf(stdout, "  %-10s %s  pid %-7d %s\n", def.name, "http://"+addrs[def.name]+"/", pids[def.name], def.summary)
	}
	fmt.Fprintf(stdout, "  %-10s %s  pid %-7d the whole mesh as one A2A agent\n", "gateway", gw, pids["gateway"])
	fmt.Fprintf(stdout, "  %-10s %s\n", "console", strings.TrimSuffix(gw, "/")+console.Path)
	fmt.Fprintln(stdout, "Open: every service takes any caller, without authentication, on 127.0.0.1 only (docs/security.md turns it on).")
	cmd := "go run ./cmd/a2amesh"
	askCmd := cmd + " ask"
	if *basePort != defaultBasePort() {
		askCmd += " --gateway " + gw
	}
	fmt.Fprintf(stdout, `Try:
  %[1]s "What's the weather in Beijing?"
  %[1]s "Calculate (17 + 25) * 3"
  %[1]s "Research checkpoints and write a report"
  %[2]s watch --nats %[3]s
A process that stops is restarted; Ctrl-C stops everything.
`, askCmd, cmd, url)
	select {
	case <-ctx.Done():
		fmt.Fprintln(stdout, "\na2amesh: stopping")
		return nil
	case err := <-sup.Failed():
		return fmt.Errorf("%w; stopped the mesh", err)
	}
}

// defaultBasePort is the gateway's default port, which the agents' default
// ports follow.
func defaultBasePort() int {
	_, port, _ := net.SplitHostPort(gateway.DefaultAddr)
	n, _ := strconv.Atoi(port)
	return n
}

// meshAddrs returns where each process of the mesh listens, by name (the
// services' and "gateway"): their default addresses moved by base's
// distance from the default base port, or ports the kernel picks for
// base 0.
func meshAddrs(base int) (map[string]string, error) {
	if base < 0 || base > 65535-len(meshServices()) {
		return nil, fmt.Errorf("--base-port %d: want 0 (ports the kernel picks) or a port the eight after which are ports too", base)
	}
	defaults := defaultAddrs()
	addrs := map[string]string{}
	if base == 0 {
		// All held open until all are picked, so that no two are the same.
		var lns []net.Listener
		defer func() {
			for _, ln := range lns {
				ln.Close()
			}
		}()
		for name, addr := range defaults {
			host, _, _ := net.SplitHostPort(addr)
			ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				return nil, fmt.Errorf("pick a port for %s: %w", name, err)
			}
			lns = append(lns, ln)
			addrs[name] = ln.Addr().String()
		}
		return addrs, nil
	}
	for name, addr := range defaults {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, err
		}
		addrs[name] = net.JoinHostPort(host, strconv.Itoa(base+n-defaultBasePort()))
	}
	return addrs, nil
}

func defaultAddrs() map[string]string {
	out := map[string]string{"gateway": gateway.DefaultAddr}
	for _, def := range meshServices() {
		out[def.name] = def.addr
	}
	return out
}

// moved maps each mesh process's default URL to its URL at addrs.
func moved(addrs map[string]string) map[string]string {
	out := map[string]string{}
	for name, addr := range defaultAddrs() {
		out["http://"+addr+"/"] = "http://" + addrs[name] + "/"
	}
	return out
}

// peerFlags returns the flags that point def's service at the agents it
// calls where they listen now: every flag of def whose default is the
// default URL of another process of the mesh (a flag set in the
// environment is left as it is).
func peerFlags(def service, addrs map[string]string) []string {
	// The prefix serveService gives the flags' environment variables, so
	// that a default taken from the environment shows here too.
	f := cli.NewFlags(def.name, envPrefix(def.name))
	def.setup(f)
	urls := moved(addrs)
	var out []string
	f.VisitAll(func(fl *flag.Flag) {
		if u, ok := urls[fl.DefValue]; ok && u != fl.DefValue {
			out = append(out, "--"+fl.Name, u)
		}
	})
	return out
}

// writeTopology writes the default topology with the agents at addrs to
// dir and returns its path.
func writeTopology(dir string, addrs map[string]string) (string, error) {
	t, err := gateway.ParseTopology(deploy.Topology)
	if err != nil {
		return "", err
	}
	urls := moved(addrs)
	for key, u := range t.Agents {
		if m, ok := urls[u]; ok {
			t.Agents[key] = m
		}
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "topology.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("write the mesh's topology: %w", err)
	}
	return path, nil
}

// waitCard polls url's agent card until it answers, ctx ends or a process
// keeps failing.
func waitCard(ctx context.Context, url string, failed <-chan error) error {
	card := strings.TrimSuffix(url, "/") + "/.well-known/agent-card.json"
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, card, nil)
		if err != nil {
			return err
		}
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case err := <-failed:
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
