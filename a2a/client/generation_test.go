package client_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// serveGenerations serves the echo agent, its card declaring the
// generation extension, over JSON-RPC and HTTP+JSON on one port, and
// returns the card.
func serveGenerations(t *testing.T) *a2a.AgentCard {
	t.Helper()
	ln, url := a2atest.Listen(t)
	card := echo.Card(url)
	card.SupportedInterfaces = []a2a.AgentInterface{
		{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
		{URL: url, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version},
	}
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: a2a.GenerationExtension}}
	h := a2atest.NewHandler(t, server.Config{Card: card, Executor: &echo.Executor{}})
	rpc, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := restserver.New(h, restserver.Config{JSONRPC: rpc})
	if err != nil {
		t.Fatal(err)
	}
	a2atest.ServeBinding(t, ln, rest)
	return card
}

// The generation extension through the SDK, on each HTTP binding:
// Generations activates it, ifGenerationMatch and currentGeneration
// activate it by themselves, a mismatch matches
// a2a.ErrTaskGenerationMismatch and says the task's generation.
func TestGenerations(t *testing.T) {
	card := serveGenerations(t)
	for _, b := range []client.Binding{client.JSONRPC, client.HTTPJSON} {
		t.Run(b.Name(), func(t *testing.T) {
			c, err := client.NewFromCard(card, client.Config{Bindings: []client.Binding{b}, HTTPClient: newHTTPClient()})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			plain := sendTask(t, c, sendReq("input: one"))
			if plain.Generation != 0 {
				t.Errorf("without the extension: generation %d", plain.Generation)
			}
			ev, err := c.SendMessage(ctx, sendReq("input: two"), client.Generations())
			if err != nil {
				t.Fatal(err)
			}
			task := ev.(*a2a.Task)
			if task.Generation != 2 {
				t.Fatalf("with Generations: generation %d, want 2", task.Generation)
			}

			// A long poll, which activates the extension by itself,
			// answers once the task passes the generation.
			polled := make(chan *a2a.Task, 1)
			pollErr := make(chan error, 1)
			go func() {
				got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: &task.Generation})
				polled <- got
				pollErr <- err
			}()
			stale := task.Generation - 1
			conditional := func(match a2a.Generation) *a2a.SendMessageRequest {
				m := textMessage("more")
				m.TaskID = task.ID
				return &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &match}}
			}
			_, err = c.SendMessage(ctx, conditional(stale))
			var e *a2a.Error
			if !errors.Is(err, a2a.ErrTaskGenerationMismatch) || !errors.As(err, &e) || e.Metadata["currentGeneration"] != "2" || e.Metadata["expectedGeneration"] != "1" {
				t.Fatalf("stale ifGenerationMatch: %v (metadata %v)", err, e)
			}
			done := sendTask(t, c, conditional(task.Generation))
			if done.Generation != 5 || done.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("conditional follow-up: generation %d, %s", done.Generation, done.Status.State)
			}
			if got, err := <-polled, <-pollErr; err != nil || got.Generation <= task.Generation {
				t.Fatalf("long poll: %v, %v", got, err)
			}

			var n int
			for ev, err := range c.SendStreamingMessage(ctx, sendReq("streamed"), client.Generations()) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				if ev.ID != strconv.Itoa(n) || generationOf(ev.Event) != a2a.Generation(n) {
					t.Fatalf("event %s: generation %d", ev.ID, generationOf(ev.Event))
				}
			}
			if n != 13 {
				t.Fatalf("%d events", n)
			}
		})
	}
}

// Generations adds the extension to the header once, after what
// Extensions set; a cut stream resumes with it, so the resumed events
// carry their generations too.
func TestGenerationsHeader(t *testing.T) {
	card := serveGenerations(t)
	rec := newRecorder()
	rec.cutAfter, rec.cutStreams = 4, 1
	c, err := client.NewFromCard(card, client.Config{HTTPClient: rec.client(),
		CallOptions: []client.CallOption{client.Extensions("urn:x"), client.Generations()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int
	for ev, err := range c.SendStreamingMessage(context.Background(), sendReq("cut and resumed"), client.Generations()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if generationOf(ev.Event) != a2a.Generation(n) {
			t.Fatalf("event %s: generation %d", ev.ID, generationOf(ev.Event))
		}
	}
	streams := rec.streams()
	if n != 13 || len(streams) != 2 {
		t.Fatalf("%d events over %d streams, want 13 over 2 (one cut)", n, len(streams))
	}
	for _, s := range streams {
		if got := s.Header.Get("A2A-Extensions"); got != "urn:x,"+a2a.GenerationExtension {
			t.Errorf("%s: A2A-Extensions %q", s.Method, got)
		}
	}
}

func generationOf(ev a2a.Event) a2a.Generation {
	switch e := ev.(type) {
	case *a2a.Task:
		return e.Generation
	case *a2a.TaskStatusUpdateEvent:
		return e.Generation
	case *a2a.TaskArtifactUpdateEvent:
		return e.Generation
	}
	return 0
}
