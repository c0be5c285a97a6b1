package grpcclient_test

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// TestMutualTLS: with Config.TLS the binding dials TLS, naming the server
// by the interface's host, and its client certificate names the caller
// to a server that verifies it: calls and streams go through, another
// certificate does not see the caller's task, none is unauthenticated,
// and a client without TLS gets an error, not a hang.
func TestMutualTLS(t *testing.T) {
	ca := a2atest.NewCA(t)
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{auth.NewMTLS(auth.MTLSConfig{})}})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	card := grpcCard(ln.Addr().String(), "")
	h := a2atest.NewHandler(t, server.Config{Card: card, Executor: slowEcho(), Gate: gate})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	serveHandler(t, ln, h, grpcserver.Config{Grace: 100 * time.Millisecond, TLS: ca.ServerTLS(t)})
	connect := func(tc *tls.Config) *client.Client {
		c, err := client.NewFromCard(card, client.Config{Bindings: []client.Binding{grpcclient.Binding(grpcclient.Config{TLS: tc})}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	research := connect(ca.ClientTLS(ca.Client(t, "spiffe://mesh.example/research")))
	ev, err := research.SendMessage(ctx, sendReq("hello over TLS"))
	if err != nil {
		t.Fatalf("with a certificate: %v", err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("answer %T, want a task", ev)
	}
	if _, err := research.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
		t.Errorf("its own task: %v", err)
	}
	if evs, err := collect(research.SendStreamingMessage(ctx, sendReq("slow: a stream over TLS"))); err != nil || len(evs) < slowChunks {
		t.Errorf("stream: %d events, %v", len(evs), err)
	}
	writer := connect(ca.ClientTLS(ca.Client(t, "spiffe://mesh.example/writer")))
	if _, err := writer.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another certificate's GetTask: %v, want task not found", err)
	}
	anonymous := connect(ca.ClientTLS())
	if _, err := anonymous.ListTasks(ctx, &a2a.ListTasksRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Errorf("without a certificate: %v, want unauthenticated", err)
	}
	if _, err := connect(nil).ListTasks(ctx, &a2a.ListTasksRequest{}); err == nil || ctx.Err() != nil {
		t.Errorf("without TLS: %v (context: %v), want an error before the deadline", err, ctx.Err())
	}
}
