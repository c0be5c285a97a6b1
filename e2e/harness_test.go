// Package e2e tests the mesh across processes: every agent service and the
// gateway run as processes of the a2amesh binary, on 127.0.0.1, with the
// offline model and a NATS server; the tests talk to them as A2A clients
// and as ADK callers.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
)

// binary is the a2amesh command the tests run, built once.
var binary string

// Bounds on the harness's waits, against hanging rather than timing
// anything: building the command (compiling from a cold cache is the
// slow case), a process's "ready at" line, and its exit after SIGTERM
// (then SIGKILL) and after SIGKILL.
const (
	buildBound = 5 * time.Minute
	readyBound = 90 * time.Second
	stopBound  = 15 * time.Second
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "a2amesh-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "a2amesh")
	ctx, cancel := context.WithTimeout(context.Background(), buildBound)
	build := exec.CommandContext(ctx, "go", "build", "-o", binary, "github.com/a2amesh/a2amesh/cmd/a2amesh")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	build.WaitDelay = 5 * time.Second
	err = build.Run()
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building a2amesh (within %s): %v\n", buildBound, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(a2atest.LeakOptions()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// process is a running a2amesh process.
type process struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	logs strings.Builder
}

func (p *process) log(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.logs.WriteString(line + "\n")
}

// stop ends the process with SIGTERM, or kill with SIGKILL; a process
// that outlives SIGTERM by stopBound is killed. It fails the test if the
// process (or its output) is not done stopBound after SIGKILL either.
func (p *process) stop(kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
		return
	case <-time.After(stopBound):
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(stopBound):
		p.t.Errorf("%s (pid %d) not done %s after SIGKILL: its output is still open", p.name, p.cmd.Process.Pid, stopBound)
	}
}

// start runs `a2amesh args...` and waits for its "<name> ready at <url>"
// line; it returns the URL. The process stops when the test ends, and its
// logs are shown if the test failed.
func start(t *testing.T, name string, args ...string) (*process, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=", "OPENAI_API_KEY=")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{t: t, name: name, cmd: cmd, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			p.log(line)
			if _, url, ok := strings.Cut(line, " ready at "); ok {
				select {
				case ready <- url:
				default:
				}
			}
		}
	}()
	go func() {
		defer readers.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.log(sc.Text())
		}
	}()
	go func() {
		readers.Wait()
		_ = cmd.Wait() // the exit status shows in the logs' end
		close(p.done)
	}()
	t.Cleanup(func() {
		p.stop(false)
		if t.Failed() {
			p.mu.Lock()
			t.Logf("--- %s logs:\n%s", name, p.logs.String())
			p.mu.Unlock()
		}
	})
	select {
	case url := <-ready:
		return p, url
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		t.Fatalf("%s exited before it was ready:\n%s", name, p.logs.String())
	case <-time.After(readyBound):
		t.Fatalf("%s not ready after %s", name, readyBound)
	}
	return nil, ""
}

// freeAddr returns a 127.0.0.1 address nothing listens on, for a process
// that must come back on the same address after a restart.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// mesh is a set of service processes sharing a NATS server and a data
// directory, whose hops (the gateway's calls to the agents, the agents'
// calls to each other, the test's calls to the gateway) use one binding.
type mesh struct {
	t    *testing.T
	hops string // the binding of every hop, as cards name it
	// grpc is the gRPC address of each process listening on a fixed
	// address, so that a process restarted there serves gRPC where its
	// callers' cards say.
	grpc map[string]string
	nats string
	dir  string
	// e is the NATS server, nil while stopped.
	e    *embedded.Server
	port int
}

// hopBindings are the bindings the mesh scenarios run over: every hop on
// JSON-RPC, then every hop on gRPC.
var hopBindings = []string{a2a.BindingJSONRPC, a2a.BindingGRPC}

// overEveryBinding runs a mesh scenario once per hop binding.
func overEveryBinding(t *testing.T, scenario func(t *testing.T, m *mesh)) {
	for _, b := range hopBindings {
		t.Run(b, func(t *testing.T) { scenario(t, newMeshOver(t, b)) })
	}
}

// newMesh is a mesh whose hops are on JSON-RPC.
func newMesh(t *testing.T) *mesh { return newMeshOver(t, a2a.BindingJSONRPC) }

func newMeshOver(t *testing.T, hops string) *mesh {
	t.Helper()
	m := &mesh{t: t, hops: hops, grpc: map[string]string{}, dir: t.TempDir(), port: -1}
	m.startNATS()
	m.nats = m.e.URL()
	m.port = m.e.Port()
	t.Cleanup(m.stopNATS)
	return m
}

// startNATS starts the mesh's NATS server, on the port and data it had
// before it was stopped.
func (m *mesh) startNATS() {
	m.t.Helper()
	e, err := embedded.Start(embedded.Config{Dir: filepath.Join(m.dir, "nats"), Port: m.port})
	if err != nil {
		m.t.Fatal(err)
	}
	m.e = e
}

func (m *mesh) stopNATS() {
	if m.e != nil {
		m.e.Close()
		m.e = nil
	}
}

// args are the flags of a process of the mesh: task events published to
// the mesh's NATS, the state in memory with checkpoints in the mesh's
// directory, unless extra puts the state on NATS (which keeps the
// checkpoints there too, and refuses --data-dir).
func (m *mesh) args(addr string, extra ...string) []string {
	args := []string{"--addr", addr, "--nats", m.nats, "--log-level", "warn", "--wait", "60s"}
	if !slices.Contains(extra, "--state") {
		args = append(args, "--state", "memory", "--data-dir", m.dir)
	}
	if m.hops == a2a.BindingGRPC {
		g := "127.0.0.1:0"
		if !strings.HasSuffix(addr, ":0") {
			if m.grpc[addr] == "" {
				m.grpc[addr] = freeAddr(m.t)
			}
			g = m.grpc[addr]
		}
		args = append(args, "--grpc-addr", g, "--hop-bindings", a2a.BindingGRPC)
	}
	return append(args, extra...)
}

// service starts `a2amesh serve name`.
func (m *mesh) service(name string, extra ...string) (*process, string) {
	return m.serviceAt(name, "127.0.0.1:0", extra...)
}

func (m *mesh) serviceAt(name, addr string, extra ...string) (*process, string) {
	m.t.Helper()
	return start(m.t, name, append([]string{"serve", name}, m.args(addr, extra...)...)...)
}

// gateway starts a gateway over topology (YAML).
func (m *mesh) gateway(topology string) (*process, string) {
	return m.gatewayAt("127.0.0.1:0", topology)
}

func (m *mesh) gatewayAt(addr, topology string) (*process, string) {
	m.t.Helper()
	path := filepath.Join(m.dir, fmt.Sprintf("topology-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(topology), 0o644); err != nil {
		m.t.Fatal(err)
	}
	return start(m.t, "gateway", append([]string{"gateway"}, m.args(addr, "--topology", path)...)...)
}

// remote is the gateway as an ADK agent, for a caller-side Runner, called
// over the mesh's hop binding.
func (m *mesh) remote(url string) *bridge.RemoteAgent {
	m.t.Helper()
	bindings, err := gateway.ParseBindings(m.hops)
	if err != nil {
		m.t.Fatal(err)
	}
	r, err := bridge.NewRemoteAgent(context.Background(), bridge.RemoteConfig{URL: url, Bindings: bindings})
	if err != nil {
		m.t.Fatal(err)
	}
	if got := r.Client().Binding(); got != m.hops {
		m.t.Fatalf("the caller reaches %s over %s, want %s", url, got, m.hops)
	}
	m.t.Cleanup(func() { r.Client().Close() })
	return r
}

// transfers lists "from->to" for each transfer of evs.
func transfers(evs []*adk.AgentEvent) []string {
	var out []string
	for _, ev := range evs {
		if ev.Action != nil && ev.Action.TransferToAgent != nil {
			out = append(out, ev.AgentName+"->"+ev.Action.TransferToAgent.DestAgentName)
		}
	}
	return out
}
