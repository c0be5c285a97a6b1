package interop

// a2a-go v2.4.0's client (A2A 1.0 over JSON-RPC) against the a2amesh server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/services/echo"
)

// newGoClient resolves the card at baseURL with a2a-go's card resolver and
// builds a client with its factory, which picks the JSON-RPC 1.0 interface
// (its default transports are 1.0 only; the card's 0.3 interface has no
// factory). The client is destroyed when the test ends.
func newGoClient(t *testing.T, ctx context.Context, baseURL string, hc *http.Client, opts ...a2aclient.FactoryOption) (*a2aclient.Client, *a2ago.AgentCard) {
	t.Helper()
	card, err := agentcard.NewResolver(hc).Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("a2a-go resolver: %v", err)
	}
	opts = append([]a2aclient.FactoryOption{a2aclient.WithJSONRPCTransport(hc)}, opts...)
	c, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("a2a-go factory: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Destroy(); err != nil {
			t.Errorf("destroy a2a-go client: %v", err)
		}
	})
	return c, card
}

func goTextMessage(text string) *a2ago.Message {
	return a2ago.NewMessage(a2ago.MessageRoleUser, a2ago.NewTextPart(text))
}

// goArtifactText returns the text of the task's echo artifact.
func goArtifactText(task *a2ago.Task) string {
	for _, art := range task.Artifacts {
		if art.ID == echo.ArtifactID {
			var b strings.Builder
			for _, p := range art.Parts {
				b.WriteString(p.Text())
			}
			return b.String()
		}
	}
	return ""
}

func goPartsText(parts a2ago.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

// goSendTask sends text (blocking) and returns the task it produced.
func goSendTask(t *testing.T, ctx context.Context, c *a2aclient.Client, req *a2ago.SendMessageRequest) *a2ago.Task {
	t.Helper()
	res, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := res.(*a2ago.Task)
	if !ok {
		t.Fatalf("SendMessage returned a %T, want *a2a.Task", res)
	}
	return task
}

// goEventKind names an a2a-go stream event for messages and comparisons.
func goEventKind(ev a2ago.Event) string {
	switch e := ev.(type) {
	case *a2ago.Task:
		return "task(" + string(e.Status.State) + ")"
	case *a2ago.TaskStatusUpdateEvent:
		return "status(" + string(e.Status.State) + ")"
	case *a2ago.TaskArtifactUpdateEvent:
		return "artifact"
	case *a2ago.Message:
		return "message"
	}
	return fmt.Sprintf("%T", ev)
}

// goCollect drains an a2a-go event stream.
func goCollect(t *testing.T, seq func(yield func(a2ago.Event, error) bool)) []a2ago.Event {
	t.Helper()
	var evs []a2ago.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("stream failed after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// goCheckEchoStream checks the 13 events of a streamed echo: the task,
// WORKING, 10 chunks of the echo artifact (the first replacing, the others
// appending, the last marked lastChunk) and COMPLETED.
func goCheckEchoStream(t *testing.T, evs []a2ago.Event, text string) {
	t.Helper()
	kinds := make([]string, len(evs))
	for i, ev := range evs {
		kinds[i] = goEventKind(ev)
	}
	if len(evs) != 13 {
		t.Fatalf("got %d events %v, want 13: task, WORKING, 10 chunks, COMPLETED", len(evs), kinds)
	}
	task, ok := evs[0].(*a2ago.Task)
	if !ok {
		t.Fatalf("first event is %s, want the task (events %v)", kinds[0], kinds)
	}
	if st, ok := evs[1].(*a2ago.TaskStatusUpdateEvent); !ok || st.Status.State != a2ago.TaskStateWorking {
		t.Fatalf("second event is %s, want status(WORKING) (events %v)", kinds[1], kinds)
	}
	var got strings.Builder
	for i := 2; i < 12; i++ {
		au, ok := evs[i].(*a2ago.TaskArtifactUpdateEvent)
		if !ok {
			t.Fatalf("event %d is %s, want an artifact update (events %v)", i, kinds[i], kinds)
		}
		if au.TaskID != task.ID || au.Artifact == nil || au.Artifact.ID != echo.ArtifactID {
			t.Fatalf("event %d: artifact update %+v, want the echo artifact of task %s", i, au, task.ID)
		}
		if au.Append != (i > 2) || au.LastChunk != (i == 11) {
			t.Errorf("event %d: append=%v lastChunk=%v, want append=%v lastChunk=%v", i, au.Append, au.LastChunk, i > 2, i == 11)
		}
		got.WriteString(goPartsText(au.Artifact.Parts))
	}
	if st, ok := evs[12].(*a2ago.TaskStatusUpdateEvent); !ok || st.Status.State != a2ago.TaskStateCompleted {
		t.Fatalf("last event is %s, want status(COMPLETED) (events %v)", kinds[12], kinds)
	}
	if got.String() != text {
		t.Errorf("chunks concatenate to %q, want %q", got.String(), text)
	}
}

// versionOverride is an a2a-go call interceptor that sends another
// A2A-Version than the client's.
type versionOverride struct {
	a2aclient.PassthroughInterceptor
	version string
}

func (v versionOverride) Before(ctx context.Context, req *a2aclient.Request) (context.Context, any, error) {
	req.ServiceParams[a2ago.SvcParamVersion] = []string{v.version}
	return ctx, nil, nil
}

func TestA2AGoClient(t *testing.T) {
	ctx := testContext(t)
	// srv declares an extended card but has none configured; ext serves one.
	srv := startOurServer(t, ourOptions{
		loopbackPush: true,
		card:         func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = true },
	})
	ext := startOurServer(t, ourOptions{extended: extendedCardFor})
	hc := newHTTPClient(t)
	c, card := newGoClient(t, ctx, srv.URL, hc)

	t.Run("Card", func(t *testing.T) {
		if card.Name != "echo" || !card.Capabilities.Streaming || !card.Capabilities.PushNotifications || !card.Capabilities.ExtendedAgentCard {
			t.Fatalf("a2a-go read card %+v", card)
		}
		var versions []string
		for _, iface := range card.SupportedInterfaces {
			if iface.URL != srv.URL || iface.ProtocolBinding != a2ago.TransportProtocolJSONRPC {
				t.Errorf("interface %+v, want JSONRPC at %s", iface, srv.URL)
			}
			versions = append(versions, string(iface.ProtocolVersion))
		}
		if !slices.Equal(versions, []string{"1.0", "0.3"}) {
			t.Errorf("a2a-go reads interface versions %v, want [1.0 0.3]", versions)
		}
	})

	t.Run("SendMessage", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("hello from a2a-go")})
		if task.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("state %s, want COMPLETED", task.Status.State)
		}
		if got := goArtifactText(task); got != "hello from a2a-go" {
			t.Errorf("echo artifact %q, want %q", got, "hello from a2a-go")
		}
		if task.ID == "" || task.ContextID == "" {
			t.Errorf("task id %q context %q: both must be set", task.ID, task.ContextID)
		}
		if len(task.History) == 0 || goPartsText(task.History[0].Parts) != "hello from a2a-go" || task.History[0].Role != a2ago.MessageRoleUser {
			t.Errorf("history %+v, want the user's message first", task.History)
		}
	})

	t.Run("SendMessage/HistoryLength", func(t *testing.T) {
		zero := 0
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage("no history"),
			Config:  &a2ago.SendMessageConfig{HistoryLength: &zero},
		})
		if task.Status.State != a2ago.TaskStateCompleted || len(task.History) != 0 {
			t.Errorf("state %s with %d history messages, want COMPLETED with none", task.Status.State, len(task.History))
		}
	})

	t.Run("SendMessage/ReturnImmediately", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("ret")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		if task.Status.State.Terminal() {
			t.Fatalf("returnImmediately returned a %s task; the held task cannot have ended", task.Status.State)
		}
		srv.release("ret")
		final := goPollTask(t, ctx, c, task.ID)
		if final.Status.State != a2ago.TaskStateCompleted || goArtifactText(final) != heldText("ret") {
			t.Errorf("after release: %s with echo %q", final.Status.State, goArtifactText(final))
		}
	})

	t.Run("SendMessage/InputRequired", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage(echo.InputPrefix + " more")})
		if task.Status.State != a2ago.TaskStateInputRequired {
			t.Fatalf("state %s, want INPUT_REQUIRED", task.Status.State)
		}
		follow := goTextMessage("the answer")
		follow.TaskID, follow.ContextID = task.ID, task.ContextID
		done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: follow})
		if done.ID != task.ID || done.Status.State != a2ago.TaskStateCompleted || goArtifactText(done) != "the answer" {
			t.Errorf("follow-up gave task %s in %s with echo %q, want %s COMPLETED with %q", done.ID, done.Status.State, goArtifactText(done), task.ID, "the answer")
		}
	})

	t.Run("SendMessage/Fail", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage(echo.FailPrefix + " on purpose")})
		if task.Status.State != a2ago.TaskStateFailed {
			t.Fatalf("state %s, want FAILED", task.Status.State)
		}
		if task.Status.Message == nil || !strings.Contains(goPartsText(task.Status.Message.Parts), "on purpose") {
			t.Errorf("status message %+v, want the failure explained", task.Status.Message)
		}
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		evs := goCollect(t, c.SendStreamingMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage(streamText)}))
		goCheckEchoStream(t, evs, streamText)
	})

	t.Run("GetTask", func(t *testing.T) {
		sent := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("get me")})
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: sent.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != sent.ID || got.Status.State != a2ago.TaskStateCompleted || goArtifactText(got) != "get me" {
			t.Fatalf("GetTask: %s %s echo %q", got.ID, got.Status.State, goArtifactText(got))
		}
		if len(got.History) == 0 {
			t.Fatal("GetTask without historyLength returned no history")
		}
		for _, n := range []int{0, 1} {
			got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: sent.ID, HistoryLength: &n})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.History) != n {
				t.Errorf("historyLength %d: got %d messages", n, len(got.History))
			}
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		contextID := a2ago.NewContextID()
		var ids []a2ago.TaskID
		for i := range 3 {
			m := goTextMessage(fmt.Sprintf("list %d", i))
			m.ContextID = contextID
			ids = append(ids, goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: m}).ID)
		}
		page1, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, PageSize: 2, IncludeArtifacts: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1.Tasks) != 2 || page1.TotalSize != 3 || page1.PageSize != 2 || page1.NextPageToken == "" {
			t.Fatalf("first page: %d tasks, total %d, page size %d, next %q; want 2, 3, 2 and a token", len(page1.Tasks), page1.TotalSize, page1.PageSize, page1.NextPageToken)
		}
		if goArtifactText(page1.Tasks[0]) == "" {
			t.Error("includeArtifacts: the first task has no echo artifact")
		}
		page2, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, PageSize: 2, PageToken: page1.NextPageToken})
		if err != nil {
			t.Fatal(err)
		}
		if len(page2.Tasks) != 1 || page2.NextPageToken != "" {
			t.Fatalf("second page: %d tasks, next %q; want 1 and no token", len(page2.Tasks), page2.NextPageToken)
		}
		var listed []a2ago.TaskID
		for _, task := range append(page1.Tasks, page2.Tasks...) {
			listed = append(listed, task.ID)
			if task.ContextID != contextID {
				t.Errorf("task %s has context %s, want %s", task.ID, task.ContextID, contextID)
			}
		}
		slices.Reverse(listed) // most recently updated first
		if !slices.Equal(listed, ids) {
			t.Errorf("listed %v, want %v newest first", listed, ids)
		}
		filtered, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, Status: a2ago.TaskStateFailed})
		if err != nil {
			t.Fatal(err)
		}
		if len(filtered.Tasks) != 0 || filtered.TotalSize != 0 {
			t.Errorf("status filter FAILED: %d tasks, want none", len(filtered.Tasks))
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("cancel")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		canceled, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if canceled.ID != task.ID || canceled.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("CancelTask: %s %s, want %s CANCELED", canceled.ID, canceled.Status.State, task.ID)
		}
		got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: task.ID})
		if err != nil || got.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("GetTask after cancel: %v, %v", got, err)
		}
		again, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: task.ID})
		if err != nil || again.Status.State != a2ago.TaskStateCanceled {
			t.Errorf("canceling a canceled task: %v, %v; want it back unchanged", again, err)
		}
	})

	t.Run("SubscribeToTask", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("sub")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		var evs []a2ago.Event
		for ev, err := range c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: task.ID}) {
			if err != nil {
				t.Fatalf("subscription failed after %d events: %v", len(evs), err)
			}
			evs = append(evs, ev)
			if len(evs) == 1 {
				srv.release("sub") // subscribed: let the task go on
			}
		}
		if len(evs) == 0 {
			t.Fatal("no events")
		}
		first, ok := evs[0].(*a2ago.Task)
		if !ok || first.ID != task.ID || first.Status.State.Terminal() {
			t.Fatalf("first event %s, want the running task %s", goEventKind(evs[0]), task.ID)
		}
		var text strings.Builder
		for _, ev := range evs[1:] {
			if au, ok := ev.(*a2ago.TaskArtifactUpdateEvent); ok {
				text.WriteString(goPartsText(au.Artifact.Parts))
			}
		}
		last, ok := evs[len(evs)-1].(*a2ago.TaskStatusUpdateEvent)
		if !ok || last.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("last event %s, want status(COMPLETED)", goEventKind(evs[len(evs)-1]))
		}
		if text.String() != heldText("sub") {
			t.Errorf("chunks after subscribing concatenate to %q, want %q", text.String(), heldText("sub"))
		}
	})

	t.Run("PushConfig", func(t *testing.T) {
		hook := startWebhook(t)
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage(echo.InputPrefix + " push")})
		if task.Status.State != a2ago.TaskStateInputRequired {
			t.Fatalf("state %s, want INPUT_REQUIRED", task.Status.State)
		}
		created, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: task.ID, URL: hook.URL, Token: "go-token"})
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == "" || created.TaskID != task.ID || created.URL != hook.URL || created.Token != "go-token" {
			t.Fatalf("created %+v", created)
		}
		got, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
		if err != nil {
			t.Fatal(err)
		}
		if *got != *created {
			t.Errorf("GetTaskPushConfig %+v, want %+v", got, created)
		}
		list, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 || list[0].ID != created.ID {
			t.Fatalf("ListTaskPushConfigs: %+v, want the one config", list)
		}

		follow := goTextMessage("pushed")
		follow.TaskID = task.ID
		if done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: follow}); done.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("follow-up: %s", done.Status.State)
		}
		// The 1.0 payload is a StreamResponse, which a2a-go's model reads.
		d := hook.await(t, "of the task's completion", func(d delivery) bool {
			var sr a2ago.StreamResponse
			if json.Unmarshal(d.Body, &sr) != nil {
				return false
			}
			st, ok := sr.Event.(*a2ago.TaskStatusUpdateEvent)
			return ok && st.TaskID == task.ID && st.Status.State == a2ago.TaskStateCompleted
		})
		if ct := d.Header.Get("Content-Type"); ct != "application/a2a+json" {
			t.Errorf("push Content-Type %q, want application/a2a+json", ct)
		}
		// The specification does not name the token's header. We send
		// X-A2A-Notification-Token (as a2a-python does); a2a-go's own
		// sender uses A2A-Notification-Token (see ourclient_a2ago_test.go),
		// so a webhook written with a2a-go does not see our token.
		if tok := d.Header.Get("X-A2A-Notification-Token"); tok != "go-token" {
			t.Errorf("X-A2A-Notification-Token %q, want go-token", tok)
		}

		if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
			t.Fatal(err)
		}
		list, err = c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(list) != 0 {
			t.Fatalf("after delete: %+v, %v; want none", list, err)
		}
	})

	t.Run("PushConfig/InSendMessage", func(t *testing.T) {
		hook := startWebhook(t)
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage("configured in the send"),
			Config:  &a2ago.SendMessageConfig{PushConfig: &a2ago.PushConfig{URL: hook.URL}},
		})
		hook.await(t, "of the task's completion", func(d delivery) bool {
			var sr a2ago.StreamResponse
			if json.Unmarshal(d.Body, &sr) != nil {
				return false
			}
			st, ok := sr.Event.(*a2ago.TaskStatusUpdateEvent)
			return ok && st.TaskID == task.ID && st.Status.State == a2ago.TaskStateCompleted
		})
	})

	t.Run("GetExtendedAgentCard", func(t *testing.T) {
		ec, _ := newGoClient(t, ctx, ext.URL, hc)
		got, err := ec.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "echo-extended" || len(got.Skills) != 2 || !got.Capabilities.ExtendedAgentCard {
			t.Errorf("extended card %+v, want echo-extended with 2 skills", got)
		}
		// The public card declares one but this server has none configured.
		if _, err := c.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{}); !errors.Is(err, a2ago.ErrExtendedCardNotConfigured) {
			t.Errorf("extended card not configured: got %v, want ErrExtendedCardNotConfigured", err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("done")})
		follow := goTextMessage("too late")
		follow.TaskID = done.ID
		negative := -1
		checks := []struct {
			name string
			err  error
			want error
		}{
			{"GetTask unknown", second(c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"CancelTask unknown", second(c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"CancelTask completed", second(c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: done.ID})), a2ago.ErrTaskNotCancelable},
			{"SendMessage to a completed task", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: follow})), a2ago.ErrUnsupportedOperation},
			{"SendMessage to an unknown task", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), TaskID: "no-such-task", Role: a2ago.MessageRoleUser, Parts: a2ago.ContentParts{a2ago.NewTextPart("x")}}})), a2ago.ErrTaskNotFound},
			{"SubscribeToTask completed", streamErr(c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: done.ID})), a2ago.ErrUnsupportedOperation},
			{"SubscribeToTask unknown", streamErr(c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"GetTask negative historyLength", second(c.GetTask(ctx, &a2ago.GetTaskRequest{ID: done.ID, HistoryLength: &negative})), a2ago.ErrInvalidParams},
			{"SendMessage without parts", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), Role: a2ago.MessageRoleUser}})), a2ago.ErrInvalidParams},
			{"SendMessage with an unaccepted media type", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), Role: a2ago.MessageRoleUser, Parts: a2ago.ContentParts{{Content: a2ago.Raw("png"), MediaType: "image/png"}}}})), a2ago.ErrUnsupportedContentType},
			{"GetTaskPushConfig unknown config", second(c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: done.ID, ID: "no-such-config"})), a2ago.ErrTaskNotFound},
			{"CreateTaskPushConfig refused URL", second(c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: done.ID, URL: "http://169.254.169.254/latest"})), a2ago.ErrInvalidParams},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, ch.want) {
				t.Errorf("%s: got %v, want %v", ch.name, ch.err, ch.want)
			}
		}

		// An A2A-Version this server does not speak.
		vc, _ := newGoClient(t, ctx, srv.URL, hc, a2aclient.WithCallInterceptors(versionOverride{version: "9.9"}))
		if _, err := vc.GetTask(ctx, &a2ago.GetTaskRequest{ID: done.ID}); !errors.Is(err, a2ago.ErrVersionNotSupported) {
			t.Errorf("A2A-Version 9.9: got %v, want ErrVersionNotSupported", err)
		}
		// The error's details survive: a2a-go decodes our ErrorInfo.
		_, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})
		var ae *a2ago.Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, "no-such-task") {
			t.Errorf("task not found: %#v, want an *a2a.Error naming the task", err)
		}
	})

	t.Run("Errors/Capabilities", func(t *testing.T) {
		// A server whose card declares neither streaming nor push, and
		// requires an extension.
		const ext = "urn:a2amesh:interop:required"
		bare := startOurServer(t, ourOptions{card: func(c *a2a.AgentCard) {
			c.Capabilities = a2a.AgentCapabilities{Extensions: []a2a.AgentExtension{{URI: ext, Required: true}}}
		}})
		bc, _ := newGoClient(t, ctx, bare.URL, hc)
		if _, err := bc.SendMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage("x")}); !errors.Is(err, a2ago.ErrExtensionSupportRequired) {
			t.Errorf("send without the required extension: got %v, want ErrExtensionSupportRequired", err)
		}
		extCtx := a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{"A2A-Extensions": {ext}})
		task := goSendTask(t, extCtx, bc, &a2ago.SendMessageRequest{Message: goTextMessage("with the extension")})
		if task.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("send with the extension: %s", task.Status.State)
		}
		if _, err := bc.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: task.ID, URL: "http://127.0.0.1:1/hook"}); !errors.Is(err, a2ago.ErrPushNotificationNotSupported) {
			t.Errorf("push on an agent without push: got %v, want ErrPushNotificationNotSupported", err)
		}
		if err := streamErr(bc.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: task.ID})); !errors.Is(err, a2ago.ErrUnsupportedOperation) {
			t.Errorf("subscribe on an agent without streaming: got %v, want ErrUnsupportedOperation", err)
		}
		// a2a-go falls back to SendMessage when the card does not stream.
		evs := goCollect(t, bc.SendStreamingMessage(extCtx, &a2ago.SendMessageRequest{Message: goTextMessage("fallback")}))
		if len(evs) != 1 || goEventKind(evs[0]) != "task(TASK_STATE_COMPLETED)" {
			t.Errorf("streaming fallback gave %d events, want the completed task", len(evs))
		}
	})
}

// goPollTask polls GetTask until the task is terminal, within the bound.
func goPollTask(t *testing.T, ctx context.Context, c *a2aclient.Client, id a2ago.TaskID) *a2ago.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		task, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: id})
		if err != nil {
			t.Fatalf("polling task %s: %v", id, err)
		}
		if task.Status.State.Terminal() {
			return task
		}
		pause(ctx)
	}
}

// second returns the error of a two-result call.
func second[T any](_ T, err error) error { return err }

// streamErr drains an a2a-go stream and returns its error (or nil).
func streamErr(seq func(yield func(a2ago.Event, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}
