package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// streamErr drains a stream that should fail, returning its error and how
// many events came first.
func streamErr(seq func(yield func(client.Event, error) bool)) (int, error) {
	evs, err := collect(seq)
	return len(evs), err
}

func TestErrors(t *testing.T) {
	plain := startEcho(t, serverOpts{})
	noPush := startEcho(t, serverOpts{config: func(cfg *server.Config) { cfg.Card.Capabilities.PushNotifications = false }})
	extNotConfigured := startEcho(t, serverOpts{config: func(cfg *server.Config) { cfg.Card.Capabilities.ExtendedAgentCard = true }})
	ctx := context.Background()

	type env struct {
		c         *client.Client
		completed *a2a.Task // a COMPLETED task on the plain server
	}
	cases := []struct {
		name   string
		server *echoServer
		call   func(e env) error
		want   *a2a.Error
	}{
		{"GetTask unknown", plain, func(e env) error {
			_, err := e.c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
			return err
		}, a2a.ErrTaskNotFound},
		{"CancelTask unknown", plain, func(e env) error {
			_, err := e.c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task"})
			return err
		}, a2a.ErrTaskNotFound},
		{"SubscribeToTask unknown", plain, func(e env) error {
			_, err := streamErr(e.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "no-such-task"}))
			return err
		}, a2a.ErrTaskNotFound},
		{"Resubscribe unknown", plain, func(e env) error {
			_, err := streamErr(e.c.Resubscribe(ctx, "no-such-task", "3"))
			return err
		}, a2a.ErrTaskNotFound},
		{"SendMessage to unknown task", plain, func(e env) error {
			m := textMessage("hello?")
			m.TaskID = "no-such-task"
			_, err := e.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			return err
		}, a2a.ErrTaskNotFound},
		{"GetTaskPushNotificationConfig unknown config", plain, func(e env) error {
			_, err := e.c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: e.completed.ID, ID: "no-such-config"})
			return err
		}, a2a.ErrTaskNotFound},
		{"ListTaskPushNotificationConfigs unknown task", plain, func(e env) error {
			_, err := e.c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "no-such-task"})
			return err
		}, a2a.ErrTaskNotFound},
		{"SendMessage to a completed task", plain, func(e env) error {
			m := textMessage("more")
			m.TaskID = e.completed.ID
			_, err := e.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
			return err
		}, a2a.ErrUnsupportedOperation},
		{"SendStreamingMessage to a completed task", plain, func(e env) error {
			m := textMessage("more")
			m.TaskID = e.completed.ID
			_, err := streamErr(e.c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: m}))
			return err
		}, a2a.ErrUnsupportedOperation},
		{"SubscribeToTask of a completed task", plain, func(e env) error {
			_, err := streamErr(e.c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: e.completed.ID}))
			return err
		}, a2a.ErrUnsupportedOperation},
		{"GetExtendedAgentCard not declared", plain, func(e env) error {
			_, err := e.c.GetExtendedAgentCard(ctx)
			return err
		}, a2a.ErrUnsupportedOperation},
		{"CancelTask completed", plain, func(e env) error {
			_, err := e.c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: e.completed.ID})
			return err
		}, a2a.ErrTaskNotCancelable},
		{"GetTask negative historyLength", plain, func(e env) error {
			_, err := e.c.GetTask(ctx, &a2a.GetTaskRequest{ID: e.completed.ID, HistoryLength: intp(-1)})
			return err
		}, a2a.ErrInvalidParams},
		{"Resubscribe beyond the last event", plain, func(e env) error {
			_, err := streamErr(e.c.Resubscribe(ctx, e.completed.ID, "99"))
			return err
		}, a2a.ErrInvalidParams},
		{"SendMessage without parts", plain, func(e env) error {
			_, err := e.c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser)})
			return err
		}, a2a.ErrInvalidParams},
		{"push webhook refused by the guard", plain, func(e env) error {
			_, err := e.c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: e.completed.ID, URL: "http://127.0.0.1:1/hook"})
			return err
		}, a2a.ErrInvalidParams},
		{"CreateTaskPushNotificationConfig unsupported", noPush, func(e env) error {
			_, err := e.c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: "t", URL: "https://hooks.example.com/"})
			return err
		}, a2a.ErrPushNotificationNotSupported},
		{"GetTaskPushNotificationConfig unsupported", noPush, func(e env) error {
			_, err := e.c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: "t", ID: "c"})
			return err
		}, a2a.ErrPushNotificationNotSupported},
		{"ListTaskPushNotificationConfigs unsupported", noPush, func(e env) error {
			_, err := e.c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t"})
			return err
		}, a2a.ErrPushNotificationNotSupported},
		{"DeleteTaskPushNotificationConfig unsupported", noPush, func(e env) error {
			return e.c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t", ID: "c"})
		}, a2a.ErrPushNotificationNotSupported},
		{"SendMessage with a push config unsupported", noPush, func(e env) error {
			_, err := e.c.SendMessage(ctx, &a2a.SendMessageRequest{
				Message:       textMessage("hi"),
				Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://hooks.example.com/"}},
			})
			return err
		}, a2a.ErrPushNotificationNotSupported},
		{"GetExtendedAgentCard not configured", extNotConfigured, func(e env) error {
			_, err := e.c.GetExtendedAgentCard(ctx)
			return err
		}, a2a.ErrExtendedAgentCardNotConfigured},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			clients := map[*echoServer]*client.Client{}
			for _, s := range []*echoServer{plain, noPush, extNotConfigured} {
				clients[s] = dial(t, s, v)
			}
			completed := completedTask(t, clients[plain], "done")
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					err := tc.call(env{c: clients[tc.server], completed: completed})
					checkErr(t, err, tc.want)
				})
			}
		})
	}
}

// checkErr checks that err is the protocol error want, with a message.
func checkErr(t *testing.T, err error, want *a2a.Error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %q (%T) is not %v", err, err, want)
	}
	var e *a2a.Error
	if !errors.As(err, &e) || e.Code != want.Code || e.Message == "" {
		t.Fatalf("error %q: as *a2a.Error %+v", err, e)
	}
}

// TestVersionNotSupported sends requests in a protocol version the server
// does not speak. Call options cannot override the client's A2A-Version,
// so the 1.0 case uses a client made for version 9.9 and the 0.3 case
// rewrites the header on the way out.
func TestVersionNotSupported(t *testing.T) {
	s := startEcho(t, serverOpts{})
	ctx := context.Background()
	clients := map[string]func(t *testing.T) *client.Client{
		a2a.Version: func(t *testing.T) *client.Client {
			c := fromURL(t, s.URL, client.Config{ProtocolVersion: "9.9"})
			t.Cleanup(c.CloseIdleConnections)
			return c
		},
		a2a.Version03: func(t *testing.T) *client.Client {
			rec := newRecorder()
			rec.rewrite = func(r *http.Request) { r.Header.Set("A2A-Version", "9.9") }
			c := fromURL(t, s.URL, client.Config{ProtocolVersion: a2a.Version03, HTTPClient: rec.client()})
			t.Cleanup(c.CloseIdleConnections)
			return c
		},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := clients[v](t)
			calls := map[string]func() error{
				"SendMessage": func() error {
					_, err := c.SendMessage(ctx, sendReq("hi"))
					return err
				},
				"GetTask": func() error {
					_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "x"})
					return err
				},
				"SendStreamingMessage": func() error {
					_, err := streamErr(c.SendStreamingMessage(ctx, sendReq("hi")))
					return err
				},
			}
			for name, call := range calls {
				t.Run(name, func(t *testing.T) { checkErr(t, call(), a2a.ErrVersionNotSupported) })
			}
		})
	}
	t.Run("Header cannot override A2A-Version", func(t *testing.T) {
		c := fromURL(t, s.URL, client.Config{ProtocolVersion: a2a.Version, CallOptions: []client.CallOption{client.Header("A2A-Version", "9.9")}})
		t.Cleanup(c.CloseIdleConnections)
		if _, err := c.SendMessage(ctx, sendReq("hi")); err != nil {
			t.Fatalf("SendMessage: %v", err)
		}
	})
}

func TestExtensionRequired(t *testing.T) {
	const uri = "https://example.com/ext/required/v1"
	s := startEcho(t, serverOpts{config: func(cfg *server.Config) {
		cfg.Card.Capabilities.Extensions = []a2a.AgentExtension{{URI: uri, Required: true}}
	}})
	ctx := context.Background()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cases := []struct {
				name    string
				cfg     client.Config
				call    []client.CallOption
				wantErr bool
			}{
				{name: "without", wantErr: true},
				{name: "another extension", call: []client.CallOption{client.Extensions("urn:other")}, wantErr: true},
				{name: "per call", call: []client.CallOption{client.Extensions(uri)}},
				{name: "among others", call: []client.CallOption{client.Extensions("urn:other", uri)}},
				{name: "every call", cfg: client.Config{CallOptions: []client.CallOption{client.Extensions(uri)}}},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					c := dialConfig(t, s, v, tc.cfg)
					_, err := c.SendMessage(ctx, sendReq("with extensions"), tc.call...)
					_, serr := streamErr(c.SendStreamingMessage(ctx, sendReq("with extensions"), tc.call...))
					if tc.wantErr {
						checkErr(t, err, a2a.ErrExtensionSupportRequired)
						checkErr(t, serr, a2a.ErrExtensionSupportRequired)
						return
					}
					if err != nil || serr != nil {
						t.Fatalf("SendMessage: %v; SendStreamingMessage: %v", err, serr)
					}
				})
			}
		})
	}
}
