// Command hops is a2amesh's side of the remote-hop benchmark (a2aload
// hops): a leaf agent that answers at once, relays that reach it through
// bridge.RemoteAgent, and the NATS server their task events go to, each
// run as a process of its own.
//
//	hops leaf  --addr 127.0.0.1:9301 --nats nats://127.0.0.1:4333
//	hops relay --addr 127.0.0.1:9302 --to http://127.0.0.1:9301/ --nats ...
//	hops nats  --port 4333 --dir /tmp/nats
//
// With --grpc-addr an agent serves the gRPC binding too, and with --hop
// GRPC a relay calls the next agent over it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
	"github.com/a2amesh/a2amesh/serve"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "hops leaf|relay|nats [flags]")
		os.Exit(2)
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	var err error
	switch os.Args[1] {
	case "leaf":
		err = serveAgent(ctx, "leaf", os.Args[2:], func(context.Context, *bridge.RemoteConfig) (adk.Agent, error) { return leaf{}, nil })
	case "relay":
		to := "http://127.0.0.1:9301/"
		err = serveAgent(ctx, "relay", os.Args[2:], func(ctx context.Context, rc *bridge.RemoteConfig) (adk.Agent, error) {
			rc.URL = to
			return bridge.NewRemoteAgent(ctx, *rc)
		}, func(fs *flag.FlagSet) { fs.StringVar(&to, "to", to, "the agent to relay to") })
	case "nats":
		fs := flag.NewFlagSet("nats", flag.ExitOnError)
		port := fs.Int("port", 4333, "port")
		dir := fs.String("dir", os.TempDir(), "JetStream directory")
		_ = fs.Parse(os.Args[2:])
		var srv *embedded.Server
		if srv, err = embedded.Start(embedded.Config{Port: *port, Dir: *dir}); err == nil {
			fmt.Printf("nats ready at %s\n", srv.URL())
			<-ctx.Done()
			srv.Close()
		}
	default:
		err = fmt.Errorf("unknown role %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hops:", err)
		os.Exit(1)
	}
}

// serveAgent serves the agent make returns with the flags a2aload hops
// passes: --addr, --nats (task events published there), --log-level and
// --retention, plus those more defines.
func serveAgent(ctx context.Context, name string, args []string, make func(context.Context, *bridge.RemoteConfig) (adk.Agent, error), more ...func(*flag.FlagSet)) error {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	natsURL := fs.String("nats", "", "NATS server to publish task events to")
	level := fs.String("log-level", "info", "log level")
	retention := fs.Duration("retention", 0, "how long finished tasks are kept (0: the default)")
	grpcAddr := fs.String("grpc-addr", "", "address to serve the gRPC binding on too (empty: none)")
	hop := fs.String("hop", "", "the binding a relay calls the next agent over (empty: JSON-RPC)")
	debugAddr := fs.String("debug-addr", "", "address for /debug/pprof/ (empty: off)")
	for _, m := range more {
		m(fs)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := cli.Logger(*level)
	if err != nil {
		return err
	}
	cli.TuneProcess(log) // as the a2amesh command does
	cli.ServeDebug(ctx, *debugAddr, log)
	rc := &bridge.RemoteConfig{Wait: time.Minute}
	switch *hop {
	case "", a2a.BindingJSONRPC:
	case a2a.BindingGRPC:
		rc.Bindings = []client.Binding{grpcclient.Binding(grpcclient.Config{})}
	default:
		return fmt.Errorf("--hop %q: want %s or %s", *hop, a2a.BindingJSONRPC, a2a.BindingGRPC)
	}
	agent, err := make(ctx, rc)
	if err != nil {
		return err
	}
	s, err := serve.New(ctx, agent, serve.Config{Addr: *addr, GRPCAddr: *grpcAddr, State: serve.StateMemory, NATS: serve.NATS{URL: *natsURL}, Retention: *retention, Logger: log})
	if err != nil {
		return err
	}
	fmt.Printf("%s ready at %s\n", name, s.URL())
	return s.Serve(ctx)
}

// leaf answers every request at once, with no model.
type leaf struct{}

func (leaf) Name(context.Context) string        { return "leaf" }
func (leaf) Description(context.Context) string { return "answers at once" }
func (leaf) Run(context.Context, *adk.AgentInput, ...adk.AgentRunOption) *adk.AsyncIterator[*adk.AgentEvent] {
	it, gen := adk.NewAsyncIteratorPair[*adk.AgentEvent]()
	gen.Send(adk.EventFromMessage(schema.AssistantMessage("hello from leaf", nil), nil, schema.Assistant, ""))
	gen.Close()
	return it
}
