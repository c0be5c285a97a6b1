package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/deploy"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/internal/cli"
)

// serveGateway runs `a2amesh gateway`: it waits for the topology's agents
// and serves the composition as one A2A agent until ctx ends.
func serveGateway(ctx context.Context, args []string, stdout io.Writer) error {
	f := cli.NewFlags("gateway", "GATEWAY")
	sf := cli.DefineServe(f, gateway.DefaultAddr)
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
	log, cfg, done, err := serveConfig(ctx, sf, "gateway")
	if err != nil {
		return err
	}
	defer done()
	var t *gateway.Topology
	if *path == "" {
		t, err = gateway.ParseTopology(deploy.Topology)
	} else {
		t, err = gateway.LoadTopology(*path)
	}
	if err != nil {
		return err
	}
	m, err := sf.Model(log)
	if err != nil {
		return err
	}
	hops, err := gateway.ParseBindings(sf.HopBindings()...)
	if err != nil {
		return fmt.Errorf("--hop-bindings: %w", err)
	}
	creds, err := sf.HopCredentials()
	if err != nil {
		return err
	}
	log.Info("discovering the mesh's agents", "agents", strings.Join(slices.Sorted(maps.Keys(t.Agents)), ", "), "wait", *sf.Wait)
	s, err := gateway.New(ctx, t, gateway.Config{Model: m, Serve: cfg, Remote: bridge.RemoteConfig{Wait: *sf.Wait,
		IdleTimeout: *hopIdle, ResponseTimeout: *hopResponse, AllowedOrigins: cli.SplitList(*origins), Bindings: hops, Credentials: creds}})
	if err != nil {
		return err
	}
	return serveUntilDone(ctx, s, "gateway", sf, log, stdout)
}
