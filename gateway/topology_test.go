package gateway

import (
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// TestMain fails the run if a test leaves a goroutine behind (the build
// tests serve agents on Hertz, whose own goroutines it knows).
func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }

func TestDefaultTopology(t *testing.T) {
	top, err := ParseTopology(deploy.Topology)
	if err != nil {
		t.Fatal(err)
	}
	if top.Gateway.Name != "Mesh" || top.Entry.Agent != "router" || len(top.Agents) != 8 {
		t.Fatalf("default topology: %+v", top)
	}
	var subs []string
	for _, n := range top.Entry.SubAgents {
		subs = append(subs, n.Agent)
	}
	if got := strings.Join(subs, ","); got != "weather,chat,math,research,writer,supervisor,planner" {
		t.Errorf("the router's sub-agents are %s", got)
	}
}

func TestParseTopology(t *testing.T) {
	const agents = "agents: {a: 'http://127.0.0.1:1/', b: 'http://127.0.0.1:2/'}\n"
	tests := []struct {
		name, yaml string
		err        string // a substring of the error; empty: valid
	}{
		{"transfer tree", "version: 1\n" + agents + "entry: {agent: a, subAgents: [{agent: b, disallowTransferToParent: true}]}", ""},
		{"json", `{"version":1,"agents":{"a":"http://127.0.0.1:1/"},"entry":{"agent":"a"}}`, ""},
		{"every kind", "version: 1\n" + agents + `entry:
  sequential:
    name: S
    steps:
      - parallel: {name: P, steps: [{agent: a}, {agent: b, alias: B2}]}
      - loop: {name: L, maxIterations: 3, steps: [{agent: a}]}
      - supervisor: {supervisor: {agent: a}, subAgents: [{agent: b}]}
      - planExecute: {name: PE, executor: {agent: b}}
`, ""},
		{"version", "version: 2\n" + agents + "entry: {agent: a}", "version 2"},
		{"no version", agents + "entry: {agent: a}", "version 0"},
		{"unknown field", "version: 1\n" + agents + "entry: {agent: a, children: []}", "unknown field"},
		{"no entry", "version: 1\n" + agents, "no entry"},
		{"empty node", "version: 1\n" + agents + "entry: {}", "entry: a node is exactly one of"},
		{"two kinds", "version: 1\n" + agents + "entry: {agent: a, sequential: {name: S, steps: [{agent: b}]}}", "exactly one of"},
		{"unknown agent", "version: 1\n" + agents + "entry: {agent: a, subAgents: [{agent: c}]}", `entry.subAgents[0]: agent "c" is not among the agents (a, b)`},
		{"workflow without steps", "version: 1\n" + agents + "entry: {sequential: {name: S}}", "needs a name and steps"},
		{"workflow without name", "version: 1\n" + agents + "entry: {parallel: {steps: [{agent: a}]}}", "needs a name and steps"},
		{"maxIterations outside a loop", "version: 1\n" + agents + "entry: {sequential: {name: S, maxIterations: 2, steps: [{agent: a}]}}", "maxIterations belongs to loops"},
		{"alias on a workflow", "version: 1\n" + agents + "entry: {alias: X, sequential: {name: S, steps: [{agent: a}]}}", "belong to agent nodes"},
		{"supervisor without sub-agents", "version: 1\n" + agents + "entry: {supervisor: {supervisor: {agent: a}}}", "needs subAgents"},
		{"supervisor without supervisor", "version: 1\n" + agents + "entry: {supervisor: {subAgents: [{agent: a}]}}", "entry.supervisor: an empty node"},
		{"planExecute without name", "version: 1\n" + agents + "entry: {planExecute: {executor: {agent: a}}}", "planExecute needs a name"},
		{"deep error names its place", "version: 1\n" + agents + "entry: {sequential: {name: S, steps: [{agent: a}, {loop: {name: L, steps: [{}]}}]}}", "entry.steps[1].steps[0]: a node is exactly one of"},
		{"bindings", "version: 1\n" + agents + "bindings: [grpc, http+json, JSONRPC]\nentry: {agent: a, subAgents: [{agent: b, binding: HTTP+JSON}]}", ""},
		{"unknown binding", "version: 1\n" + agents + "bindings: [smoke]\nentry: {agent: a}", `bindings: binding "smoke"`},
		{"unknown node binding", "version: 1\n" + agents + "entry: {agent: a, binding: carrier-pigeon}", `entry: binding: binding "carrier-pigeon"`},
		{"binding on a workflow", "version: 1\n" + agents + "entry: {binding: GRPC, sequential: {name: S, steps: [{agent: a}]}}", "belong to agent nodes"},
		{"not yaml", "version: [", "yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTopology([]byte(tt.yaml))
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("error %v", err)
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("error %v, want one containing %q", err, tt.err)
			}
		})
	}
}
