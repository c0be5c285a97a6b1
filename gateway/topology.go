// Package gateway composes a mesh of A2A agents into one agent: a
// topology file names the agents by card URL and arranges them (transfer
// trees, sequential, parallel, loop, supervisor, plan-execute); the
// gateway discovers their cards, builds a Runner over RemoteAgents and
// serves the composition as one A2A agent. docs/gateway.md documents the
// file.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model"
	"github.com/a2amesh/a2amesh/adk/prebuilt/planexecute"
	"github.com/a2amesh/a2amesh/adk/prebuilt/supervisor"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/userfile"
	"github.com/a2amesh/a2amesh/serve"
)

// Topology is a mesh topology file.
type Topology struct {
	// Version is 1.
	Version int `json:"version"`
	// Gateway names the composition as the gateway serves it (New: "Mesh"
	// when empty).
	Gateway struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"gateway"`
	// Agents are the remote agents by key: their base URLs.
	Agents map[string]string `json:"agents"`
	// Bindings are the protocol bindings the gateway calls the agents
	// over, the preferred first, among those each agent's card lists:
	// "JSONRPC", "HTTP+JSON", "GRPC" (case does not matter). Empty: the
	// gateway's Config.Remote.Bindings, by default JSON-RPC, then
	// HTTP+JSON. A node's Binding overrides it for that agent.
	Bindings []string `json:"bindings,omitempty"`
	// Imports are other teams' agents by key, usable in nodes like
	// Agents' (see Import), on the hosts Federation allows.
	Imports    map[string]*Import `json:"imports,omitempty"`
	Federation Federation         `json:"federation,omitzero"`
	// Credentials say how the gateway authenticates to agents and
	// imports, by key: on behalf of its caller or as itself (see
	// Credential). One without is called with Config.Remote.Credentials.
	Credentials map[string]*Credential `json:"credentials,omitempty"`
	// Entry is the composition.
	Entry *Node `json:"entry"`
}

// Node is one agent of the composition: exactly one of its kinds is set.
type Node struct {
	// Agent is a key of Topology.Agents: that remote agent, with
	// SubAgents it may transfer to (a transfer tree).
	Agent                    string  `json:"agent,omitempty"`
	SubAgents                []*Node `json:"subAgents,omitempty"`
	DisallowTransferToParent bool    `json:"disallowTransferToParent,omitempty"`
	// Alias renames the agent in this composition.
	Alias string `json:"alias,omitempty"`
	// Binding, on an agent node, is the only protocol binding the agent
	// is called over here ("GRPC", ...); its card must list it.
	Binding string `json:"binding,omitempty"`

	Sequential  *Workflow    `json:"sequential,omitempty"`
	Parallel    *Workflow    `json:"parallel,omitempty"`
	Loop        *Workflow    `json:"loop,omitempty"`
	Supervisor  *Supervision `json:"supervisor,omitempty"`
	PlanExecute *PlanExecute `json:"planExecute,omitempty"`
}

// Workflow is a sequential, parallel or loop composition.
type Workflow struct {
	Name        string  `json:"name"`
	Description string  `json:"description,omitempty"`
	Steps       []*Node `json:"steps"`
	// MaxIterations caps a loop's passes (0: no cap).
	MaxIterations int `json:"maxIterations,omitempty"`
}

// Supervision is a supervisor over sub-agents that report back to it.
type Supervision struct {
	Supervisor *Node   `json:"supervisor"`
	SubAgents  []*Node `json:"subAgents"`
}

// PlanExecute is plan-execute-replan with the planner and replanner in the
// gateway (on its model) and the executor any node.
type PlanExecute struct {
	Name          string `json:"name"`
	Description   string `json:"description,omitempty"`
	Executor      *Node  `json:"executor"`
	MaxIterations int    `json:"maxIterations,omitempty"`
}

// LoadTopology reads and checks a topology file.
func LoadTopology(path string) (*Topology, error) {
	b, err := userfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	t, err := ParseTopology(b)
	if err != nil {
		return nil, fmt.Errorf("gateway: %s: %w", path, err)
	}
	return t, nil
}

// ParseTopology decodes and checks a topology (YAML or JSON); unknown
// fields are errors.
func ParseTopology(b []byte) (*Topology, error) {
	var t Topology
	if err := yaml.UnmarshalStrict(b, &t); err != nil {
		return nil, err
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	return &t, nil
}

// Check reports what makes t unusable: a version other than 1, no entry,
// a node that is not exactly one kind, an agent key that Agents does not
// name, a credential that cannot be used as written (it does not read
// secrets: Build does). ParseTopology and Build call it, so a Topology built in Go is
// checked as a file is.
func (t *Topology) Check() error {
	if t.Version != 1 {
		return fmt.Errorf("version %d: this gateway reads version 1", t.Version)
	}
	if t.Entry == nil {
		return errors.New("no entry")
	}
	if _, err := ParseBindings(t.Bindings...); err != nil {
		return fmt.Errorf("bindings: %w", err)
	}
	for _, key := range slices.Sorted(maps.Keys(t.Imports)) {
		if err := t.checkImport(key, t.Imports[key]); err != nil {
			return err
		}
	}
	if err := t.checkCredentials(); err != nil {
		return err
	}
	return t.check(t.Entry, "entry")
}

func (t *Topology) check(n *Node, where string) error {
	if n == nil {
		return fmt.Errorf("%s: an empty node", where)
	}
	kinds := 0
	for _, set := range []bool{n.Agent != "", n.Sequential != nil, n.Parallel != nil, n.Loop != nil, n.Supervisor != nil, n.PlanExecute != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("%s: a node is exactly one of agent, sequential, parallel, loop, supervisor, planExecute", where)
	}
	if n.Agent == "" && (len(n.SubAgents) > 0 || n.Alias != "" || n.DisallowTransferToParent || n.Binding != "") {
		return fmt.Errorf("%s: subAgents, alias, binding and disallowTransferToParent belong to agent nodes", where)
	}
	if n.Binding != "" {
		if _, err := ParseBindings(n.Binding); err != nil {
			return fmt.Errorf("%s: binding: %w", where, err)
		}
	}
	checkAll := func(nodes []*Node, what string) error {
		for i, c := range nodes {
			if err := t.check(c, fmt.Sprintf("%s.%s[%d]", where, what, i)); err != nil {
				return err
			}
		}
		return nil
	}
	switch {
	case n.Agent != "":
		if _, ok := t.Agents[n.Agent]; !ok && t.Imports[n.Agent] == nil {
			return fmt.Errorf("%s: agent %q is not among the agents (%s) or imports", where, n.Agent, strings.Join(keys(t.Agents), ", "))
		}
		return checkAll(n.SubAgents, "subAgents")
	case n.Sequential != nil || n.Parallel != nil || n.Loop != nil:
		w := firstWorkflow(n.Sequential, n.Parallel, n.Loop)
		if w.Name == "" || len(w.Steps) == 0 {
			return fmt.Errorf("%s: a workflow needs a name and steps", where)
		}
		if w.MaxIterations != 0 && n.Loop == nil {
			return fmt.Errorf("%s: maxIterations belongs to loops", where)
		}
		return checkAll(w.Steps, "steps")
	case n.Supervisor != nil:
		if err := t.check(n.Supervisor.Supervisor, where+".supervisor"); err != nil {
			return err
		}
		if len(n.Supervisor.SubAgents) == 0 {
			return fmt.Errorf("%s: a supervisor needs subAgents", where)
		}
		return checkAll(n.Supervisor.SubAgents, "subAgents")
	default:
		if n.PlanExecute.Name == "" {
			return fmt.Errorf("%s: planExecute needs a name", where)
		}
		return t.check(n.PlanExecute.Executor, where+".executor")
	}
}

func firstWorkflow(ws ...*Workflow) *Workflow {
	for _, w := range ws {
		if w != nil {
			return w
		}
	}
	return nil
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Config configures a gateway: how Build composes it, and how New serves
// the composition.
type Config struct {
	// Model runs what the gateway itself thinks with (plan-execute's
	// planner and replanner); Build needs one, New defaults it to the
	// offline model.
	Model model.ChatModel
	// Remote configures the RemoteAgents; its URL is set per agent. A
	// Wait makes Build wait for agents that are still starting (New
	// answers /readyz meanwhile, naming them).
	Remote bridge.RemoteConfig
	// Serve configures the server New makes; Build ignores it.
	Serve serve.Config
}

// Build discovers the agents' cards, all at once, and composes the entry.
// Every use of an agent key is an agent of its own (an agent has one
// parent).
func (t *Topology) Build(ctx context.Context, cfg Config) (adk.Agent, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	return t.build(ctx, cfg, newDiscovery(t))
}

// build is Build, noting in d which agents are still missing.
func (t *Topology) build(ctx context.Context, cfg Config, d *discovery) (adk.Agent, error) {
	b := &builder{t: t, cfg: cfg}
	var err error
	if b.creds, err = t.buildCredentials(); err != nil {
		return nil, err
	}
	if b.agents, err = d.find(ctx, agentNodes(t.Entry, nil), cfg.Remote.Wait, b.remote); err != nil {
		return nil, err
	}
	return b.node(ctx, t.Entry)
}

type builder struct {
	t   *Topology
	cfg Config
	// agents are the agent nodes' RemoteAgents, discovered before
	// composing.
	agents map[*Node]*bridge.RemoteAgent
	// creds are the credentials of the agents the topology gives some,
	// by agent key.
	creds map[string]client.Credentials
}

// log is where the builder says what it does: the server's logger.
func (b *builder) log() *slog.Logger {
	if b.cfg.Serve.Logger != nil {
		return b.cfg.Serve.Logger
	}
	return slog.Default()
}

// remote configures the RemoteAgent of agent node n.
func (b *builder) remote(n *Node) bridge.RemoteConfig {
	rc := b.cfg.Remote
	rc.URL, rc.Name = b.t.Agents[n.Agent], n.Alias
	if imp := b.t.Imports[n.Agent]; imp != nil {
		rc = configureImport(rc, n.Agent, imp, b.log())
	}
	if c, ok := b.creds[n.Agent]; ok {
		rc.Credentials = c
	}
	names := b.t.Bindings
	if n.Binding != "" {
		names = []string{n.Binding}
	}
	if len(names) > 0 {
		// Check has parsed them.
		rc.Bindings, _ = ParseBindings(names...)
	}
	return rc
}

func (b *builder) node(ctx context.Context, n *Node) (adk.Agent, error) {
	nodes := func(ns []*Node) ([]adk.Agent, error) {
		out := make([]adk.Agent, len(ns))
		for i, c := range ns {
			a, err := b.node(ctx, c)
			if err != nil {
				return nil, err
			}
			out[i] = a
		}
		return out, nil
	}
	switch {
	case n.Agent != "":
		var out adk.Agent = b.agents[n]
		var err error
		if n.DisallowTransferToParent {
			if out, err = adk.AgentWithConfig(ctx, out, adk.AgentConfig{DisallowTransferToParent: true}); err != nil {
				return nil, err
			}
		}
		if len(n.SubAgents) == 0 {
			return out, nil
		}
		subs, err := nodes(n.SubAgents)
		if err != nil {
			return nil, err
		}
		return adk.SetSubAgents(ctx, out, subs)
	case n.Sequential != nil:
		steps, err := nodes(n.Sequential.Steps)
		if err != nil {
			return nil, err
		}
		return adk.NewSequentialAgent(ctx, &adk.SequentialAgentConfig{Name: n.Sequential.Name, Description: n.Sequential.Description, SubAgents: steps})
	case n.Parallel != nil:
		steps, err := nodes(n.Parallel.Steps)
		if err != nil {
			return nil, err
		}
		return adk.NewParallelAgent(ctx, &adk.ParallelAgentConfig{Name: n.Parallel.Name, Description: n.Parallel.Description, SubAgents: steps})
	case n.Loop != nil:
		steps, err := nodes(n.Loop.Steps)
		if err != nil {
			return nil, err
		}
		return adk.NewLoopAgent(ctx, &adk.LoopAgentConfig{Name: n.Loop.Name, Description: n.Loop.Description, SubAgents: steps,
			MaxIterations: n.Loop.MaxIterations})
	case n.Supervisor != nil:
		boss, err := b.node(ctx, n.Supervisor.Supervisor)
		if err != nil {
			return nil, err
		}
		subs, err := nodes(n.Supervisor.SubAgents)
		if err != nil {
			return nil, err
		}
		return supervisor.New(ctx, &supervisor.Config{Supervisor: boss, SubAgents: subs})
	default:
		pe := n.PlanExecute
		if b.cfg.Model == nil {
			return nil, errors.New("gateway: planExecute needs the gateway's model")
		}
		exec, err := b.node(ctx, pe.Executor)
		if err != nil {
			return nil, err
		}
		planner, err := planexecute.NewPlanner(ctx, &planexecute.PlannerConfig{Model: b.cfg.Model})
		if err != nil {
			return nil, err
		}
		replanner, err := planexecute.NewReplanner(ctx, &planexecute.ReplannerConfig{Model: b.cfg.Model})
		if err != nil {
			return nil, err
		}
		return planexecute.New(ctx, &planexecute.Config{Name: pe.Name, Description: pe.Description,
			Planner: planner, Executor: exec, Replanner: replanner, MaxIterations: pe.MaxIterations})
	}
}
