package echo_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// The echo agent is an A2A executor, served with serve.NewExecutor under
// its card. It repeats what it is sent; a prefix such as "input:" makes
// it exercise another part of the protocol.
func ExampleExecutor() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	c, err := client.New(ctx, srv.URL(), client.Config{})
	if err != nil {
		log.Fatal(err)
	}
	for _, text := range []string{"hello", echo.InputPrefix + " hello"} {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)})
		if err != nil {
			log.Fatal(err)
		}
		task := res.(*a2a.Task)
		switch {
		case len(task.Artifacts) > 0:
			fmt.Printf("%q: %s, %q\n", text, task.Status.State, task.Artifacts[0].Text())
		case task.Status.Message != nil:
			fmt.Printf("%q: %s, %q\n", text, task.Status.State, task.Status.Message.Text())
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
	// "hello": TASK_STATE_COMPLETED, "hello"
	// "input: hello": TASK_STATE_INPUT_REQUIRED, "send another message on this task to complete it"
}
