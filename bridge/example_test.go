package bridge_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/serve"
)

// Use an agent another process serves as an ordinary ADK agent: here the
// caller's Runner runs it alone, and it could as well be a sub-agent to
// transfer to, a workflow step or a tool (adk.NewAgentTool). Its events
// arrive named after the remote agent, with their RunPath under the
// caller's.
func ExampleNewRemoteAgent() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// Another team's agent, served on a free port.
	theirs, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "GreeterAgent", Description: "Greets people", Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := serve.New(ctx, theirs, serve.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { cancel(); <-served }()

	// Ours: the agent at that URL, from its card.
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	remote, err := bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: srv.URL(), HTTPClient: hc})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(remote.Name(ctx), "-", remote.Description(ctx))
	events := adk.NewRunner(ctx, adk.RunnerConfig{Agent: remote}).Query(ctx, "Good morning")
	for {
		ev, ok := events.Next()
		if !ok {
			break
		}
		if ev.Err != nil {
			log.Fatal(ev.Err)
		}
		msg, err := ev.Output.MessageOutput.GetMessage()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s\n", ev.AgentName, msg.Text())
	}
	// Output:
	// GreeterAgent - Greets people
	// GreeterAgent: [offline model] You asked: Good morning
}
