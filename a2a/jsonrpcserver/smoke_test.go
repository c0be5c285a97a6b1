package jsonrpcserver_test

import (
	"context"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

func TestSmoke(t *testing.T) {
	h := a2atest.NewHandler(t, server.Config{Card: echo.Card("http://placeholder/"), Executor: new(echo.Executor)})
	url := a2atest.Serve(t, h, jsonrpcserver.Config{})
	c, err := client.NewFromURL(url, client.Config{ProtocolVersion: a2a.Version})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	ev, err := c.SendMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")})
	if err != nil {
		t.Fatal(err)
	}
	if task := ev.(*a2a.Task); task.Artifacts[0].Text() != "hi" {
		t.Fatalf("%+v", task)
	}
	n := 0
	for ev, err := range c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello world")}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		_ = ev
	}
	if n != 13 {
		t.Fatalf("%d events", n)
	}
}
