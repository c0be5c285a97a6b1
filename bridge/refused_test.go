package bridge_test

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

// onRetryAfter calls f once, when a response says when to retry.
type onRetryAfter struct {
	base *http.Transport
	once sync.Once
	f    func()
}

func (o *onRetryAfter) CloseIdleConnections() { o.base.CloseIdleConnections() }

func (o *onRetryAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := o.base.RoundTrip(r)
	if err == nil && resp.Header.Get("Retry-After") != "" {
		o.once.Do(o.f)
	}
	return resp, err
}

// A run's message that the remote agent refuses for now (it is at its
// limit of runs here; a draining replica refuses so too) is sent again
// after the wait the refusal asks for, and the run goes on as if nothing
// had happened.
func TestRemoteAgentRetriesARefusal(t *testing.T) {
	ctx := context.Background()
	release := make(chan struct{})
	m := modeltest.FromScript(func(ctx context.Context, call int, _ []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if call == 0 { // the run that takes the agent's only slot
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return answer("done"), nil
	})
	a := agent(t, "Busy", "has one run at a time", m)
	ln, url := a2atest.Listen(t)
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: a})
	if err != nil {
		t.Fatal(err)
	}
	h := a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, a, url), Executor: exec,
		Limits: server.Limits{MaxRuns: 1, MaxQueuedRuns: -1}})
	a2atest.ServeOn(t, ln, h, jsonrpcserver.Config{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	c, err := client.New(ctx, url, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hold"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}}); err != nil {
		t.Fatal(err)
	}

	// The refusal frees the slot, so that the second try is taken.
	refused := &onRetryAfter{base: http.DefaultTransport.(*http.Transport).Clone(), f: func() { close(release) }}
	hc := &http.Client{Transport: refused}
	defer hc.CloseIdleConnections()
	r, err := bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: url, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: r}).Query(ctx, "hello"))
	adktest.Expect(t, evs, `Busy [Busy] says "done"`)
	select {
	case <-release:
	default:
		t.Fatal("the message was never refused: the test tried nothing")
	}
}
