package gateway_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"sync"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/gateway"
	"github.com/a2amesh/a2amesh/serve"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// team serves an agent of one team on a free port until ctx ends, and
// returns its URL; wg is done when it has stopped.
func team(ctx context.Context, wg *sync.WaitGroup, name, desc string) string {
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: name, Description: desc, Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := serve.New(ctx, agent, serve.Config{Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	wg.Go(func() { srv.Serve(ctx) })
	return srv.URL()
}

// Compose two teams' agents, each its own A2A server, into one gateway
// from Go: a topology value (the same as a topology file; see
// docs/gateway.md) that runs them in sequence, served as one A2A agent.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	var servers sync.WaitGroup
	defer servers.Wait()
	defer cancel()
	t := &gateway.Topology{
		Version: 1,
		Agents: map[string]string{
			"drafts":  team(ctx, &servers, "DraftAgent", "Drafts answers"),
			"reviews": team(ctx, &servers, "ReviewAgent", "Reviews drafts"),
		},
		Entry: &gateway.Node{Sequential: &gateway.Workflow{Name: "DraftThenReview",
			Steps: []*gateway.Node{{Agent: "drafts"}, {Agent: "reviews"}}}},
	}
	t.Gateway.Name = "Writing"
	// The gateway's calls to the teams' agents share one HTTP client,
	// whose connections are closed when the example ends.
	hops := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hops.CloseIdleConnections()
	srv, err := gateway.New(ctx, t, gateway.Config{Remote: bridge.RemoteConfig{HTTPClient: hops}, Serve: serve.Config{Logger: quiet}})
	if err != nil {
		log.Fatal(err)
	}
	servers.Go(func() { srv.Serve(ctx) })

	c, err := client.New(ctx, srv.URL(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "A motto for the team")})
	if err != nil {
		log.Fatal(err)
	}
	task := res.(*a2a.Task)
	fmt.Println(c.Card().Name, task.Status.State)
	for _, a := range task.Artifacts {
		fmt.Println(a.Text())
	}
	// Output:
	// Writing TASK_STATE_COMPLETED
	// [offline model] You asked: A motto for the team
	// [offline model] You asked: A motto for the team
}
