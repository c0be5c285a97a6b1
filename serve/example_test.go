package serve_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/serve"
)

// Serve an agent of one's own as an A2A server, then call it as any A2A
// client would. serve.Agent(ctx, agent, cfg) does both steps of New and
// Serve, for a main that only serves.
func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "Greeter", Description: "Greets people", Instruction: "You greet people.", Model: offline.New(),
	})
	if err != nil {
		log.Fatal(err)
	}
	// The zero Config serves in memory on a free port of 127.0.0.1.
	srv, err := serve.New(ctx, agent, serve.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	c, err := client.New(ctx, srv.URL(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "Hello!")})
	if err != nil {
		log.Fatal(err)
	}
	task := res.(*a2a.Task)
	fmt.Println(c.Card().Name, task.Status.State, task.Artifacts[0].Text())

	// A graceful shutdown: open requests may finish (an idle keep-alive
	// connection holds it up to Config.ShutdownGrace, so close ours).
	c.CloseIdleConnections()
	cancel()
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output: Greeter TASK_STATE_COMPLETED [offline model] You asked: Hello!
}
