package conformance_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/conformance"
)

// The conformance agent is an A2A executor, served with serve.NewExecutor
// under its card. The prefix of a message's messageId picks what it does.
func ExampleExecutor() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := serve.NewExecutor(ctx, new(conformance.Executor), conformance.Card(""), serve.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	c, err := client.New(ctx, srv.URL(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	for _, prefix := range []string{conformance.CompleteTask, conformance.ArtifactText, conformance.MessageResponse} {
		m := a2a.NewTextMessage(a2a.RoleUser, "hello")
		m.MessageID = prefix + "-" + a2a.NewID()
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
		if err != nil {
			log.Fatal(err)
		}
		switch r := res.(type) {
		case *a2a.Message:
			fmt.Printf("%s: message %q\n", prefix, r.Text())
		case *a2a.Task:
			fmt.Printf("%s: %s", prefix, r.Status.State)
			if r.Status.Message != nil {
				fmt.Printf(", %q", r.Status.Message.Text())
			}
			for _, art := range r.Artifacts {
				fmt.Printf(", artifact %q", art.Text())
			}
			fmt.Println()
		}
	}
	// A graceful shutdown, which waits for open connections: the client's
	// are closed first.
	c.CloseIdleConnections()
	cancel()
	if err := <-served; err != nil {
		log.Fatal(err)
	}
	// Output:
	// tck-complete-task: TASK_STATE_COMPLETED, "Hello from TCK"
	// tck-artifact-text: TASK_STATE_COMPLETED, artifact "Generated text content"
	// tck-message-response: message "Direct message response"
}
