package grpcclient_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// TestCredentialsAsMetadata: on gRPC, the client's Credentials go out as
// request metadata on every call (unary, stream, cancel), which the
// server's Gate admits; credentials that fail fail the call before it is
// sent, naming the agent.
func TestCredentialsAsMetadata(t *testing.T) {
	const key = "svc-key-0123456789ab"
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{{Key: key, Name: "svc"}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{keys}})
	if err != nil {
		t.Fatal(err)
	}
	f := serve(t, nil, server.Config{Gate: gate})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := dial(t, f.addr, "", client.Config{}).SendMessage(ctx, sendReq("hello")); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("SendMessage without credentials = %v, want unauthenticated", err)
	}
	apiKey := &apiKeyCredentials{key: key}
	c := dial(t, f.addr, "", client.Config{Credentials: apiKey})
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "slow: wait"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
	if err != nil {
		t.Fatalf("SendMessage with the API key: %v", err)
	}
	task := ev.(*a2a.Task)
	if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil && !errors.Is(err, a2a.ErrTaskNotCancelable) {
		t.Fatalf("CancelTask: %v", err)
	}
	if _, err := collect(c.SendStreamingMessage(ctx, sendReq("streamed"))); err != nil {
		t.Fatalf("stream: %v", err)
	}
	for _, m := range []string{"SendMessage", "CancelTask", "SendStreamingMessage"} {
		calls := f.rec.of(m)
		if len(calls) == 0 {
			t.Fatalf("the server recorded no %s", m)
		}
		if got := calls[len(calls)-1].MD.Get("x-api-key"); len(got) != 1 || got[0] != key {
			t.Errorf("%s carried x-api-key %q", m, got)
		}
	}

	// Failing credentials: nothing is sent.
	apiKey.err = errors.New("secret file missing")
	before := len(f.rec.all())
	_, err = c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if !errors.Is(err, client.ErrCredentials) || !strings.Contains(err.Error(), `agent "echo"`) || !strings.Contains(err.Error(), "secret file missing") {
		t.Errorf("GetTask with failing credentials = %v", err)
	}
	if _, err := collect(c.SendStreamingMessage(ctx, sendReq("streamed"))); !errors.Is(err, client.ErrCredentials) {
		t.Errorf("stream with failing credentials = %v", err)
	}
	if n := len(f.rec.all()); n != before {
		t.Errorf("%d calls reached the server with failing credentials", n-before)
	}
}

// apiKeyCredentials present an API key in X-API-Key, or fail with err
// (set before the calls that see it).
type apiKeyCredentials struct {
	key string
	err error
}

func (a *apiKeyCredentials) Header(context.Context) (http.Header, error) {
	if a.err != nil {
		return nil, a.err
	}
	return http.Header{"X-Api-Key": {a.key}}, nil
}
