// Command a2amesh runs and talks to an a2amesh mesh.
//
//	a2amesh up                 NATS, every agent service and the gateway, each its own process
//	a2amesh ask "question"     ask the mesh; events stream in as a tree; answers prompts
//	a2amesh agents             the mesh's agents and whether they are up
//	a2amesh tasks list|get ID  the gateway's tasks
//	a2amesh watch              every task event of the mesh, live, from NATS
//	a2amesh serve NAME         serve one agent service (weather, chat, math, research, writer, router, supervisor, planner, echo, conformance)
//	a2amesh gateway            serve the gateway
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/a2amesh/a2amesh/internal/cli"
)

func main() {
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	ctx, stop := cli.SignalContext()
	err := run(ctx, os.Args[1], os.Args[2:])
	stop()
	var exit exitError
	switch {
	case errors.As(err, &exit):
		os.Exit(int(exit))
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		// The error may quote what an agent or the mesh sent.
		fmt.Fprintf(os.Stderr, "a2amesh %s: %s\n", os.Args[1], safe(err.Error()))
		os.Exit(1)
	}
}

// exitError ends the command with a status and nothing more to say.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func run(ctx context.Context, cmd string, args []string) error {
	switch cmd {
	case "up":
		return up(ctx, args, os.Stdout, os.Stderr)
	case "ask":
		return ask(ctx, args, os.Stdin, os.Stdout)
	case "agents":
		return agents(ctx, args, os.Stdout)
	case "tasks":
		return tasks(ctx, args, os.Stdout)
	case "watch":
		return watch(ctx, args, os.Stdout, os.Stderr)
	case "gateway":
		return serveGateway(ctx, args, os.Stdout)
	case "serve":
		if len(args) == 0 {
			return fmt.Errorf("serve which service? %s", strings.Join(serviceNames(), ", "))
		}
		return serveService(ctx, args[0], args[1:], os.Stdout)
	case "help", "-h", "--help":
		usage()
		return nil
	}
	usage()
	return exitError(2)
}

func usage() {
	fmt.Fprint(os.Stderr, `a2amesh runs and talks to an a2amesh mesh.

  a2amesh up                 start NATS, every agent service and the gateway, restarting any that
                             stops (Ctrl-C stops them all)
  a2amesh ask "question"     ask the mesh through the gateway; answer its questions when it asks
  a2amesh agents             list the mesh's agents and whether they are up
  a2amesh tasks list         list the gateway's tasks;  a2amesh tasks get ID  shows one
  a2amesh watch              follow every task event of the mesh from NATS, as a tree
  a2amesh serve NAME         serve one agent: `+strings.Join(serviceNames(), ", ")+`
  a2amesh gateway            serve the gateway over the mesh topology

Each command takes -h. Without OPENAI_BASE_URL / OPENAI_API_KEY the agents run the
offline model: deterministic rules, not a language model.
`)
}
