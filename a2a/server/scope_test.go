package server_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestTasksAreTheirOwners: every operation on a task, its push configs
// included, by another principal or in another tenant is task not found,
// as for a task that never was; the owner in the tenant sees it.
func TestTasksAreTheirOwners(t *testing.T) {
	var audit a2atest.LogBuffer
	h := newHandler(t, &echo.Executor{}, func(c *server.Config) {
		c.Card.Capabilities.PushNotifications = true
		c.PushSender = &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}}
		c.Logger = slog.New(slog.NewJSONHandler(&audit, nil))
	})
	as := func(sub, tenant string) context.Context {
		return auth.NewContext(context.Background(), &auth.Principal{Issuer: "idp", Subject: sub, Tenant: tenant})
	}
	alice := as("alice", "")
	req := send(echo.InputPrefix + "wait")
	req.Tenant = "acme"
	ev, err := h.SendMessage(alice, req)
	task := mustTask(t, ev, err)
	const hook = "http://127.0.0.1:9/hook"
	if _, err := h.CreateTaskPushNotificationConfig(alice, &a2a.TaskPushNotificationConfig{Tenant: "acme", TaskID: task.ID, ID: "p", URL: hook}); err != nil {
		t.Fatalf("alice's push config: %v", err)
	}
	type op struct {
		name string
		call func(ctx context.Context, tenant string) error
	}
	ops := []op{
		{"GetTask", func(ctx context.Context, tn string) error {
			_, err := h.GetTask(ctx, &a2a.GetTaskRequest{Tenant: tn, ID: task.ID})
			return err
		}},
		{"SubscribeToTask", func(ctx context.Context, tn string) error {
			for _, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Tenant: tn, ID: task.ID}, "") {
				return err
			}
			return nil
		}},
		{"SubscribeToTask after event 1", func(ctx context.Context, tn string) error {
			for _, err := range h.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{Tenant: tn, ID: task.ID}, "1") {
				return err
			}
			return nil
		}},
		{"a message to the task", func(ctx context.Context, tn string) error {
			r := followUp(task.ID, "more")
			r.Tenant = tn
			_, err := h.SendMessage(ctx, r)
			return err
		}},
		{"CreateTaskPushNotificationConfig", func(ctx context.Context, tn string) error {
			_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{Tenant: tn, TaskID: task.ID, ID: "q", URL: hook})
			return err
		}},
		{"GetTaskPushNotificationConfig", func(ctx context.Context, tn string) error {
			_, err := h.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{Tenant: tn, TaskID: task.ID, ID: "p"})
			return err
		}},
		{"ListTaskPushNotificationConfigs", func(ctx context.Context, tn string) error {
			_, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{Tenant: tn, TaskID: task.ID})
			return err
		}},
		{"DeleteTaskPushNotificationConfig", func(ctx context.Context, tn string) error {
			return h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{Tenant: tn, TaskID: task.ID, ID: "p"})
		}},
		// Last: it ends the task.
		{"CancelTask", func(ctx context.Context, tn string) error {
			_, err := h.CancelTask(ctx, &a2a.CancelTaskRequest{Tenant: tn, ID: task.ID})
			return err
		}},
	}
	others := []struct {
		who    string
		ctx    context.Context
		tenant string
	}{
		{"bob in acme", as("bob", ""), "acme"},
		{"alice in another tenant", alice, "globex"},
		{"alice in the default tenant", alice, ""},
		{"the anonymous caller", context.Background(), "acme"},
		{"alice's name from another issuer", auth.NewContext(context.Background(), &auth.Principal{Issuer: "other-idp", Subject: "alice"}), "acme"},
	}
	for _, o := range ops {
		for _, other := range others {
			if err := o.call(other.ctx, other.tenant); !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("%s by %s: %v, want task not found", o.name, other.who, err)
			}
		}
		if o.name == "CancelTask" || o.name == "DeleteTaskPushNotificationConfig" {
			continue // alice's own would end what the others try next
		}
		if err := o.call(alice, "acme"); err != nil && o.name != "a message to the task" && o.name != "SubscribeToTask" {
			t.Errorf("%s by alice: %v", o.name, err)
		}
	}
	for _, other := range others {
		l, err := h.ListTasks(other.ctx, &a2a.ListTasksRequest{Tenant: other.tenant})
		if err != nil || len(l.Tasks) != 0 || l.TotalSize != 0 {
			t.Errorf("ListTasks by %s: %d tasks (total %d), %v; want none", other.who, len(l.Tasks), l.TotalSize, err)
		}
	}
	if l, err := h.ListTasks(alice, &a2a.ListTasksRequest{Tenant: "acme"}); err != nil || len(l.Tasks) != 1 {
		t.Fatalf("ListTasks by alice: %+v, %v", l, err)
	}
	// Each refusal is an audit record, naming who was refused and why.
	if !strings.Contains(audit.String(), `"decision":"refused","principal":"idp|bob","reason":"task `+task.ID+` is another's"`) {
		t.Errorf("no audit record of bob's refusal:\n%s", audit.String())
	}
	// A credential bound to a tenant may name no other.
	bound := auth.NewContext(context.Background(), &auth.Principal{Issuer: "idp", Subject: "carol", Tenant: "acme"})
	if _, err := h.GetTask(bound, &a2a.GetTaskRequest{Tenant: "globex", ID: task.ID}); !errors.Is(err, a2a.ErrPermissionDenied) {
		t.Fatalf("a credential of acme naming globex: %v, want permission denied", err)
	}
}

// The extended card is for authenticated callers only, on a server with a
// gate.
func TestExtendedCardNeedsACaller(t *testing.T) {
	gate, err := auth.NewGate(auth.GateConfig{AllowAnonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, &echo.Executor{}, func(c *server.Config) {
		c.Card.Capabilities.ExtendedAgentCard = true
		c.ExtendedCard = echo.Card("http://test/")
		c.Gate = gate
	})
	if _, err := h.GetExtendedAgentCard(context.Background(), &a2a.GetExtendedAgentCardRequest{}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("anonymous: %v, want unauthenticated", err)
	}
	who := auth.NewContext(context.Background(), &auth.Principal{Issuer: "idp", Subject: "alice"})
	if c, err := h.GetExtendedAgentCard(who, &a2a.GetExtendedAgentCardRequest{}); err != nil || c == nil {
		t.Fatalf("alice: %v, %v", c, err)
	}
}
