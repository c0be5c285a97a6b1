// Command hops is a2amesh's side of the remote-hop benchmark (a2aload
// hops): a leaf agent that answers at once, relays that reach it through
// bridge.RemoteAgent, and the NATS server their task events go to, each
// run as a process of its own.
//
//	hops leaf  --addr 127.0.0.1:9301 --nats nats://127.0.0.1:4333
//	hops relay --addr 127.0.0.1:9302 --to http://127.0.0.1:9301/ --nats ...
//	hops nats  --port 4333 --dir /tmp/nats
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/internal/service"
	"github.com/a2amesh/a2amesh/natsstore/embedded"
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
		err = service.Run(ctx, service.Def{Name: "leaf", Addr: "127.0.0.1:9301", Setup: func(*cli.Flags) service.Build {
			return func(context.Context, *service.Env) (adk.Agent, error) { return leaf{}, nil }
		}}, os.Args[2:], os.Stdout)
	case "relay":
		err = service.Run(ctx, service.Def{Name: "relay", Addr: "127.0.0.1:9302", Setup: func(f *cli.Flags) service.Build {
			to := f.String("to", "http://127.0.0.1:9301/", "the agent to relay to")
			return func(ctx context.Context, env *service.Env) (adk.Agent, error) { return env.Remote(ctx, *to) }
		}}, os.Args[2:], os.Stdout)
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
