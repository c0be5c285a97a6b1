package gateway

import (
	"cmp"
	"context"
	"fmt"

	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/serve"
)

// DefaultAddr is where the a2amesh command serves a gateway by default.
const DefaultAddr = "127.0.0.1:9100"

// New composes t (see Build) and readies it to be served as one A2A agent,
// presented on its card under the topology's gateway name and
// description; cfg.Serve configures the server (its Name and Description,
// when set, take precedence over the topology's). With no cfg.Model the
// gateway thinks with the offline model. Serve the result with
// (*serve.Server).Serve.
func New(ctx context.Context, t *Topology, cfg Config) (*serve.Server, error) {
	if cfg.Model == nil {
		cfg.Model = offline.New()
	}
	// Refuse a bad server configuration before waiting for the agents.
	if err := cfg.Serve.Check(); err != nil {
		return nil, err
	}
	agent, err := t.Build(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("gateway: compose the mesh: %w", err)
	}
	sc := cfg.Serve
	if sc.Name == "" {
		sc.Name = cmp.Or(t.Gateway.Name, "Mesh")
	}
	if sc.Description == "" {
		sc.Description = t.Gateway.Description
	}
	if sc.Service == "" {
		sc.Service = "gateway"
	}
	return serve.New(ctx, agent, sc)
}
