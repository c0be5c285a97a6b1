package interop

// Our client (a2a/client) against a2a-go v2.4.0's server
// (bench/peers/goecho) on both wires: A2A 1.0 at the base URL and A2A
// 0.3 at "v03/" under it, both named in the peer's card.
//
// a2a-go deviations from the A2A specification (and from JSON-RPC 2.0)
// observed here are asserted as documented peer quirks, each marked
// "PEER QUIRK" below, so that a fix on their side (or a change on ours)
// shows up as a failing test:
//
//  1. It accepts any A2A-Version header, even versions it does not speak
//     (1.0 §3.6 asks for VersionNotSupportedError, -32009).
//  2. SubscribeToTask on a task in a terminal state answers TaskNotFound
//     (-32001) instead of UnsupportedOperationError (-32004); it answers
//     -32001 for any task without an execution running in the process.
//  3. SendMessage to a task in a terminal state answers InvalidParams
//     (-32602) instead of UnsupportedOperationError (-32004) (CORE-SEND-002).
//  4. A successful DeleteTaskPushNotificationConfig response has no
//     "result" member ({"jsonrpc":"2.0","id":…}), which JSON-RPC 2.0 §5
//     requires on success (1.0 expects {}, 0.3 null). Our client rejects
//     that response as "not a JSON-RPC response", although the config is
//     deleted.
//  5. GetTaskPushNotificationConfig for an unknown config id answers
//     InternalError (-32603) instead of a not-found error (-32001).
//  6. Push notifications are always the 1.0 StreamResponse JSON, even to a
//     webhook registered over 0.3, whose specification sends the Task; they
//     go as application/json with the token in A2A-Notification-Token (we
//     send X-A2A-Notification-Token, as a2a-python does; the specification
//     names no header).
//  7. GetExtendedAgentCard without a "params" member (JSON-RPC 2.0 lets a
//     request omit it) answers ParseError (-32700): the body parses fine.
//  8. It does not check message parts against the card's input modes: an
//     image/png part is accepted by an agent whose card lists only
//     text/plain (no ContentTypeNotSupportedError, -32005).
//  9. Its 0.3 server has no tasks/list, although a2a-go's own 0.3 client
//     (v0.3.15) calls it: the method fails with MethodNotFound (-32601).
//     That is not a deviation (0.3 does not define tasks/list).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/services/echo"
)

// dialGoEcho returns our client for the goecho peer at base, speaking
// version ("" for the client's own choice).
func dialGoEcho(t *testing.T, ctx context.Context, base, version string, hc *http.Client) *client.Client {
	t.Helper()
	c, err := client.New(ctx, base, client.Config{HTTPClient: hc, ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client.New(%s): %v", base, err)
	}
	return c
}

func send(t *testing.T, ctx context.Context, c *client.Client, req *a2a.SendMessageRequest) *a2a.Task {
	t.Helper()
	ev, err := c.SendMessage(ctx, req)
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage returned a %T, want *a2a.Task", ev)
	}
	return task
}

func textRequest(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)}
}

func artifactText(task *a2a.Task) string {
	for i := range task.Artifacts {
		if task.Artifacts[i].ArtifactID == echo.ArtifactID {
			return task.Artifacts[i].Text()
		}
	}
	return ""
}

func eventKind(ev a2a.Event) string {
	switch e := ev.(type) {
	case *a2a.Task:
		return "task(" + string(e.Status.State) + ")"
	case *a2a.TaskStatusUpdateEvent:
		return "status(" + string(e.Status.State) + ")"
	case *a2a.TaskArtifactUpdateEvent:
		return "artifact"
	case *a2a.Message:
		return "message"
	}
	return fmt.Sprintf("%T", ev)
}

// echoText is the text of the echo artifact as the events build it: a task
// snapshot or an artifact update that does not append starts it again.
func echoText(evs []client.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		switch e := ev.Event.(type) {
		case *a2a.Task:
			if art := artifactText(e); art != "" {
				b.Reset()
				b.WriteString(art)
			}
		case *a2a.TaskArtifactUpdateEvent:
			if e.Artifact.ArtifactID != echo.ArtifactID {
				continue
			}
			if !e.Append {
				b.Reset()
			}
			b.WriteString(e.Artifact.Text())
		}
	}
	return b.String()
}

// codeOf returns the protocol error code err carries, or 0.
func codeOf(err error) a2a.ErrorCode {
	var e *a2a.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// pollTask polls GetTask until the task is terminal, within the bound.
func pollTask(t *testing.T, ctx context.Context, c *client.Client, id string) *a2a.Task {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if ctx.Err() != nil {
			t.Fatalf("task %s not terminal within %s", id, wait)
		}
		if err != nil {
			t.Fatalf("polling task %s: %v", id, err)
		}
		if task.Status.State.Terminal() {
			return task
		}
		pause(ctx)
	}
}

// versionRewriter sends every request with another A2A-Version header.
type versionRewriter struct {
	base    http.RoundTripper
	version string
}

func (r versionRewriter) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("A2A-Version", r.version)
	return r.base.RoundTrip(req)
}

func TestOurClientAgainstA2AGo(t *testing.T) {
	for _, version := range []string{a2a.Version, a2a.Version03} {
		t.Run(version, func(t *testing.T) { testOurClientAgainstA2AGo(t, version) })
	}
}

func testOurClientAgainstA2AGo(t *testing.T, version string) {
	ctx := testContext(t)
	base := startGoEcho(t, true)
	hc := newHTTPClient(t)
	var c *client.Client
	if version == a2a.Version {
		// Without a ProtocolVersion the client picks the newest wire the
		// card offers.
		c = dialGoEcho(t, ctx, base, "", hc)
	} else {
		c = dialGoEcho(t, ctx, base, version, hc)
	}
	v03 := version == a2a.Version03

	t.Run("Card", func(t *testing.T) {
		wantURL := base
		if v03 {
			wantURL = base + "v03/"
		}
		if c.ProtocolVersion() != version || c.URL() != wantURL {
			t.Fatalf("client speaks %s at %s, want %s at %s", c.ProtocolVersion(), c.URL(), version, wantURL)
		}
		card := c.Card()
		if card.Name != "goecho" || !card.Capabilities.Streaming || !card.Capabilities.PushNotifications || !card.Capabilities.ExtendedAgentCard {
			t.Errorf("our client read the peer's card as %+v", card)
		}
	})

	t.Run("SendMessage", func(t *testing.T) {
		task := send(t, ctx, c, textRequest("hello a2a-go"))
		if task.Status.State != a2a.TaskStateCompleted || artifactText(task) != "hello a2a-go" {
			t.Fatalf("task %s with echo %q", task.Status.State, artifactText(task))
		}
		if len(task.History) == 0 || task.History[0].Role != a2a.RoleUser || task.History[0].Text() != "hello a2a-go" {
			t.Errorf("history %+v, want the user's message first", task.History)
		}
	})

	t.Run("SendMessage/ReturnImmediately", func(t *testing.T) {
		retry(t, 5, "returnImmediately", func() bool {
			req := textRequest(echo.SlowPrefix + " later")
			req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
			task := send(t, ctx, c, req)
			if task.Status.State.Terminal() {
				return true // the 100 ms task ended before the reply was made
			}
			final := pollTask(t, ctx, c, task.ID)
			if final.Status.State != a2a.TaskStateCompleted || artifactText(final) != req.Message.Text() {
				t.Errorf("the task ended %s with echo %q", final.Status.State, artifactText(final))
			}
			return false
		})
	})

	t.Run("SendMessage/InputRequired", func(t *testing.T) {
		task := send(t, ctx, c, textRequest(echo.InputPrefix+" more"))
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s, want INPUT_REQUIRED", task.Status.State)
		}
		follow := textRequest("the answer")
		follow.Message.TaskID, follow.Message.ContextID = task.ID, task.ContextID
		done := send(t, ctx, c, follow)
		if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted || artifactText(done) != "the answer" {
			t.Errorf("follow-up: %s %s echo %q", done.ID, done.Status.State, artifactText(done))
		}
	})

	t.Run("SendMessage/Fail", func(t *testing.T) {
		task := send(t, ctx, c, textRequest(echo.FailPrefix+" on purpose"))
		if task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil || !strings.Contains(task.Status.Message.Text(), "on purpose") {
			t.Errorf("state %s, status message %+v", task.Status.State, task.Status.Message)
		}
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		var evs []client.Event
		for ev, err := range c.SendStreamingMessage(ctx, textRequest(streamText)) {
			if err != nil {
				t.Fatalf("stream failed after %d events: %v", len(evs), err)
			}
			evs = append(evs, ev)
		}
		kinds := make([]string, len(evs))
		for i, ev := range evs {
			kinds[i] = eventKind(ev.Event)
		}
		want := []string{"task(TASK_STATE_SUBMITTED)", "status(TASK_STATE_WORKING)"}
		for range 10 {
			want = append(want, "artifact")
		}
		want = append(want, "status(TASK_STATE_COMPLETED)")
		if !slices.Equal(kinds, want) {
			t.Fatalf("events %v\nwant   %v", kinds, want)
		}
		for i, ev := range evs[2:12] {
			au := ev.Event.(*a2a.TaskArtifactUpdateEvent)
			if au.Append != (i > 0) || au.LastChunk != (i == 9) {
				t.Errorf("chunk %d: append=%v lastChunk=%v", i, au.Append, au.LastChunk)
			}
		}
		if got := echoText(evs); got != streamText {
			t.Errorf("chunks concatenate to %q, want %q", got, streamText)
		}
	})

	t.Run("GetTask", func(t *testing.T) {
		sent := send(t, ctx, c, textRequest("get me"))
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: sent.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != sent.ID || got.Status.State != a2a.TaskStateCompleted || artifactText(got) != "get me" || len(got.History) == 0 {
			t.Fatalf("GetTask: %s %s echo %q, %d history", got.ID, got.Status.State, artifactText(got), len(got.History))
		}
		for _, n := range []int{0, 1} {
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: sent.ID, HistoryLength: &n})
			if err != nil {
				t.Fatal(err)
			}
			if len(got.History) != n {
				t.Errorf("historyLength %d: %d messages", n, len(got.History))
			}
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		if v03 {
			// PEER QUIRK 9: no tasks/list on a2a-go's 0.3 server.
			_, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
			if !errors.Is(err, a2a.ErrMethodNotFound) {
				t.Fatalf("tasks/list on a2a-go's 0.3 server: got %v, want ErrMethodNotFound", err)
			}
			return
		}
		checkListTasks(t, ctx, c)
	})

	t.Run("CancelTask", func(t *testing.T) {
		retry(t, 5, "CancelTask", func() bool {
			req := textRequest(echo.SlowPrefix + " cancel me")
			req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
			task := send(t, ctx, c, req)
			canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if errors.Is(err, a2a.ErrTaskNotCancelable) {
				return true // it completed first
			}
			if err != nil {
				t.Fatalf("CancelTask: %v", err)
			}
			if canceled.ID != task.ID || canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("CancelTask: %s %s", canceled.ID, canceled.Status.State)
			}
			if got := pollTask(t, ctx, c, task.ID); got.Status.State != a2a.TaskStateCanceled {
				t.Errorf("GetTask after cancel: %s", got.Status.State)
			}
			return false
		})
	})

	t.Run("SubscribeToTask", func(t *testing.T) {
		retry(t, 5, "SubscribeToTask", func() bool {
			req := textRequest(echo.SlowPrefix + " follow me")
			req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
			task := send(t, ctx, c, req)
			var evs []client.Event
			for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					// PEER QUIRK 2: a task that has just ended is "not found".
					if len(evs) == 0 && errors.Is(err, a2a.ErrTaskNotFound) {
						return true
					}
					t.Fatalf("subscription failed after %d events: %v", len(evs), err)
				}
				evs = append(evs, ev)
			}
			if len(evs) == 0 {
				t.Fatal("no events")
			}
			if first, ok := evs[0].Event.(*a2a.Task); !ok || first.ID != task.ID {
				t.Fatalf("first event %s, want the task %s", eventKind(evs[0].Event), task.ID)
			}
			if s, _ := a2a.StateOf(evs[len(evs)-1].Event); s != a2a.TaskStateCompleted {
				t.Fatalf("last event %s, want status(COMPLETED)", eventKind(evs[len(evs)-1].Event))
			}
			if got := echoText(evs); got != req.Message.Text() {
				t.Errorf("the events build the echo %q, want %q", got, req.Message.Text())
			}
			return false
		})
	})

	t.Run("PushConfig", func(t *testing.T) {
		hook := startWebhook(t)
		task := send(t, ctx, c, textRequest(echo.InputPrefix+" push"))
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s, want INPUT_REQUIRED", task.Status.State)
		}
		created, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: hook.URL, Token: "our-token"})
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == "" || created.TaskID != task.ID || created.URL != hook.URL || created.Token != "our-token" {
			t.Fatalf("created %+v", created)
		}
		got, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: created.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != created.ID || got.TaskID != task.ID || got.URL != hook.URL || got.Token != "our-token" {
			t.Errorf("get %+v, want %+v", got, created)
		}
		list, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Configs) != 1 || list.Configs[0].ID != created.ID {
			t.Fatalf("list %+v", list)
		}

		follow := textRequest("pushed")
		follow.Message.TaskID = task.ID
		if done := send(t, ctx, c, follow); done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("follow-up: %s", done.Status.State)
		}
		// PEER QUIRK 6: the 1.0 payload whatever the wire the webhook
		// was registered on, as application/json with the token in
		// A2A-Notification-Token.
		d := hook.await(t, "of the task's completion", func(d delivery) bool {
			ev, err := decodeStreamResponse(d.Body)
			if err != nil {
				return false
			}
			st, ok := ev.(*a2a.TaskStatusUpdateEvent)
			return ok && st.TaskID == task.ID && st.Status.State == a2a.TaskStateCompleted
		})
		if ct := d.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("push Content-Type %q, want a2a-go's application/json", ct)
		}
		if tok, xtok := d.Header.Get("A2A-Notification-Token"), d.Header.Get("X-A2A-Notification-Token"); tok != "our-token" || xtok != "" {
			t.Errorf("tokens A2A-Notification-Token=%q X-A2A-Notification-Token=%q, want our-token in the first only", tok, xtok)
		}

		// PEER QUIRK 4: the deletion's response has no result member,
		// which our client lets pass where the result means nothing.
		err = c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: created.ID})
		if err != nil {
			t.Errorf("delete: %v", err)
		}
		list, err = c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
		if err != nil || len(list.Configs) != 0 {
			t.Fatalf("after delete: %+v, %v; want no configs", list, err)
		}
	})

	t.Run("GetExtendedAgentCard", func(t *testing.T) {
		// PEER QUIRK 7 does not bite: our client always sends params on 1.0.
		card, err := c.GetExtendedAgentCard(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if card.Name != "goecho-extended" || !card.Capabilities.ExtendedAgentCard {
			t.Errorf("extended card %+v", card)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		done := send(t, ctx, c, textRequest("done"))
		late := textRequest("too late")
		late.Message.TaskID = done.ID
		checks := []struct {
			name string
			err  error
			want error
		}{
			{"GetTask unknown", second(c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})), a2a.ErrTaskNotFound},
			{"CancelTask unknown", second(c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "no-such-task"})), a2a.ErrTaskNotFound},
			{"CancelTask completed", second(c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: done.ID})), a2a.ErrTaskNotCancelable},
			{"SubscribeToTask unknown", ourStreamErr(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "no-such-task"})), a2a.ErrTaskNotFound},
			{"CreateTaskPushNotificationConfig unknown task", second(c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: "no-such-task", URL: "http://127.0.0.1:1/hook"})), a2a.ErrTaskNotFound},
			// PEER QUIRK 3: -32602 where the specification says -32004.
			{"SendMessage to a completed task (peer quirk)", second(c.SendMessage(ctx, late)), a2a.ErrInvalidParams},
			// PEER QUIRK 5: -32603 for a config that does not exist.
			{"GetTaskPushNotificationConfig unknown config (peer quirk)", second(c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: done.ID, ID: "no-such-config"})), a2a.ErrInternal},
		}
		for _, ch := range checks {
			if !errors.Is(ch.err, ch.want) {
				t.Errorf("%s: got %v (code %d), want %v", ch.name, ch.err, codeOf(ch.err), ch.want)
			}
		}

		// PEER QUIRK 2: -32001 where the specification says -32004. a2a-go
		// unregisters a finished execution shortly after its reply, and
		// until then serves a subscription to the finished task, so the
		// error is awaited.
		err := eventuallyErr(t, ctx, "SubscribeToTask on a completed task", func() error {
			return ourStreamErr(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: done.ID}))
		})
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("SubscribeToTask completed (peer quirk): got %v (code %d), want %v", err, codeOf(err), a2a.ErrTaskNotFound)
		}

		// PEER QUIRK 8: a media type outside the card's input modes.
		png := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.RoleUser, a2a.RawPart([]byte("png"), "image/png", "x.png"))}
		if task := send(t, ctx, c, png); task.Status.State != a2a.TaskStateCompleted {
			t.Errorf("image/png part: %s, want a2a-go to accept it", task.Status.State)
		}
	})

	if !v03 {
		t.Run("UnknownVersionAccepted", func(t *testing.T) {
			// PEER QUIRK 1: A2A-Version 9.9 is served as if it were 1.0.
			vc := dialGoEcho(t, ctx, base, "", &http.Client{Transport: versionRewriter{base: hc.Transport, version: "9.9"}})
			task := send(t, ctx, vc, textRequest("from the future"))
			if task.Status.State != a2a.TaskStateCompleted {
				t.Errorf("with A2A-Version 9.9: %s", task.Status.State)
			}
		})
	}
}

// checkListTasks checks ListTasks paging and filtering through c.
func checkListTasks(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	contextID := a2a.NewID()
	var ids []string
	for i := range 3 {
		req := textRequest(fmt.Sprintf("list %d", i))
		req.Message.ContextID = contextID
		ids = append(ids, send(t, ctx, c, req).ID)
	}
	two := 2
	page1, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: &two, IncludeArtifacts: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(page1.Tasks) != 2 || page1.TotalSize != 3 || page1.NextPageToken == "" {
		t.Fatalf("first page: %d tasks, total %d, next %q", len(page1.Tasks), page1.TotalSize, page1.NextPageToken)
	}
	if artifactText(page1.Tasks[0]) == "" {
		t.Error("includeArtifacts: the first task has no echo artifact")
	}
	page2, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, PageSize: &two, PageToken: page1.NextPageToken})
	if err != nil {
		t.Fatal(err)
	}
	if len(page2.Tasks) != 1 || page2.NextPageToken != "" {
		t.Fatalf("second page: %d tasks, next %q", len(page2.Tasks), page2.NextPageToken)
	}
	var listed []string
	for _, task := range append(page1.Tasks, page2.Tasks...) {
		listed = append(listed, task.ID)
	}
	if slices.Sort(listed); !slices.Equal(listed, slices.Sorted(slices.Values(ids))) {
		t.Errorf("listed %v, want %v", listed, ids)
	}
	failed, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: contextID, Status: a2a.TaskStateFailed})
	if err != nil {
		t.Fatal(err)
	}
	if len(failed.Tasks) != 0 {
		t.Errorf("status filter FAILED: %d tasks, want none", len(failed.Tasks))
	}
}

// eventuallyErr calls fn until it returns an error, within the bound, and
// returns that error.
func eventuallyErr(t *testing.T, ctx context.Context, what string, fn func() error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		if err := fn(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			t.Fatalf("%s kept succeeding for %s", what, wait)
		}
		pause(ctx)
	}
}

// decodeStreamResponse decodes a 1.0 StreamResponse.
func decodeStreamResponse(b []byte) (a2a.Event, error) {
	var sr a2a.StreamResponse
	if err := json.Unmarshal(b, &sr); err != nil {
		return nil, err
	}
	return sr.Event()
}

// ourStreamErr drains one of our client's streams and returns its error.
func ourStreamErr(seq func(yield func(client.Event, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}
