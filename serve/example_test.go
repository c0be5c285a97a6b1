package serve_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"

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

// A process that needs time before it can serve (waiting for the agents it
// calls, loading a model) holds its port meanwhile: probes see it alive
// and not ready, saying why. Then the server takes the listener and
// answers /readyz itself.
func ExampleHold() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	readyz := "http://" + ln.Addr().String() + serve.ReadyzPath
	probe := func() {
		hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := hc.Get(readyz)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		fmt.Print(resp.StatusCode, " ", string(body))
	}

	release := serve.Hold(ln, func() string { return "loading the model" })
	probe()
	release()

	ctx, cancel := context.WithCancel(context.Background())
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "Greeter", Description: "Greets people", Model: offline.New()})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := serve.New(ctx, agent, serve.Config{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	probe()
	cancel() // a SIGTERM: /readyz turns 503, running tasks finish, then Serve returns
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output:
	// 503 not ready: loading the model
	// 200 ready
}
