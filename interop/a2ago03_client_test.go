package interop

// a2a-go v0.3.15's client (A2A 0.3 over JSON-RPC: message/send,
// message/stream, tasks/get, tasks/list, tasks/cancel, tasks/resubscribe,
// tasks/pushNotificationConfig/set|get|list|delete,
// agent/getAuthenticatedExtendedCard) against the a2amesh server, which
// serves 0.3 on the same endpoint as 1.0 and a card both versions read.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	agentcard03 "github.com/a2aproject/a2a-go/a2aclient/agentcard"
	a2asrv03 "github.com/a2aproject/a2a-go/a2asrv"
	eventqueue03 "github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/services/echo"
)

// newGo03Client resolves the card at baseURL with a2a-go v0.3.15's own
// resolver (so our union card must satisfy its 0.3 model) and builds a
// client with its factory. The client is destroyed when the test ends.
func newGo03Client(t *testing.T, ctx context.Context, baseURL string, hc *http.Client, opts ...a2aclient03.FactoryOption) (*a2aclient03.Client, *a2a03.AgentCard) {
	t.Helper()
	card, err := agentcard03.NewResolver(hc).Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("a2a-go 0.3 resolver: %v", err)
	}
	opts = append([]a2aclient03.FactoryOption{a2aclient03.WithJSONRPCTransport(hc)}, opts...)
	c, err := a2aclient03.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("a2a-go 0.3 factory: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Destroy(); err != nil {
			t.Errorf("destroy a2a-go 0.3 client: %v", err)
		}
	})
	return c, card
}

func go03Message(text string) *a2a03.Message {
	return a2a03.NewMessage(a2a03.MessageRoleUser, a2a03.TextPart{Text: text})
}

func go03PartsText(parts a2a03.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		if tp, ok := p.(a2a03.TextPart); ok {
			b.WriteString(tp.Text)
		}
	}
	return b.String()
}

func go03ArtifactText(task *a2a03.Task) string {
	for _, art := range task.Artifacts {
		if art.ID == echo.ArtifactID {
			return go03PartsText(art.Parts)
		}
	}
	return ""
}

func go03Send(t *testing.T, ctx context.Context, c *a2aclient03.Client, p *a2a03.MessageSendParams) *a2a03.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, p)
	if err != nil {
		t.Fatalf("message/send: %v", err)
	}
	task, ok := res.(*a2a03.Task)
	if !ok {
		t.Fatalf("message/send returned a %T, want *a2a.Task", res)
	}
	return task
}

func go03EventKind(ev a2a03.Event) string {
	switch e := ev.(type) {
	case *a2a03.Task:
		return "task(" + string(e.Status.State) + ")"
	case *a2a03.TaskStatusUpdateEvent:
		return fmt.Sprintf("status(%s,final=%v)", e.Status.State, e.Final)
	case *a2a03.TaskArtifactUpdateEvent:
		return "artifact"
	case *a2a03.Message:
		return "message"
	}
	return fmt.Sprintf("%T", ev)
}

func go03Collect(t *testing.T, seq func(yield func(a2a03.Event, error) bool)) []a2a03.Event {
	t.Helper()
	var evs []a2a03.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("stream failed after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func go03StreamErr(seq func(yield func(a2a03.Event, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

func TestA2AGo03Client(t *testing.T) {
	ctx := testContext(t)
	// srv declares an extended card but has none configured; ext serves one.
	srv := startOurServer(t, ourOptions{
		loopbackPush: true,
		card:         func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = true },
	})
	ext := startOurServer(t, ourOptions{extended: extendedCardFor})
	hc := newHTTPClient(t)
	c, card := newGo03Client(t, ctx, srv.URL, hc)
	// Polling is the 0.3 client's non-blocking mode (blocking: false).
	polling, _ := newGo03Client(t, ctx, srv.URL, hc, a2aclient03.WithConfig(a2aclient03.Config{Polling: true}))

	t.Run("Card", func(t *testing.T) {
		if card.Name != "echo" || card.URL != srv.URL || card.PreferredTransport != a2a03.TransportProtocolJSONRPC || card.ProtocolVersion != "0.3" {
			t.Fatalf("a2a-go 0.3 read card %q at %q via %q version %q", card.Name, card.URL, card.PreferredTransport, card.ProtocolVersion)
		}
		if !card.Capabilities.Streaming || !card.Capabilities.PushNotifications || !card.SupportsAuthenticatedExtendedCard {
			t.Errorf("capabilities %+v, supportsAuthenticatedExtendedCard %v", card.Capabilities, card.SupportsAuthenticatedExtendedCard)
		}
		if len(card.Skills) != 1 || card.Skills[0].ID != "echo" || len(card.DefaultInputModes) == 0 {
			t.Errorf("skills %+v, input modes %v", card.Skills, card.DefaultInputModes)
		}
	})

	t.Run("SendMessage", func(t *testing.T) {
		task := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: go03Message("hello from a2a-go 0.3")})
		if task.Status.State != a2a03.TaskStateCompleted || go03ArtifactText(task) != "hello from a2a-go 0.3" {
			t.Fatalf("task %s with echo %q", task.Status.State, go03ArtifactText(task))
		}
		if len(task.History) == 0 || task.History[0].Role != a2a03.MessageRoleUser || go03PartsText(task.History[0].Parts) != "hello from a2a-go 0.3" {
			t.Errorf("history %+v, want the user's message first", task.History)
		}
	})

	t.Run("SendMessage/NonBlocking", func(t *testing.T) {
		task := go03Send(t, ctx, polling, &a2a03.MessageSendParams{Message: go03Message(heldText("nb03"))})
		if task.Status.State.Terminal() {
			t.Fatalf("non-blocking send returned a %s task; the held task cannot have ended", task.Status.State)
		}
		srv.release("nb03")
		final := go03PollTask(t, ctx, c, task.ID)
		if final.Status.State != a2a03.TaskStateCompleted || go03ArtifactText(final) != heldText("nb03") {
			t.Errorf("after release: %s with echo %q", final.Status.State, go03ArtifactText(final))
		}
	})

	t.Run("SendMessage/InputRequired", func(t *testing.T) {
		task := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: go03Message(echo.InputPrefix + " more")})
		if task.Status.State != a2a03.TaskStateInputRequired {
			t.Fatalf("state %s, want input-required", task.Status.State)
		}
		follow := go03Message("the answer")
		follow.TaskID, follow.ContextID = task.ID, task.ContextID
		done := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: follow})
		if done.ID != task.ID || done.Status.State != a2a03.TaskStateCompleted || go03ArtifactText(done) != "the answer" {
			t.Errorf("follow-up: %s %s echo %q", done.ID, done.Status.State, go03ArtifactText(done))
		}
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		evs := go03Collect(t, c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: go03Message(streamText)}))
		kinds := make([]string, len(evs))
		for i, ev := range evs {
			kinds[i] = go03EventKind(ev)
		}
		want := []string{"task(submitted)", "status(working,final=false)"}
		for range 10 {
			want = append(want, "artifact")
		}
		want = append(want, "status(completed,final=true)")
		if !slices.Equal(kinds, want) {
			t.Fatalf("events %v\nwant   %v", kinds, want)
		}
		var text strings.Builder
		for i, ev := range evs[2:12] {
			au := ev.(*a2a03.TaskArtifactUpdateEvent)
			if au.Artifact == nil || au.Artifact.ID != echo.ArtifactID || au.Append != (i > 0) || au.LastChunk != (i == 9) {
				t.Errorf("chunk %d: %+v", i, au)
				continue
			}
			text.WriteString(go03PartsText(au.Artifact.Parts))
		}
		if text.String() != streamText {
			t.Errorf("chunks concatenate to %q, want %q", text.String(), streamText)
		}
	})

	t.Run("GetTask", func(t *testing.T) {
		sent := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: go03Message("get me")})
		got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: sent.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != sent.ID || got.Status.State != a2a03.TaskStateCompleted || go03ArtifactText(got) != "get me" || len(got.History) == 0 {
			t.Fatalf("tasks/get: %s %s echo %q, %d history", got.ID, got.Status.State, go03ArtifactText(got), len(got.History))
		}
		for _, n := range []int{0, 1} {
			got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: sent.ID, HistoryLength: &n})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.History) != n {
				t.Errorf("historyLength %d: got %d messages", n, len(got.History))
			}
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		// tasks/list is not in the 0.3 specification; a2a-go's 0.3 line
		// added it (snake_case fields) and our server serves it.
		contextID := a2a03.NewContextID()
		var ids []a2a03.TaskID
		for i := range 3 {
			m := go03Message(fmt.Sprintf("list %d", i))
			m.ContextID = contextID
			ids = append(ids, go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: m}).ID)
		}
		page1, err := c.ListTasks(ctx, &a2a03.ListTasksRequest{ContextID: contextID, PageSize: 2, IncludeArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1.Tasks) != 2 || page1.TotalSize != 3 || page1.NextPageToken == "" {
			t.Fatalf("first page: %d tasks, total %d, next %q", len(page1.Tasks), page1.TotalSize, page1.NextPageToken)
		}
		if go03ArtifactText(page1.Tasks[0]) == "" {
			t.Error("include_artifacts: the first task has no echo artifact")
		}
		page2, err := c.ListTasks(ctx, &a2a03.ListTasksRequest{ContextID: contextID, PageSize: 2, PageToken: page1.NextPageToken})
		if err != nil {
			t.Fatal(err)
		}
		if len(page2.Tasks) != 1 || page2.NextPageToken != "" {
			t.Fatalf("second page: %d tasks, next %q", len(page2.Tasks), page2.NextPageToken)
		}
		var listed []a2a03.TaskID
		for _, task := range append(page1.Tasks, page2.Tasks...) {
			listed = append(listed, task.ID)
		}
		slices.Reverse(listed)
		if !slices.Equal(listed, ids) {
			t.Errorf("listed %v, want %v newest first", listed, ids)
		}
		completed, err := c.ListTasks(ctx, &a2a03.ListTasksRequest{ContextID: contextID, Status: a2a03.TaskStateCompleted, HistoryLength: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(completed.Tasks) != 3 {
			t.Errorf("status filter completed: %d tasks, want 3", len(completed.Tasks))
		}
		for _, task := range completed.Tasks {
			if len(task.History) > 1 {
				t.Errorf("history_length 1: task %s has %d messages", task.ID, len(task.History))
			}
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		task := go03Send(t, ctx, polling, &a2a03.MessageSendParams{Message: go03Message(heldText("cancel03"))})
		canceled, err := c.CancelTask(ctx, &a2a03.TaskIDParams{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if canceled.ID != task.ID || canceled.Status.State != a2a03.TaskStateCanceled {
			t.Fatalf("tasks/cancel: %s %s", canceled.ID, canceled.Status.State)
		}
		got, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: task.ID})
		if err != nil || got.Status.State != a2a03.TaskStateCanceled {
			t.Fatalf("tasks/get after cancel: %v, %v", got, err)
		}
	})

	t.Run("ResubscribeToTask", func(t *testing.T) {
		task := go03Send(t, ctx, polling, &a2a03.MessageSendParams{Message: go03Message(heldText("resub03"))})
		var evs []a2a03.Event
		for ev, err := range c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: task.ID}) {
			if err != nil {
				t.Fatalf("tasks/resubscribe failed after %d events: %v", len(evs), err)
			}
			evs = append(evs, ev)
			if len(evs) == 1 {
				srv.release("resub03")
			}
		}
		if len(evs) == 0 {
			t.Fatal("no events")
		}
		if first, ok := evs[0].(*a2a03.Task); !ok || first.ID != task.ID {
			t.Fatalf("first event %s, want the task %s", go03EventKind(evs[0]), task.ID)
		}
		last, ok := evs[len(evs)-1].(*a2a03.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2a03.TaskStateCompleted || !last.Final {
			t.Fatalf("last event %s, want the final completed status", go03EventKind(evs[len(evs)-1]))
		}
		var text strings.Builder
		for _, ev := range evs {
			if au, ok := ev.(*a2a03.TaskArtifactUpdateEvent); ok {
				text.WriteString(go03PartsText(au.Artifact.Parts))
			}
		}
		if text.String() != heldText("resub03") {
			t.Errorf("chunks concatenate to %q, want %q", text.String(), heldText("resub03"))
		}
	})

	t.Run("PushConfig", func(t *testing.T) {
		hook := startWebhook(t)
		task := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: go03Message(echo.InputPrefix + " push")})
		if task.Status.State != a2a03.TaskStateInputRequired {
			t.Fatalf("state %s, want input-required", task.Status.State)
		}
		set, err := c.SetTaskPushConfig(ctx, &a2a03.TaskPushConfig{TaskID: task.ID, Config: a2a03.PushConfig{URL: hook.URL, Token: "go03-token"}})
		if err != nil {
			t.Fatal(err)
		}
		if set.TaskID != task.ID || set.Config.ID == "" || set.Config.URL != hook.URL || set.Config.Token != "go03-token" {
			t.Fatalf("set %+v", set)
		}
		got, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID, ConfigID: set.Config.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.TaskID != task.ID || got.Config.ID != set.Config.ID || got.Config.URL != hook.URL {
			t.Errorf("get %+v, want %+v", got, set)
		}
		// 0.3's get without a config id means the task's only config.
		only, err := c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: task.ID})
		if err != nil || only.Config.ID != set.Config.ID {
			t.Errorf("get without config id: %+v, %v", only, err)
		}
		list, err := c.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].Config.ID != set.Config.ID {
			t.Fatalf("list %+v", list)
		}

		follow := go03Message("pushed")
		follow.TaskID = task.ID
		if done := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: follow}); done.Status.State != a2a03.TaskStateCompleted {
			t.Fatalf("follow-up: %s", done.Status.State)
		}
		// A webhook registered over 0.3 gets the whole task, as 0.3 says.
		d := hook.await(t, "of the completed task", func(d delivery) bool {
			var pushed a2a03.Task
			return json.Unmarshal(d.Body, &pushed) == nil && pushed.ID == task.ID && pushed.Status.State == a2a03.TaskStateCompleted
		})
		if tok := d.Header.Get("X-A2A-Notification-Token"); tok != "go03-token" {
			t.Errorf("X-A2A-Notification-Token %q, want go03-token", tok)
		}

		if err := c.DeleteTaskPushConfig(ctx, &a2a03.DeleteTaskPushConfigParams{TaskID: task.ID, ConfigID: set.Config.ID}); err != nil {
			t.Fatal(err)
		}
		list, err = c.ListTaskPushConfig(ctx, &a2a03.ListTaskPushConfigParams{TaskID: task.ID})
		if err != nil || len(list) != 0 {
			t.Fatalf("after delete: %+v, %v", list, err)
		}
	})

	t.Run("GetAuthenticatedExtendedCard", func(t *testing.T) {
		ec, _ := newGo03Client(t, ctx, ext.URL, hc)
		got, err := ec.GetAgentCard(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "echo-extended" || len(got.Skills) != 2 || got.URL != ext.URL {
			t.Errorf("extended card %q at %q with %d skills", got.Name, got.URL, len(got.Skills))
		}
		if _, err := c.GetAgentCard(ctx); !errors.Is(err, a2a03.ErrAuthenticatedExtendedCardNotConfigured) {
			t.Errorf("extended card not configured: got %v, want ErrAuthenticatedExtendedCardNotConfigured", err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		done := go03Send(t, ctx, c, &a2a03.MessageSendParams{Message: go03Message("done")})
		follow := go03Message("too late")
		follow.TaskID = done.ID
		negative := -1
		png := a2a03.FilePart{File: a2a03.FileBytes{FileMeta: a2a03.FileMeta{MimeType: "image/png"}, Bytes: base64.StdEncoding.EncodeToString([]byte("png"))}}
		checks := []struct {
			name string
			err  error
			want error
		}{
			{"tasks/get unknown", second(c.GetTask(ctx, &a2a03.TaskQueryParams{ID: "no-such-task"})), a2a03.ErrTaskNotFound},
			{"tasks/cancel unknown", second(c.CancelTask(ctx, &a2a03.TaskIDParams{ID: "no-such-task"})), a2a03.ErrTaskNotFound},
			{"tasks/cancel completed", second(c.CancelTask(ctx, &a2a03.TaskIDParams{ID: done.ID})), a2a03.ErrTaskNotCancelable},
			{"message/send to a completed task", second(c.SendMessage(ctx, &a2a03.MessageSendParams{Message: follow})), a2a03.ErrUnsupportedOperation},
			{"tasks/resubscribe completed", go03StreamErr(c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: done.ID})), a2a03.ErrUnsupportedOperation},
			{"tasks/resubscribe unknown", go03StreamErr(c.ResubscribeToTask(ctx, &a2a03.TaskIDParams{ID: "no-such-task"})), a2a03.ErrTaskNotFound},
			{"message/stream to a completed task", go03StreamErr(c.SendStreamingMessage(ctx, &a2a03.MessageSendParams{Message: follow})), a2a03.ErrUnsupportedOperation},
			{"tasks/get negative historyLength", second(c.GetTask(ctx, &a2a03.TaskQueryParams{ID: done.ID, HistoryLength: &negative})), a2a03.ErrInvalidParams},
			{"message/send with an unaccepted media type", second(c.SendMessage(ctx, &a2a03.MessageSendParams{Message: a2a03.NewMessage(a2a03.MessageRoleUser, png)})), a2a03.ErrUnsupportedContentType},
			{"pushNotificationConfig/get unknown", second(c.GetTaskPushConfig(ctx, &a2a03.GetTaskPushConfigParams{TaskID: done.ID, ConfigID: "no-such-config"})), a2a03.ErrTaskNotFound},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, ch.want) {
				t.Errorf("%s: got %v, want %v", ch.name, ch.err, ch.want)
			}
		}
	})

	t.Run("Errors/Capabilities", func(t *testing.T) {
		const ext = "urn:a2amesh:interop:required"
		bare := startOurServer(t, ourOptions{card: func(c *a2a.AgentCard) {
			c.Capabilities = a2a.AgentCapabilities{ExtendedAgentCard: true, Extensions: []a2a.AgentExtension{{URI: ext, Required: true}}}
		}})
		bc, bcard := newGo03Client(t, ctx, bare.URL, hc)
		if bcard.Capabilities.Streaming || bcard.Capabilities.PushNotifications || len(bcard.Capabilities.Extensions) != 1 || !bcard.Capabilities.Extensions[0].Required {
			t.Fatalf("a2a-go 0.3 read capabilities %+v", bcard.Capabilities)
		}
		// -32008 is a 1.0 code; a2a-go 0.3 has no error for it, so it
		// surfaces as an internal error, with our reason in the data.
		_, err := bc.SendMessage(ctx, &a2a03.MessageSendParams{Message: go03Message("x")})
		var ae *a2a03.Error
		if !errors.Is(err, a2a03.ErrInternalError) || !errors.As(err, &ae) || ae.Details["reason"] != "EXTENSION_SUPPORT_REQUIRED" {
			t.Errorf("send without the required extension: got %#v, want an internal error with reason EXTENSION_SUPPORT_REQUIRED", err)
		}
		// With the 1.0 header name the extension is accepted (the 0.3
		// name: TestLegacyExtensionsHeaderOn03).
		xc, _ := newGo03Client(t, ctx, bare.URL, hc, a2aclient03.WithInterceptors(a2aclient03.NewStaticCallMetaInjector(a2aclient03.CallMeta{"A2A-Extensions": {ext}})))
		task := go03Send(t, ctx, xc, &a2a03.MessageSendParams{Message: go03Message("with the extension")})
		if task.Status.State != a2a03.TaskStateCompleted {
			t.Fatalf("send with the extension: %s", task.Status.State)
		}
		if _, err := bc.SetTaskPushConfig(ctx, &a2a03.TaskPushConfig{TaskID: task.ID, Config: a2a03.PushConfig{URL: "http://127.0.0.1:1/hook"}}); !errors.Is(err, a2a03.ErrPushNotificationNotSupported) {
			t.Errorf("push on an agent without push: got %v, want ErrPushNotificationNotSupported", err)
		}
		if _, err := bc.GetAgentCard(ctx); !errors.Is(err, a2a03.ErrAuthenticatedExtendedCardNotConfigured) {
			t.Errorf("declared but unconfigured extended card: got %v", err)
		}
	})
}

// TestLegacyExtensionsHeaderOn03: A2A 0.3 clients (a2a-go v0.3.15,
// a2a-python 0.3) name requested extensions in X-A2A-Extensions, the 0.3
// specification's header; on the 0.3 wire our server reads it.
func TestLegacyExtensionsHeaderOn03(t *testing.T) {
	ctx := testContext(t)
	const ext = "urn:a2amesh:interop:required"
	srv := startOurServer(t, ourOptions{card: func(c *a2a.AgentCard) {
		c.Capabilities.Extensions = []a2a.AgentExtension{{URI: ext, Required: true}}
	}})
	hc := newHTTPClient(t)
	c, _ := newGo03Client(t, ctx, srv.URL, hc, a2aclient03.WithInterceptors(a2aclient03.NewStaticCallMetaInjector(a2aclient03.CallMeta{"X-A2A-Extensions": {ext}})))
	res, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: go03Message("legacy header")})
	if err != nil {
		t.Fatalf("a 0.3 client requesting the required extension with X-A2A-Extensions was refused: %v", err)
	}
	if task, ok := res.(*a2a03.Task); !ok || task.Status.State != a2a03.TaskStateCompleted {
		t.Fatalf("got %#v, want a completed task", res)
	}
}

// TestOurClient03SendsLegacyExtensionsHeader: on the 0.3 wire our client
// names requested extensions in X-A2A-Extensions too, which is what a2a-go
// v0.3.15's server reads.
func TestOurClient03SendsLegacyExtensionsHeader(t *testing.T) {
	ctx := testContext(t)
	const ext = "urn:a2amesh:interop:wanted"
	base := startGo03ExtensionsEcho(t)
	c, err := client.New(ctx, base, client.Config{HTTPClient: newHTTPClient(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProtocolVersion() != a2a.Version03 {
		t.Fatalf("our client speaks %s to a 0.3-only agent", c.ProtocolVersion())
	}
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "which extensions?")}, client.Extensions(ext))
	if err != nil {
		t.Fatal(err)
	}
	msg, ok := ev.(*a2a.Message)
	if !ok {
		t.Fatalf("got a %T, want the agent's message", ev)
	}
	if msg.Text() != ext {
		t.Errorf("a2a-go 0.3 saw the requested extensions %q, want %q", msg.Text(), ext)
	}
}

// extensionsEcho03 is an a2a-go v0.3.15 agent that answers every message
// with the extensions the request asked for, comma-separated.
type extensionsEcho03 struct{}

func (extensionsEcho03) Execute(ctx context.Context, rc *a2asrv03.RequestContext, q eventqueue03.Queue) error {
	var requested []string
	if e, ok := a2asrv03.ExtensionsFrom(ctx); ok {
		requested = e.RequestedURIs()
	}
	reply := a2a03.NewMessage(a2a03.MessageRoleAgent, a2a03.TextPart{Text: strings.Join(requested, ",")})
	reply.ContextID = rc.ContextID
	return q.Write(ctx, reply)
}

func (extensionsEcho03) Cancel(context.Context, *a2asrv03.RequestContext, eventqueue03.Queue) error {
	return nil
}

// startGo03ExtensionsEcho serves extensionsEcho03 on a2a-go v0.3.15's
// JSON-RPC server with a 0.3 card, and returns its base URL.
func startGo03ExtensionsEcho(t *testing.T) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/"
	card := &a2a03.AgentCard{
		Name: "extensions-echo", Description: "Replies with the requested extensions", URL: base,
		PreferredTransport: a2a03.TransportProtocolJSONRPC, ProtocolVersion: "0.3", Version: "1.0.0",
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a03.AgentSkill{{ID: "ext", Name: "ext", Description: "ext", Tags: []string{"ext"}}},
	}
	mux := http.NewServeMux()
	mux.Handle("/", a2asrv03.NewJSONRPCHandler(a2asrv03.NewHandler(extensionsEcho03{})))
	mux.Handle("/.well-known/agent-card.json", a2asrv03.NewStaticAgentCardHandler(card))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	return base
}

// go03PollTask polls tasks/get until the task is terminal, within the bound.
func go03PollTask(t *testing.T, ctx context.Context, c *a2aclient03.Client, id a2a03.TaskID) *a2a03.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		task, err := c.GetTask(ctx, &a2a03.TaskQueryParams{ID: id})
		if err != nil {
			t.Fatalf("polling task %s: %v", id, err)
		}
		if task.Status.State.Terminal() {
			return task
		}
		pause(ctx)
	}
}
