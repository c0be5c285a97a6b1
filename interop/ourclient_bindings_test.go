package interop

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestOurClientBindingsAgainstA2AGo: our client over each binding other
// than JSON-RPC, against a2a-go v2.4.0's own server of that binding (its
// card lists HTTP+JSON and gRPC; the client's Bindings pick one): every
// operation, a stream's events in order, and errors read back into their
// A2A codes.
func TestOurClientBindingsAgainstA2AGo(t *testing.T) {
	for _, b := range []client.Binding{client.HTTPJSON, grpcclient.Binding(grpcclient.Config{})} {
		t.Run(b.Name(), func(t *testing.T) { testOurClientBinding(t, b) })
	}
}

func testOurClientBinding(t *testing.T, b client.Binding) {
	ctx := testContext(t)
	peer := startGoPeer(t, true)
	c, err := client.New(ctx, peer.RESTURL, client.Config{Bindings: []client.Binding{b}, HTTPClient: newHTTPClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.Binding() != b.Name() || c.ProtocolVersion() != a2a.Version {
		t.Fatalf("client speaks %s %s, want %s 1.0", c.Binding(), c.ProtocolVersion(), b.Name())
	}

	var done *a2a.Task
	t.Run("SendMessage", func(t *testing.T) {
		done = send(t, ctx, c, textRequest("hello over "+b.Name()))
		if done.Status.State != a2a.TaskStateCompleted || artifactText(done) != "hello over "+b.Name() {
			t.Fatalf("task %s with echo %q", done.Status.State, artifactText(done))
		}
	})
	if done == nil {
		t.FailNow()
	}

	t.Run("SendStreamingMessage", func(t *testing.T) {
		var evs []client.Event
		for ev, err := range c.SendStreamingMessage(ctx, textRequest("streamed")) {
			if err != nil {
				t.Fatal(err)
			}
			evs = append(evs, ev)
		}
		if len(evs) < 2 {
			t.Fatalf("%d events, want the task and its updates", len(evs))
		}
		if _, ok := evs[0].Event.(*a2a.Task); !ok {
			t.Errorf("first event %T, want the task", evs[0].Event)
		}
		var text strings.Builder
		for _, ev := range evs {
			if u, ok := ev.Event.(*a2a.TaskArtifactUpdateEvent); ok {
				text.WriteString(u.Artifact.Text())
			}
		}
		if s, _ := a2a.StateOf(evs[len(evs)-1].Event); s != a2a.TaskStateCompleted || text.String() != "streamed" {
			t.Errorf("stream ended %s with echo %q", s, text.String())
		}
	})

	t.Run("GetTask", func(t *testing.T) {
		zero := 0
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: done.ID, HistoryLength: &zero})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != done.ID || got.Status.State != a2a.TaskStateCompleted || len(got.History) != 0 {
			t.Errorf("GetTask = %s %s with %d messages, want %s completed without history", got.ID, got.Status.State, len(got.History), done.ID)
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		size := 10
		page, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: done.ContextID, PageSize: &size})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 1 || page.Tasks[0].ID != done.ID {
			t.Errorf("ListTasks of the context = %d tasks, want %s alone", len(page.Tasks), done.ID)
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		req := textRequest(echo.SlowPrefix + " to cancel")
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		task := send(t, ctx, c, req)
		got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
		switch {
		case errors.Is(err, a2a.ErrTaskNotCancelable):
			// The slow task ended first; the error is what it must be.
		case err != nil:
			t.Fatal(err)
		case got.Status.State != a2a.TaskStateCanceled:
			t.Errorf("CancelTask = %s, want canceled", got.Status.State)
		}
	})

	t.Run("PushConfig", func(t *testing.T) {
		hook := startWebhook(t)
		cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: done.ID, URL: hook.URL, Token: "tok"})
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: done.ID, ID: cfg.ID})
		if err != nil || got.URL != hook.URL {
			t.Fatalf("GetTaskPushNotificationConfig = %+v, %v", got, err)
		}
		list, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: done.ID})
		if err != nil || len(list.Configs) != 1 {
			t.Fatalf("ListTaskPushNotificationConfigs = %+v, %v", list, err)
		}
		if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: done.ID, ID: cfg.ID}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("GetExtendedAgentCard", func(t *testing.T) {
		card, err := c.GetExtendedAgentCard(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if card.Name != "goecho-extended" {
			t.Errorf("extended card %q", card.Name)
		}
	})

	t.Run("TaskNotFound", func(t *testing.T) {
		_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("GetTask of an unknown task = %v, want TaskNotFound", err)
		}
		for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "no-such-task"}) {
			if !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Errorf("SubscribeToTask of an unknown task = %v, want TaskNotFound", err)
			}
			break
		}
	})
}
