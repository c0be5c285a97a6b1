// Command echo runs the echo agent as a standalone A2A server: JSON-RPC
// (A2A 1.0 and 0.3) with SSE streaming on Hertz, and its agent card at
// /.well-known/agent-card.json.
//
//	go run ./services/echo --addr 127.0.0.1:9001
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/services/echo/echoagent"
)

func main() {
	f := cli.NewFlags("echo", "ECHO")
	addr := f.String("addr", "127.0.0.1:9001", "address to listen on")
	publicURL := f.String("public-url", "", "endpoint URL to put in the agent card (default http://<addr>/)")
	retention := f.Duration("retention", 10*time.Minute, "how long finished tasks are kept")
	commitDelay := f.DurationEnv("commit-delay", "A2AMESH_COMMIT_DELAY", 0,
		"how long a task event may wait to be stored with the ones after it, one write for the group (0: each event at once); default 0 in memory, "+natsstore.CommitDelay.String()+" with --state nats")
	level := f.String("log-level", "info", "log level: debug, info, warn or error")
	debugAddr := f.String("debug-addr", "", "address for /debug/pprof/ (empty: off)")
	pushAllow := f.StringEnv("push-allow", "A2AMESH_PUSH_ALLOW", "",
		"comma-separated CIDR prefixes, IP addresses and host names, each IP or name optionally with :port, that push webhooks may reach despite the SSRF guard (e.g. 127.0.0.0/8,hooks.internal:8443)")
	state := f.StringEnv("state", "A2AMESH_STATE", "memory", "where tasks live: memory (this process) or nats (JetStream on --nats, shared by the replicas)")
	natsURL := f.StringEnv("nats", "NATS_URL", "", "NATS server for --state nats")
	limits := cli.ServerLimits(f)
	eventsMaxAge := f.DurationEnv("events-max-age", "A2AMESH_EVENTS_MAX_AGE", 24*time.Hour,
		"with --state nats: how long the events stream keeps task events (and the webhooks bucket its configs)")
	if err := f.Parse(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sender := &push.Sender{Guard: netguard.Guard{Allow: cli.SplitList(*pushAllow)}}
	if err := sender.Guard.Validate(); err != nil {
		fmt.Fprintf(os.Stderr, "echo: --push-allow: %v\n", err)
		os.Exit(2)
	}
	log, err := cli.Logger(*level)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	sender.Logger = log
	cli.RouteHertzLogs(log)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		cli.Fatal(log, "listen", err)
	}
	url := *publicURL
	if url == "" {
		url = "http://" + ln.Addr().String() + "/"
	}
	cfg := server.Config{
		Card: echoagent.Card(url), Executor: new(echoagent.Agent), Retention: *retention, CommitDelay: *commitDelay, Limits: limits.Limits(), Logger: log,
		PushSender: sender,
	}
	ctx, stop := cli.SignalContext()
	defer stop()
	var replicas *natsstore.Replicas
	switch *state {
	case "memory":
	case "nats":
		nc, js, err := natsstore.Connect(*natsURL, "echo", log)
		if err != nil {
			cli.Fatal(log, "state", err)
		}
		defer nc.Close()
		// Once nats.go has given up on the connection every request
		// fails: stop serving and exit non-zero (below), for whatever
		// runs the process to start a new one.
		var stopConn context.CancelFunc
		ctx, stopConn = nc.Context(ctx)
		defer stopConn()
		// The stores drop ended tasks themselves (see service.openNATS).
		a, err := natsstore.Open(ctx, js, natsstore.StoresConfig{Namespace: "echo", Logger: log,
			Events: natsstore.EventsConfig{MaxAge: *eventsMaxAge}, Push: natsstore.BucketConfig{TTL: *eventsMaxAge},
			KeepEnded: max(*retention, 0)})
		if err != nil {
			cli.Fatal(log, "state", err)
		}
		cfg.Tasks, cfg.Events, cfg.PushConfigs, cfg.Replicas, replicas = a.Tasks, a.Log, a.Push, a.Replicas, a.Replicas
		cfg.Retention, cfg.Limits.MaxTaskBytes = -1, a.MaxTaskBytes()
		if !f.Given("commit-delay") {
			cfg.CommitDelay = natsstore.CommitDelay
		}
	default:
		cli.Fatal(log, "state", fmt.Errorf("--state %q: memory or nats", *state))
	}
	h, err := server.New(cfg)
	if err != nil {
		cli.Fatal(log, "configure", err)
	}
	if replicas != nil {
		defer replicas.Start(ctx, h)()
	}
	srv, err := jsonrpcserver.New(h, jsonrpcserver.Options{AllowedHosts: limits.Hosts(), Logger: log})
	if err != nil {
		cli.Fatal(log, "configure", err)
	}
	cli.ServeDebug(ctx, *debugAddr, log)
	log.Info("echo agent listening", "url", url, "card", url+".well-known/agent-card.json")
	fmt.Printf(`echo agent ready at %s
  card:   curl -s %s.well-known/agent-card.json
  send:   curl -s %s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
            -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
  stream: curl -sN %s -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
            -d '{"jsonrpc":"2.0","id":2,"method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","parts":[{"text":"slow: hello"}]}}}'
`, url, url, url, url)
	serveErr := srv.Serve(ctx, ln, 2*time.Second)
	closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.Close(closeCtx); err != nil {
		log.Warn("closing the agent", "err", err)
	}
	if err := context.Cause(ctx); errors.Is(err, natsstore.ErrClosed) {
		cli.Fatal(log, "stopped serving: the connection to NATS closed for good and every request needs it; start the service again", err)
	}
	if serveErr != nil {
		cli.Fatal(log, "serve", serveErr)
	}
}
