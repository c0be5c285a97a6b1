package gateway

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/internal/service"
)

// DefaultAddr is where a gateway listens by default.
const DefaultAddr = "127.0.0.1:9100"

// Run parses args, waits for the topology's agents and serves the
// composition as one A2A agent until ctx ends.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	f := cli.NewFlags("gateway", "GATEWAY")
	common := service.CommonFlags(f, DefaultAddr)
	path := f.String("topology", "", "mesh topology file (empty: the default mesh, deploy/topology.yaml)")
	hopIdle := f.Duration("hop-idle-timeout", client.DefaultStreamIdleTimeout,
		"how long a call to an agent may receive nothing (no response, event or keep-alive) before it counts as cut and is resumed; an agent that hangs fails the run within about twice this (negative: no bound)")
	hopResponse := f.Duration("hop-response-timeout", client.DefaultResponseTimeout,
		"how long an agent's card fetch may wait for the card (negative: no bound)")
	origins := f.String("interface-origins", "",
		"origins (scheme://host[:port], comma-separated) on which the agents' cards may name their interfaces besides the origins of their topology URLs (empty: none)")
	if err := f.Parse(args); err != nil {
		return err
	}
	if err := common.Check(); err != nil {
		return err
	}
	log, err := cli.Logger(*common.LogLevel)
	if err != nil {
		return err
	}
	log = log.With("service", "gateway")
	var t *Topology
	if *path == "" {
		t, err = ParseTopology(deploy.Topology)
	} else {
		t, err = LoadTopology(*path)
	}
	if err != nil {
		return err
	}
	m, err := common.Model(log)
	if err != nil {
		return err
	}
	log.Info("discovering the mesh's agents", "agents", strings.Join(keys(t.Agents), ", "), "wait", *common.Wait)
	agent, err := t.Build(ctx, BuildConfig{Model: m, Remote: bridge.RemoteConfig{Wait: *common.Wait,
		IdleTimeout: *hopIdle, ResponseTimeout: *hopResponse, AllowedOrigins: cli.SplitList(*origins)}})
	if err != nil {
		return fmt.Errorf("compose the mesh: %w", err)
	}
	return service.ServeAgent(ctx, common, service.Serve{Name: "gateway", Agent: agent,
		CardName: t.Gateway.Name, CardDescription: t.Gateway.Description}, log, stdout)
}
