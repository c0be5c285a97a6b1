package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestTenantFromCard: a client made from a card sends its interface's
// tenant in the params of every 1.0 call, unless the request names one;
// 0.3 has no tenants.
func TestTenantFromCard(t *testing.T) {
	s := startEcho(t, serverOpts{config: allowLoopbackPush})
	ctx := context.Background()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			card := echo.Card(s.URL)
			for i := range card.SupportedInterfaces {
				card.SupportedInterfaces[i].Tenant = "acme"
			}
			rec := newRecorder()
			c, err := client.NewFromCard(card, client.Config{ProtocolVersion: v, HTTPClient: rec.client()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			task := completedTask(t, c, "tenant")
			input := sendTask(t, c, sendReq(echo.InputPrefix+"tenant"))
			calls := []func() error{
				func() error { _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); return err },
				func() error { _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}); return err },
				func() error { _, err := collect(c.SendStreamingMessage(ctx, sendReq("tenant"))); return err },
				func() error { _, err := collect(c.Resubscribe(ctx, task.ID, "1")); return err },
				func() error {
					_, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: input.ID}))
					return err
				},
				func() error { _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: input.ID}); return err },
				func() error {
					_, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "p", URL: "http://127.0.0.1:1/hook"})
					return err
				},
				func() error {
					_, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "p"})
					return err
				},
				func() error {
					_, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
					return err
				},
				func() error {
					return c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "p"})
				},
			}
			for i, call := range calls {
				if err := call(); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
			// The echo card declares no extended card: only the request
			// matters here.
			if _, err := c.GetExtendedAgentCard(ctx); err == nil {
				t.Fatalf("GetExtendedAgentCard succeeded without an extended card")
			}
			// The request's own tenant wins over the interface's, and the
			// task is acme's, not found in another tenant (0.3 sends no
			// tenant: its tasks are the default tenant's).
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, Tenant: "other"}); v != a2a.Version03 && !errors.Is(err, a2a.ErrTaskNotFound) || v == a2a.Version03 && err != nil {
				t.Fatalf("GetTask in another tenant = %v", err)
			}

			reqs := rec.requests()
			if len(reqs) != len(calls)+4 {
				t.Fatalf("%d requests, want %d", len(reqs), len(calls)+4)
			}
			want := "acme"
			if v == a2a.Version03 {
				want = ""
			}
			for i, r := range reqs {
				w := want
				if i == len(reqs)-1 && v == a2a.Version {
					w = "other"
				}
				if got := paramsTenant(t, r.Body); got != w {
					t.Errorf("%s: tenant %q, want %q", r.Method, got, w)
				}
			}
		})
	}
}

func paramsTenant(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Params struct {
			Tenant string `json:"tenant"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request %s: %v", body, err)
	}
	return req.Params.Tenant
}

// TestMaxEventBytes: an event larger than Config.MaxEventBytes ends the
// stream with an error, and is not resumed.
func TestMaxEventBytes(t *testing.T) {
	s := startEcho(t, serverOpts{})
	big := strings.Repeat("x", 2000)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			rec := newRecorder()
			c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client(), MaxEventBytes: 1000})
			evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq(big)))
			if err == nil || !strings.Contains(err.Error(), "larger than the client's limit") {
				t.Fatalf("stream ended with %v after %d events, want the size error", err, len(evs))
			}
			if len(evs) != 0 || len(rec.streams()) != 1 {
				t.Errorf("%d events over %d streams, want none over 1", len(evs), len(rec.streams()))
			}
			// Small events pass.
			evs, err = collect(c.SendStreamingMessage(context.Background(), sendReq("small")))
			if err != nil || echoText(evs) != "small" {
				t.Fatalf("small stream: %q, %v", echoText(evs), err)
			}
			// A unary reply over the limit is an error too, not a cut-off
			// result.
			if ev, err := c.SendMessage(context.Background(), sendReq(big)); err == nil {
				t.Fatalf("SendMessage of a reply over the limit = %T, want an error", ev)
			}
		})
	}
}

// TestConcurrentCalls: a Client is safe for concurrent use, and each call
// gets its own reply.
func TestConcurrentCalls(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 8 {
				wg.Go(func() {
					text := fmt.Sprintf("caller %d", i)
					ev, err := c.SendMessage(context.Background(), sendReq(text))
					if err != nil {
						errs <- err
						return
					}
					if got := artifactText(ev.(*a2a.Task)); got != text {
						errs <- fmt.Errorf("caller %d got %q", i, got)
					}
					evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq(echo.SlowPrefix+text)))
					if err != nil {
						errs <- err
						return
					}
					if got := echoText(evs); got != echo.SlowPrefix+text {
						errs <- fmt.Errorf("caller %d streamed %q", i, got)
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}
