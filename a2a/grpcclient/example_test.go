package grpcclient_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// A client that prefers gRPC, calling an echo agent whose card offers it.
func Example() {
	ctx := context.Background()

	// The agent: echo, served over gRPC on a local port.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	card := echo.Card("http://127.0.0.1/")
	card.SupportedInterfaces = []a2a.AgentInterface{{URL: ln.Addr().String(), ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version}}
	h, err := server.New(server.Config{Card: card, Executor: &echo.Executor{}})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := grpcserver.New(h, grpcserver.Config{})
	if err != nil {
		log.Fatal(err)
	}
	serving, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(serving, ln) }()
	defer func() {
		stop()
		<-served
		_ = h.Close(ctx)
	}()

	// The client: gRPC first, JSON-RPC if the card has no gRPC interface.
	c, err := client.NewFromCard(card, client.Config{
		Bindings: []client.Binding{grpcclient.Binding(grpcclient.Config{}), client.JSONRPC},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println("binding:", c.Binding())

	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
	if err != nil {
		log.Fatal(err)
	}
	task := res.(*a2a.Task)
	fmt.Println(task.Status.State, task.Artifacts[0].Text())

	// Streamed events carry ids, as over SSE: a cut stream resumes after
	// the last one received.
	var ids []string
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "streamed")}) {
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, ev.ID)
	}
	fmt.Println("event ids:", ids)
	// Output:
	// binding: GRPC
	// TASK_STATE_COMPLETED hello
	// event ids: [1 2 3 4 5 6 7 8 9 10 11 12 13]
}
