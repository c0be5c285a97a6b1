package client_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// serveEcho serves the echo agent, which streams its answer in three
// chunks, on a free port of 127.0.0.1 and returns its URL and a function
// that stops it and waits until it has.
func serveEcho() (url string, stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, &echo.Executor{StreamChunks: 3}, echo.Card(""),
		serve.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	return s.URL(), func() { cancel(); <-done }, nil
}

func ExampleNew() {
	url, stop, err := serveEcho()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()

	// The zero Config is the defaults: timeouts, resumption of cut
	// streams, and the newest protocol version the agent's card offers.
	c, err := client.New(ctx, url, client.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseIdleConnections()
	fmt.Println("agent:", c.Card().Name, "speaking A2A", c.ProtocolVersion())

	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := res.(*a2a.Task)
	fmt.Println(task.Status.State, task.Artifacts[0].Parts[0].Text)
	// Output:
	// agent: echo speaking A2A 1.0
	// TASK_STATE_COMPLETED hello
}

func ExampleClient_SendStreamingMessage() {
	url, stop, err := serveEcho()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, url, client.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseIdleConnections()

	req := &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "one two three")}
	for ev, err := range c.SendStreamingMessage(ctx, req) {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			fmt.Println(ev.ID, "task", e.Status.State)
		case *a2a.TaskStatusUpdateEvent:
			fmt.Println(ev.ID, "status", e.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			fmt.Printf("%s artifact %q\n", ev.ID, e.Artifact.Parts[0].Text)
		}
	}
	// Output:
	// 1 task TASK_STATE_SUBMITTED
	// 2 status TASK_STATE_WORKING
	// 3 artifact "one "
	// 4 artifact "two "
	// 5 artifact "three"
	// 6 status TASK_STATE_COMPLETED
}

// A Config sets what differs from the defaults; here, headers on every
// call, A2A 0.3, a stream that may be silent for a minute, and no
// resumption of cut streams.
func ExampleConfig() {
	url, stop, err := serveEcho()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, url, client.Config{
		ProtocolVersion:   a2a.Version03,
		CallOptions:       []client.CallOption{client.BearerToken("s3cret"), client.Header("X-Trace", "example")},
		StreamIdleTimeout: time.Minute,
		ResumeAttempts:    -1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseIdleConnections()
	fmt.Println("speaking A2A", c.ProtocolVersion())

	// A call's own options come after the Config's.
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "configured")},
		client.Timeout(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.(*a2a.Task).Artifacts[0].Parts[0].Text)
	// Output:
	// speaking A2A 0.3
	// configured
}

// With the generation extension (an a2amesh agent's card declares it), each
// task and event says which change of the task it reflects: a message can
// be made conditional on the task not having changed since it was read,
// and GetTask can wait for the task's next change instead of polling.
func ExampleGenerations() {
	url, stop, err := serveEcho()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	ctx := context.Background()

	c, err := client.New(ctx, url, client.Config{CallOptions: []client.CallOption{client.Generations()}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.CloseIdleConnections()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "input: what next?")})
	if err != nil {
		fmt.Println(err)
		return
	}
	task := res.(*a2a.Task)
	fmt.Println(task.Status.State, "at generation", task.Generation)

	answer := func(match a2a.Generation) *a2a.SendMessageRequest {
		m := a2a.NewTextMessage(a2a.RoleUser, "this")
		m.TaskID = task.ID
		return &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{IfGenerationMatch: &match}}
	}
	// An answer to a state of the task that is no longer its own.
	_, err = c.SendMessage(ctx, answer(task.Generation-1))
	var e *a2a.Error
	if errors.Is(err, a2a.ErrTaskGenerationMismatch) && errors.As(err, &e) {
		fmt.Println("refused: the task is at generation", e.Metadata["currentGeneration"])
	}
	if _, err = c.SendMessage(ctx, answer(task.Generation)); err != nil {
		fmt.Println(err)
		return
	}

	// Wait for the task to pass the generation last seen (it has).
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, CurrentGeneration: &task.Generation})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Status.State, "at generation", got.Generation)
	// Output:
	// TASK_STATE_INPUT_REQUIRED at generation 2
	// refused: the task is at generation 2
	// TASK_STATE_COMPLETED at generation 5
}
