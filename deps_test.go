package a2amesh

import (
	"os/exec"
	"strings"
	"testing"
)

// What a library user links by importing a public package: only what that
// package needs. The A2A client works without Hertz, NATS or Kitex, its gRPC
// binding (a2a/grpcclient) without Hertz or NATS, the ADK without Hertz,
// NATS, A2A or Kitex; the NATS server comes only with
// natsstore/embedded, and the peer SDKs the interop tests and benchmarks
// compare with (a2a-go) only with the modules of those.
func TestDependencies(t *testing.T) {
	const (
		hertz      = "github.com/cloudwego/hertz"
		nats       = "github.com/nats-io"
		natsServer = "github.com/nats-io/nats-server"
		a2a        = "github.com/a2amesh/a2amesh/a2a"
		a2ago      = "github.com/a2aproject/a2a-go"
		kitex      = "github.com/cloudwego/kitex"
	)
	everywhere := []string{natsServer, a2ago}
	forbidden := map[string][]string{
		"github.com/a2amesh/a2amesh/a2a/client": append([]string{hertz, nats, kitex}, everywhere...),
		// The credentials a client presents: what the client links.
		"github.com/a2amesh/a2amesh/a2a/credentials": append([]string{hertz, nats, kitex}, everywhere...),
		// gRPC for the client: Kitex, and still neither Hertz nor NATS.
		"github.com/a2amesh/a2amesh/a2a/grpcclient": append([]string{hertz, nats}, everywhere...),
		"github.com/a2amesh/a2amesh/adk":            append([]string{hertz, nats, a2a, kitex}, everywhere...),
		"github.com/a2amesh/a2amesh/natsstore":      append([]string{kitex}, everywhere...),
		"github.com/a2amesh/a2amesh/bridge":         everywhere,
		"github.com/a2amesh/a2amesh/gateway":        everywhere,
		"github.com/a2amesh/a2amesh/serve":          everywhere,
	}
	args := []string{"list", "-f", `{{.ImportPath}} {{join .Deps " "}}`}
	for pkg := range forbidden {
		args = append(args, pkg)
	}
	// go test puts the go command that runs it first on PATH.
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	listed := 0
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		roots, ok := forbidden[pkg]
		if !ok {
			t.Errorf("go list listed %s, which it was not asked for", pkg)
			continue
		}
		listed++
		for dep := range strings.FieldsSeq(deps) {
			for _, root := range roots {
				if dep == root || strings.HasPrefix(dep, root+"/") {
					t.Errorf("%s links %s", pkg, dep)
				}
			}
		}
	}
	if listed != len(forbidden) {
		t.Errorf("go list listed %d of the %d packages", listed, len(forbidden))
	}
}
