// Command adkgohops is the peer side of the "cost of a remote A2A hop"
// benchmark, built on Google's adk-go (google.golang.org/adk v0.3.0).
//
//	adkgohops leaf  --addr 127.0.0.1:PORT
//	adkgohops relay --addr 127.0.0.1:PORT --to http://127.0.0.1:OTHER/
//
// Both roles serve an ADK agent through adka2a.Executor + a2asrv (A2A 0.3
// JSON-RPC at "/", agent card at /.well-known/agent-card.json). The leaf
// answers instantly with "hello from leaf"; the relay is a remoteagent that
// forwards every invocation to the agent at --to.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/a2asrv"
	"google.golang.org/genai"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/remoteagent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/server/adka2a"
	"google.golang.org/adk/session"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	role := os.Args[1]
	fs := flag.NewFlagSet(role, flag.ExitOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address (host:port)")
	to := fs.String("to", "", "relay only: base URL of the downstream A2A agent")
	_ = fs.Parse(os.Args[2:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var (
		a   agent.Agent
		err error
	)
	switch role {
	case "leaf":
		a, err = newLeaf()
	case "relay":
		if *to == "" {
			usage()
		}
		a, err = newRelay(ctx, *to)
	default:
		usage()
	}
	if err != nil {
		log.Fatalf("%s: %v", role, err)
	}
	if err := serve(ctx, a, *addr); err != nil {
		log.Fatalf("%s: %v", role, err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: adkgohops leaf --addr 127.0.0.1:PORT\n       adkgohops relay --addr 127.0.0.1:PORT --to http://127.0.0.1:OTHER/")
	os.Exit(2)
}

// newLeaf is a custom (non-LLM) ADK agent that yields one final text event.
func newLeaf() (agent.Agent, error) {
	return agent.New(agent.Config{
		Name:        "leaf",
		Description: "Instant agent that replies with a fixed greeting.",
		Run: func(ctx agent.InvocationContext) iter.Seq2[*session.Event, error] {
			return func(yield func(*session.Event, error) bool) {
				ev := session.NewEvent(ctx.InvocationID())
				ev.Content = genai.NewContentFromText("hello from leaf", genai.RoleModel)
				yield(ev, nil)
			}
		},
	})
}

// newRelay is adk-go's remote A2A agent pointing at the downstream agent.
//
// The card is resolved once here and passed as AgentCard: in adk v0.3.0 an
// AgentCardSource is re-fetched on every invocation, which would add an extra
// HTTP GET per hop to what we measure.
func newRelay(ctx context.Context, to string) (agent.Agent, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	card, err := agentcard.DefaultResolver.Resolve(rctx, to)
	if err != nil {
		return nil, fmt.Errorf("resolve agent card from %s: %w", to, err)
	}
	return remoteagent.NewA2A(remoteagent.A2AConfig{
		Name:        "relay",
		Description: "Forwards every request to " + to,
		AgentCard:   card,
	})
}

func serve(ctx context.Context, a agent.Agent, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	baseURL := "http://" + ln.Addr().String() + "/"

	card := &a2a.AgentCard{
		Name:               a.Name(),
		Description:        a.Description(),
		URL:                baseURL,
		PreferredTransport: a2a.TransportProtocolJSONRPC,
		ProtocolVersion:    "0.3.0",
		Version:            "0.0.1",
		Capabilities:       a2a.AgentCapabilities{Streaming: true},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             adka2a.BuildAgentSkills(a),
	}

	executor := adka2a.NewExecutor(adka2a.ExecutorConfig{
		RunnerConfig: runner.Config{
			AppName:        a.Name(),
			Agent:          a,
			SessionService: session.InMemoryService(),
		},
	})

	mux := http.NewServeMux()
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	// "/" is a catch-all in ServeMux, so JSON-RPC is served at the card URL.
	mux.Handle("/", a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(executor)))

	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("ready at %s\n", baseURL)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
