package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/services/catalog"
)

// up runs the mesh: an embedded NATS server (unless --nats names one),
// every service as a process of its own, and the gateway, until ctx ends
// or a process dies.
func up(ctx context.Context, args []string) error {
	f := cli.NewFlags("up", "A2AMESH")
	dataDir := f.String("data-dir", ".a2amesh", "directory for NATS data and checkpoints")
	natsURL := f.StringEnv("nats", "NATS_URL", "", "NATS server to use (empty: run one in-process)")
	natsPort := f.Int("nats-port", 4222, "port of the in-process NATS server")
	logLevel := f.String("log-level", "warn", "log level of the services: debug, info, warn or error")
	state := f.String("state", "memory", "where the services keep their tasks: memory (each process) or nats (JetStream, durable)")
	topology := f.String("topology", "", "mesh topology for the gateway (empty: deploy/topology.yaml)")
	if err := f.Parse(args); err != nil {
		return err
	}
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

	url := *natsURL
	if url == "" {
		srv, err := natsstore.StartEmbedded(natsstore.EmbeddedConfig{Dir: filepath.Join(dir, "nats"), Port: *natsPort})
		if err != nil {
			return err
		}
		defer srv.Close()
		url = srv.URL()
	}

	m := &mesh{exited: make(chan string, 16)}
	defer m.stop()
	common := []string{"--nats", url, "--data-dir", dir, "--log-level", *logLevel, "--state", *state}
	fmt.Printf("a2amesh: NATS at %s, data in %s\n", url, dir)
	for _, def := range catalog.All() {
		if err := m.start(ctx, def.Name, exe, append([]string{"serve", def.Name}, common...)); err != nil {
			return err
		}
	}
	gwArgs := append([]string{"gateway"}, common...)
	if *topology != "" {
		gwArgs = append(gwArgs, "--topology", *topology)
	}
	if err := m.start(ctx, "gateway", exe, gwArgs); err != nil {
		return err
	}

	// Wait until every agent serves its card.
	targets := map[string]string{"gateway": "http://" + gateway.DefaultAddr + "/"}
	for _, def := range catalog.All() {
		targets[def.Name] = "http://" + def.Addr + "/"
	}
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, name := range append(serviceNames(), "gateway") {
		if err := waitCard(readyCtx, targets[name], m.exited); err != nil {
			return fmt.Errorf("%s did not come up: %w", name, err)
		}
	}
	fmt.Println("a2amesh: the mesh is up")
	for _, def := range catalog.All() {
		fmt.Printf("  %-10s %s  %s\n", def.Name, targets[def.Name], def.Summary)
	}
	fmt.Printf("  %-10s %s  the whole mesh as one A2A agent\n", "gateway", targets["gateway"])
	fmt.Print(`Try:
  go run ./cmd/a2amesh ask "What's the weather in Beijing?"
  go run ./cmd/a2amesh ask "Calculate (17 + 25) * 3"
  go run ./cmd/a2amesh ask "Research checkpoints and write a report"
  go run ./cmd/a2amesh watch
Ctrl-C stops everything.
`)
	select {
	case <-ctx.Done():
		fmt.Println("\na2amesh: stopping")
		return nil
	case name := <-m.exited:
		return fmt.Errorf("%s stopped; stopping the mesh", name)
	}
}

// mesh is the processes up started.
type mesh struct {
	mu     sync.Mutex
	procs  []*proc
	exited chan string
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
}

func (m *mesh) start(ctx context.Context, name, exe string, args []string) error {
	cmd := exec.Command(exe, args...)
	stdout, stderr := prefixed(name, os.Stdout), prefixed(name, os.Stderr)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = childAttrs()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // its output and status were its logs'
		stdout.Close()
		stderr.Close()
		close(p.done)
		select {
		case m.exited <- name:
		default:
		}
	}()
	m.mu.Lock()
	m.procs = append(m.procs, p)
	m.mu.Unlock()
	return ctx.Err()
}

// stop ends the processes, the last started first: SIGTERM, then after
// 10 s SIGKILL.
func (m *mesh) stop() {
	m.mu.Lock()
	procs := m.procs
	m.procs = nil
	m.mu.Unlock()
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// prefixed writes each line of a child's output with its name in front.
func prefixed(name string, w io.Writer) io.WriteCloser {
	r, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintf(w, "%-10s | %s\n", name, sc.Text())
		}
		_, _ = io.Copy(io.Discard, r) // a line too long: drop the rest rather than block the child
	}()
	return pw
}

// waitCard polls url's agent card until it answers, ctx ends or a process
// exits.
func waitCard(ctx context.Context, url string, exited <-chan string) error {
	card := strings.TrimSuffix(url, "/") + "/.well-known/agent-card.json"
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, card, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case name := <-exited:
			return errors.New(name + " exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
}
