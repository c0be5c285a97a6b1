package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"

	"github.com/cloudwego/hertz/pkg/route"

	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/gateway/console"
	"github.com/a2amesh/a2amesh/serve"
)

// DefaultAddr is where the a2amesh command serves a gateway by default.
const DefaultAddr = "127.0.0.1:9100"

// New composes t (see Build) and readies it to be served as one A2A agent,
// presented on its card under the topology's gateway name and
// description; cfg.Serve configures the server (its Name and Description,
// when set, take precedence over the topology's). With no cfg.Model the
// gateway thinks with the offline model. Serve the result with
// (*serve.Server).Serve. The server also serves the mesh's web console at
// console.Path (see package console), behind cfg.Serve.Gate, its live
// events feed from cfg.Serve.NATS.URL when set.
//
// New listens first: while it discovers the agents (for up to
// cfg.Remote.Wait), the port answers /healthz 200 and /readyz 503 naming
// the agents not found yet (see serve.Hold), so that a gateway started
// before its agents is alive and not ready rather than absent. Once
// found, an agent that goes down does not make the gateway unready: the
// runs that need it fail, naming it, and the others go on.
func New(ctx context.Context, t *Topology, cfg Config) (*serve.Server, error) {
	if cfg.Model == nil {
		cfg.Model = offline.New()
	}
	// Refuse a bad server configuration before waiting for the agents.
	if err := cfg.Serve.Check(); err != nil {
		return nil, err
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	sc := cfg.Serve
	if sc.Listener == nil {
		ln, err := net.Listen("tcp", cmp.Or(sc.Addr, "127.0.0.1:0"))
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		sc.Listener, sc.Addr = ln, ""
	}
	d := newDiscovery(t)
	release := serve.Hold(sc.Listener, d.Missing)
	agent, err := t.build(ctx, cfg, d)
	release()
	if err != nil {
		sc.Listener.Close() // as the server would have
		return nil, fmt.Errorf("gateway: compose the mesh: %w", err)
	}
	if sc.Name == "" {
		sc.Name = cmp.Or(t.Gateway.Name, "Mesh")
	}
	if sc.Description == "" {
		sc.Description = t.Gateway.Description
	}
	if sc.Service == "" {
		sc.Service = "gateway"
	}
	entry, err := json.Marshal(t.Entry)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	// The console's endpoints answer to the names the A2A endpoint does.
	hosts := sc.AllowedHosts
	if len(hosts) == 0 {
		hosts = console.HostsOf(sc.PublicURL, sc.Listener.Addr())
	}
	con := console.New(console.Config{Name: sc.Name, Agents: t.Agents, Entry: entry, Gate: sc.Gate, Hosts: hosts,
		NATS: sc.NATS.URL, NATSAuth: sc.NATS.Auth, Logger: sc.Logger})
	routes := sc.Routes
	sc.Routes = func(ctx context.Context, r route.IRoutes) {
		con.Register(ctx, r)
		if routes != nil {
			routes(ctx, r)
		}
	}
	return serve.New(ctx, agent, sc)
}
