package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

func intp(n int) *int { return &n }

func TestSendMessage(t *testing.T) {
	s := startEcho(t, serverOpts{})
	cases := []struct {
		name      string
		req       func(t *testing.T, c *client.Client) *a2a.SendMessageRequest
		wantState a2a.TaskState
		wantText  string // the echo artifact; "" for none
		check     func(t *testing.T, c *client.Client, task *a2a.Task)
	}{
		{
			name:      "blocking",
			req:       func(*testing.T, *client.Client) *a2a.SendMessageRequest { return sendReq("hello there") },
			wantState: a2a.TaskStateCompleted,
			wantText:  "hello there",
			check: func(t *testing.T, _ *client.Client, task *a2a.Task) {
				if len(task.History) != 1 || task.History[0].Text() != "hello there" || task.History[0].Role != a2a.RoleUser {
					t.Errorf("history = %+v, want the user's message", task.History)
				}
			},
		},
		{
			name: "blocking slow",
			req: func(*testing.T, *client.Client) *a2a.SendMessageRequest {
				return sendReq(echo.SlowPrefix + "take your time")
			},
			wantState: a2a.TaskStateCompleted,
			wantText:  echo.SlowPrefix + "take your time",
		},
		{
			name: "returnImmediately",
			req: func(*testing.T, *client.Client) *a2a.SendMessageRequest {
				return &a2a.SendMessageRequest{
					Message:       textMessage(echo.SlowPrefix + "later"),
					Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
				}
			},
			wantState: a2a.TaskStateSubmitted, // the task as its run started
			check: func(t *testing.T, c *client.Client, task *a2a.Task) {
				done := waitState(t, c, task.ID, a2a.TaskStateCompleted)
				if got := artifactText(done); got != echo.SlowPrefix+"later" {
					t.Errorf("artifact of the finished task = %q", got)
				}
			},
		},
		{
			name: "historyLength 0",
			req: func(*testing.T, *client.Client) *a2a.SendMessageRequest {
				return &a2a.SendMessageRequest{
					Message:       textMessage("no history"),
					Configuration: &a2a.SendMessageConfiguration{HistoryLength: intp(0)},
				}
			},
			wantState: a2a.TaskStateCompleted,
			wantText:  "no history",
			check: func(t *testing.T, _ *client.Client, task *a2a.Task) {
				if len(task.History) != 0 {
					t.Errorf("history has %d messages, want none", len(task.History))
				}
			},
		},
		{
			name: "historyLength 1 on a follow-up",
			req: func(t *testing.T, c *client.Client) *a2a.SendMessageRequest {
				first := sendTask(t, c, sendReq(echo.InputPrefix+"question"))
				m := textMessage("the answer")
				m.TaskID = first.ID
				return &a2a.SendMessageRequest{Message: m, Configuration: &a2a.SendMessageConfiguration{HistoryLength: intp(1)}}
			},
			wantState: a2a.TaskStateCompleted,
			wantText:  "the answer",
			check: func(t *testing.T, c *client.Client, task *a2a.Task) {
				if len(task.History) != 1 || task.History[0].Text() != "the answer" {
					t.Errorf("history = %+v, want only the last message", task.History)
				}
				full, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: task.ID})
				if err != nil {
					t.Fatal(err)
				}
				if len(full.History) != 3 {
					t.Errorf("full history has %d messages, want 3 (question, agent's request, answer)", len(full.History))
				}
			},
		},
		{
			name: "input required",
			req: func(*testing.T, *client.Client) *a2a.SendMessageRequest {
				return sendReq(echo.InputPrefix + "more please")
			},
			wantState: a2a.TaskStateInputRequired,
			check: func(t *testing.T, _ *client.Client, task *a2a.Task) {
				if task.Status.Message == nil || task.Status.Message.Role != a2a.RoleAgent {
					t.Errorf("status message = %+v, want the agent's question", task.Status.Message)
				}
			},
		},
		{
			name: "fail",
			req: func(*testing.T, *client.Client) *a2a.SendMessageRequest {
				return sendReq(echo.FailPrefix + "oops")
			},
			wantState: a2a.TaskStateFailed,
			check: func(t *testing.T, _ *client.Client, task *a2a.Task) {
				if task.Status.Message == nil || !strings.Contains(task.Status.Message.Text(), "oops") {
					t.Errorf("status message = %+v, want the failure", task.Status.Message)
				}
			},
		},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					task := sendTask(t, c, tc.req(t, c))
					if task.ID == "" || task.ContextID == "" {
						t.Errorf("task ids = %q, %q", task.ID, task.ContextID)
					}
					if task.Status.State != tc.wantState {
						t.Fatalf("state = %s, want %s", task.Status.State, tc.wantState)
					}
					if got := artifactText(task); got != tc.wantText {
						t.Errorf("echo artifact = %q, want %q", got, tc.wantText)
					}
					if tc.check != nil {
						tc.check(t, c, task)
					}
				})
			}
		})
	}
}

func TestSendStreamingMessage(t *testing.T) {
	s := startEcho(t, serverOpts{})
	const text = "a streamed echo, in ten pieces"
	cases := []struct {
		name      string
		text      string
		wantKinds []string // the events' types, in order
		wantState a2a.TaskState
		wantText  string
	}{
		{
			name:      "chunks",
			text:      text,
			wantKinds: slices.Concat([]string{"task", "status"}, slices.Repeat([]string{"artifact"}, 10), []string{"status"}),
			wantState: a2a.TaskStateCompleted,
			wantText:  text,
		},
		{
			name:      "slow",
			text:      echo.SlowPrefix + text,
			wantKinds: slices.Concat([]string{"task", "status"}, slices.Repeat([]string{"artifact"}, slowChunks), []string{"status"}),
			wantState: a2a.TaskStateCompleted,
			wantText:  echo.SlowPrefix + text,
		},
		{
			name:      "input required",
			text:      echo.InputPrefix + text,
			wantKinds: []string{"task", "status"},
			wantState: a2a.TaskStateInputRequired,
		},
		{
			name:      "fail",
			text:      echo.FailPrefix + text,
			wantKinds: []string{"task", "status"},
			wantState: a2a.TaskStateFailed,
		},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq(tc.text)))
					if err != nil {
						t.Fatalf("stream: %v (after %d events)", err, len(evs))
					}
					if got := kinds(evs); !slices.Equal(got, tc.wantKinds) {
						t.Fatalf("events = %v, want %v", got, tc.wantKinds)
					}
					checkConsecutive(t, evs, 1)
					task := evs[0].Event.(*a2a.Task)
					for i, ev := range evs {
						if id, _ := ev.TaskIDs(); id != task.ID {
							t.Errorf("event %d belongs to task %q, want %q", i, id, task.ID)
						}
					}
					if got := finalState(evs); got != tc.wantState {
						t.Errorf("final state = %s, want %s", got, tc.wantState)
					}
					if got := echoText(evs); got != tc.wantText {
						t.Errorf("streamed echo = %q, want %q", got, tc.wantText)
					}
				})
			}
			t.Run("follow-up", func(t *testing.T) {
				first, err := collect(c.SendStreamingMessage(context.Background(), sendReq(echo.InputPrefix+"q")))
				if err != nil {
					t.Fatal(err)
				}
				m := textMessage("streamed answer")
				m.TaskID, _ = first[0].TaskIDs()
				evs, err := collect(c.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: m}))
				if err != nil {
					t.Fatal(err)
				}
				// The task at work again, the answer's chunk, COMPLETED;
				// numbered after the first run's two events.
				if got, want := kinds(evs), []string{"task", "artifact", "status"}; !slices.Equal(got, want) {
					t.Fatalf("events = %v, want %v", got, want)
				}
				checkConsecutive(t, evs, 3)
				if got := echoText(evs); got != "streamed answer" || finalState(evs) != a2a.TaskStateCompleted {
					t.Errorf("echo %q, state %s", got, finalState(evs))
				}
			})
		})
	}
}

func kinds(evs []client.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch ev.Event.(type) {
		case *a2a.Task:
			out[i] = "task"
		case *a2a.Message:
			out[i] = "message"
		case *a2a.TaskStatusUpdateEvent:
			out[i] = "status"
		case *a2a.TaskArtifactUpdateEvent:
			out[i] = "artifact"
		default:
			out[i] = fmt.Sprintf("%T", ev.Event)
		}
	}
	return out
}

func TestGetTask(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			sent := completedTask(t, c, "get me")
			cases := []struct {
				name        string
				history     *int
				wantHistory int
			}{
				{"all history", nil, 1},
				{"historyLength 0", intp(0), 0},
				{"historyLength 5", intp(5), 1},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					task, err := c.GetTask(context.Background(), &a2a.GetTaskRequest{ID: sent.ID, HistoryLength: tc.history})
					if err != nil {
						t.Fatal(err)
					}
					if task.ID != sent.ID || task.ContextID != sent.ContextID || task.Status.State != a2a.TaskStateCompleted {
						t.Errorf("task = %s/%s %s, want %s/%s COMPLETED", task.ID, task.ContextID, task.Status.State, sent.ID, sent.ContextID)
					}
					if got := artifactText(task); got != "get me" {
						t.Errorf("artifact = %q", got)
					}
					if len(task.History) != tc.wantHistory {
						t.Errorf("history has %d messages, want %d", len(task.History), tc.wantHistory)
					}
				})
			}
		})
	}
}

func TestListTasks(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			contextID := "list-" + v + "-" + a2a.NewID()
			var made []string
			for _, text := range []string{"one", "two", echo.FailPrefix + "three"} {
				m := textMessage(text)
				m.ContextID = contextID
				task := sendTask(t, c, &a2a.SendMessageRequest{Message: m})
				if task.ContextID != contextID {
					t.Fatalf("task context = %q, want %q", task.ContextID, contextID)
				}
				made = append(made, task.ID)
			}
			list := func(t *testing.T, req *a2a.ListTasksRequest) *a2a.ListTasksResponse {
				t.Helper()
				req.ContextID = contextID
				resp, err := c.ListTasks(context.Background(), req)
				if err != nil {
					t.Fatalf("ListTasks: %v", err)
				}
				return resp
			}
			taskIDs := func(resp *a2a.ListTasksResponse) []string {
				var out []string
				for _, task := range resp.Tasks {
					out = append(out, task.ID)
				}
				slices.Sort(out)
				return out
			}
			t.Run("all", func(t *testing.T) {
				resp := list(t, &a2a.ListTasksRequest{})
				if want := slices.Sorted(slices.Values(made)); !slices.Equal(taskIDs(resp), want) || resp.TotalSize != 3 {
					t.Fatalf("tasks %v (total %d), want %v", taskIDs(resp), resp.TotalSize, want)
				}
				if resp.NextPageToken != "" {
					t.Errorf("nextPageToken = %q on the only page", resp.NextPageToken)
				}
				for _, task := range resp.Tasks {
					if len(task.Artifacts) != 0 {
						t.Errorf("task %s has artifacts without includeArtifacts", task.ID)
					}
				}
			})
			t.Run("includeArtifacts", func(t *testing.T) {
				resp := list(t, &a2a.ListTasksRequest{IncludeArtifacts: true})
				texts := map[string]bool{}
				for _, task := range resp.Tasks {
					texts[artifactText(task)] = true
				}
				if !texts["one"] || !texts["two"] {
					t.Errorf("artifacts %v, want one and two", texts)
				}
			})
			t.Run("status", func(t *testing.T) {
				resp := list(t, &a2a.ListTasksRequest{Status: a2a.TaskStateFailed})
				if got := taskIDs(resp); !slices.Equal(got, made[2:]) {
					t.Errorf("failed tasks %v, want %v", got, made[2:])
				}
			})
			t.Run("historyLength", func(t *testing.T) {
				for _, n := range []int{0, 1} {
					resp := list(t, &a2a.ListTasksRequest{HistoryLength: intp(n)})
					for _, task := range resp.Tasks {
						if len(task.History) != n {
							t.Errorf("historyLength %d: task %s has %d messages", n, task.ID, len(task.History))
						}
					}
				}
				for _, task := range list(t, &a2a.ListTasksRequest{}).Tasks {
					if len(task.History) != 1 {
						t.Errorf("task %s has %d messages, want its whole history (1)", task.ID, len(task.History))
					}
				}
			})
			t.Run("pages", func(t *testing.T) {
				var seen []string
				token := ""
				for page := 0; ; page++ {
					if page > 3 {
						t.Fatalf("more pages than tasks")
					}
					resp := list(t, &a2a.ListTasksRequest{PageSize: intp(2), PageToken: token})
					if len(resp.Tasks) > 2 || resp.TotalSize != 3 {
						t.Fatalf("page %d: %d tasks, total %d", page, len(resp.Tasks), resp.TotalSize)
					}
					for _, task := range resp.Tasks {
						seen = append(seen, task.ID)
					}
					if token = resp.NextPageToken; token == "" {
						break
					}
				}
				slices.Sort(seen)
				if want := slices.Sorted(slices.Values(made)); !slices.Equal(seen, want) {
					t.Errorf("pages hold %v, want %v", seen, want)
				}
			})
		})
	}
}

func TestCancelTask(t *testing.T) {
	s := startEcho(t, serverOpts{hold: true})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			cases := []struct {
				name  string
				start func(t *testing.T) *a2a.Task
			}{
				{"running slow task", func(t *testing.T) *a2a.Task { return startHeld(t, c, "cancel me") }},
				{"input required", func(t *testing.T) *a2a.Task { return sendTask(t, c, sendReq(echo.InputPrefix+"cancel me")) }},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					task := tc.start(t)
					got, err := c.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: task.ID})
					if err != nil {
						t.Fatalf("CancelTask: %v", err)
					}
					if got.ID != task.ID || got.Status.State != a2a.TaskStateCanceled {
						t.Fatalf("CancelTask = %s %s, want %s CANCELED", got.ID, got.Status.State, task.ID)
					}
					// Canceling again returns the canceled task.
					again, err := c.CancelTask(context.Background(), &a2a.CancelTaskRequest{ID: task.ID})
					if err != nil || again.Status.State != a2a.TaskStateCanceled {
						t.Fatalf("second CancelTask = %v, %v", again, err)
					}
					if got := waitState(t, c, task.ID, a2a.TaskStateCanceled); got.ID != task.ID {
						t.Fatal(got.ID)
					}
				})
			}
		})
	}
}

func TestSubscribeToTask(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			s := startEcho(t, serverOpts{hold: true})
			c := dial(t, s, v)
			task := startHeld(t, c, "follow me")
			// Held after WORKING: the snapshot is events 1 and 2.
			waitState(t, c, task.ID, a2a.TaskStateWorking)
			stream := c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID})
			var evs []client.Event
			for ev, err := range stream {
				if err != nil {
					t.Fatalf("stream: %v (after %d events)", err, len(evs))
				}
				if len(evs) == 0 {
					// The task as it is now: let it go on.
					s.release()
				}
				evs = append(evs, ev)
			}
			first, ok := evs[0].Event.(*a2a.Task)
			if !ok || first.ID != task.ID {
				t.Fatalf("first event = %T %v, want task %s", evs[0].Event, evs[0].Event, task.ID)
			}
			if first.Status.State != a2a.TaskStateWorking {
				t.Errorf("first event's state = %s, want WORKING (the held task)", first.Status.State)
			}
			// The snapshot reflects events 1 (task) and 2 (WORKING).
			checkConsecutive(t, evs, 2)
			if got, want := kinds(evs), slices.Concat([]string{"task"}, slices.Repeat([]string{"artifact"}, slowChunks), []string{"status"}); !slices.Equal(got, want) {
				t.Errorf("events = %v, want %v", got, want)
			}
			if got := echoText(evs); got != echo.SlowPrefix+"follow me" {
				t.Errorf("echo = %q", got)
			}
			if finalState(evs) != a2a.TaskStateCompleted {
				t.Errorf("final state = %s", finalState(evs))
			}
		})
	}
}

func TestSubscribeToInterruptedTask(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			task := sendTask(t, c, sendReq(echo.InputPrefix+"wait"))
			evs, err := collect(c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}))
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || finalState(evs) != a2a.TaskStateInputRequired {
				t.Fatalf("events %v, want the INPUT_REQUIRED task alone", kinds(evs))
			}
		})
	}
}

func TestResubscribe(t *testing.T) {
	s := startEcho(t, serverOpts{})
	const text = "replay what follows"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			all, err := collect(c.SendStreamingMessage(context.Background(), sendReq(text)))
			if err != nil || len(all) != 13 {
				t.Fatalf("stream: %d events, %v", len(all), err)
			}
			taskID, _ := all[0].TaskIDs()
			for _, after := range []int{1, 2, 5, 12} {
				t.Run(fmt.Sprintf("after %d", after), func(t *testing.T) {
					evs, err := collect(c.Resubscribe(context.Background(), taskID, all[after-1].ID))
					if err != nil {
						t.Fatal(err)
					}
					checkConsecutive(t, evs, after+1)
					if got, want := kinds(evs), kinds(all[after:]); !slices.Equal(got, want) {
						t.Fatalf("replayed %v, want %v", got, want)
					}
					if got, want := echoText(evs), echoText(all[after:]); got != want {
						t.Errorf("replayed echo %q, want %q", got, want)
					}
				})
			}
		})
	}
}

func TestResubscribeFollowsRunningTask(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			s := startEcho(t, serverOpts{hold: true})
			c := dial(t, s, v)
			task := startHeld(t, c, "live")
			var evs []client.Event
			for ev, err := range c.Resubscribe(context.Background(), task.ID, "1") {
				if err != nil {
					t.Fatal(err)
				}
				if len(evs) == 0 {
					s.release()
				}
				evs = append(evs, ev)
			}
			checkConsecutive(t, evs, 2)
			if got, want := kinds(evs), slices.Concat([]string{"status"}, slices.Repeat([]string{"artifact"}, slowChunks), []string{"status"}); !slices.Equal(got, want) {
				t.Errorf("events = %v, want %v", got, want)
			}
			if got := echoText(evs); got != echo.SlowPrefix+"live" {
				t.Errorf("echo = %q", got)
			}
		})
	}
}

// webhook is an httptest server on 127.0.0.1 that records the push
// notifications it receives.
type webhook struct {
	*httptest.Server
	mu    sync.Mutex
	got   []delivery
	notes chan struct{}
}

type delivery struct {
	Auth, Token, ContentType string
	Body                     []byte
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{notes: make(chan struct{}, 1000)}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		w.got = append(w.got, delivery{
			Auth: r.Header.Get("Authorization"), Token: r.Header.Get("X-A2A-Notification-Token"),
			ContentType: r.Header.Get("Content-Type"), Body: body,
		})
		w.mu.Unlock()
		w.notes <- struct{}{}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhook) deliveries() []delivery {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got)
}

// waitFinal waits for the delivery that tells the task completed.
func (w *webhook) waitCompleted(t *testing.T, version string) []delivery {
	t.Helper()
	want := `"TASK_STATE_COMPLETED"`
	if version == a2a.Version03 {
		want = `"completed"`
	}
	timeout := time.After(10 * time.Second)
	for {
		for _, d := range w.deliveries() {
			if strings.Contains(string(d.Body), want) {
				return w.deliveries()
			}
		}
		select {
		case <-w.notes:
		case <-timeout:
			t.Fatalf("no delivery of the completed task; got %d deliveries", len(w.deliveries()))
		}
	}
}

func TestPushNotificationConfigs(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			hook := newWebhook(t)
			s := startEcho(t, serverOpts{hold: true, config: allowLoopbackPush})
			c := dial(t, s, v)
			ctx := context.Background()
			task := startHeld(t, c, "push me")

			cfg := &a2a.TaskPushNotificationConfig{
				TaskID: task.ID, URL: hook.URL + "/hook", Token: "tok-" + v,
				Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "webhook-secret"},
			}
			created, err := c.CreateTaskPushNotificationConfig(ctx, cfg)
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if created.ID == "" || created.TaskID != task.ID || created.URL != cfg.URL || created.Token != cfg.Token {
				t.Fatalf("Create = %+v", created)
			}
			if a := created.Authentication; a == nil || a.Scheme != "Bearer" || a.Credentials != "webhook-secret" {
				t.Errorf("created authentication = %+v", a)
			}
			second, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "second", URL: hook.URL + "/other"})
			if err != nil || second.ID != "second" {
				t.Fatalf("Create second = %+v, %v", second, err)
			}

			got, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: created.ID})
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got.ID != created.ID || got.URL != cfg.URL || got.TaskID != task.ID || got.Authentication == nil || got.Authentication.Credentials != "webhook-secret" {
				t.Errorf("Get = %+v", got)
			}
			list, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			var listed []string
			for _, lc := range list.Configs {
				listed = append(listed, lc.ID)
			}
			if slices.Sort(listed); !slices.Equal(listed, slices.Sorted(slices.Values([]string{created.ID, "second"}))) {
				t.Errorf("List = %v, want %s and second", listed, created.ID)
			}

			// The task goes on: its events reach both webhooks, with the
			// configured Authorization where there is one.
			s.release()
			for _, d := range hook.waitCompleted(t, v) {
				if d.Token == cfg.Token && d.Auth != "Bearer webhook-secret" {
					t.Errorf("delivery with token %q has Authorization %q, want %q", d.Token, d.Auth, "Bearer webhook-secret")
				}
				if d.Token == "" && d.Auth != "" {
					t.Errorf("delivery to the second webhook has Authorization %q", d.Auth)
				}
			}
			var authorized int
			for _, d := range hook.deliveries() {
				if d.Auth == "Bearer webhook-secret" {
					authorized++
				}
			}
			if authorized == 0 {
				t.Errorf("no delivery carried the configured Authorization")
			}

			if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			list, err = c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
			if err != nil || len(list.Configs) != 1 || list.Configs[0].ID != "second" {
				t.Fatalf("List after Delete = %+v, %v", list, err)
			}
			if _, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: created.ID}); err == nil {
				t.Errorf("Get of a deleted config succeeded")
			}
		})
	}
}

func TestPushNotificationConfigInSend(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			hook := newWebhook(t)
			s := startEcho(t, serverOpts{config: allowLoopbackPush})
			c := dial(t, s, v)
			task := sendTask(t, c, &a2a.SendMessageRequest{
				Message: textMessage("push with the send"),
				Configuration: &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{
					URL: hook.URL, Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "from-send"},
				}},
			})
			for _, d := range hook.waitCompleted(t, v) {
				if d.Auth != "Bearer from-send" {
					t.Errorf("delivery Authorization = %q, want %q", d.Auth, "Bearer from-send")
				}
			}
			list, err := c.ListTaskPushNotificationConfigs(context.Background(), &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
			if err != nil || len(list.Configs) != 1 || list.Configs[0].URL != hook.URL {
				t.Fatalf("List = %+v, %v", list, err)
			}
		})
	}
}

func TestGetExtendedAgentCard(t *testing.T) {
	var extended *a2a.AgentCard
	s := startEcho(t, serverOpts{config: func(cfg *server.Config) {
		cfg.Card.Capabilities.ExtendedAgentCard = true
		ext := *cfg.Card
		ext.Name = "echo (extended)"
		ext.Skills = append(slices.Clone(ext.Skills), a2a.AgentSkill{
			ID: "secret", Name: "Secret", Description: "Only for authenticated clients.", Tags: []string{"private"},
		})
		extended = &ext
		cfg.ExtendedCard = extended
	}})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			if !c.Card().Capabilities.ExtendedAgentCard {
				t.Fatalf("the public card does not declare the extended card")
			}
			card, err := c.GetExtendedAgentCard(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if card.Name != extended.Name || len(card.Skills) != 2 || card.Skills[1].ID != "secret" {
				b, _ := json.Marshal(card)
				t.Fatalf("extended card = %s", b)
			}
			if len(card.SupportedInterfaces) != 2 || card.SupportedInterfaces[0].URL != s.URL {
				t.Errorf("extended card interfaces = %+v", card.SupportedInterfaces)
			}
		})
	}
}

// TestListTasks03KeepsHistoryLengthZero: ListTasks with historyLength 0
// asks for no history, and over 0.3 the zero is sent, not dropped.
func TestListTasks03KeepsHistoryLengthZero(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			m := textMessage("history")
			m.ContextID = "history-" + a2a.NewID()
			sendTask(t, c, &a2a.SendMessageRequest{Message: m})
			resp, err := c.ListTasks(context.Background(), &a2a.ListTasksRequest{ContextID: m.ContextID, HistoryLength: intp(0)})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.Tasks) != 1 || len(resp.Tasks[0].History) != 0 {
				t.Fatalf("historyLength 0: %d tasks, first with %d messages; want no history", len(resp.Tasks), len(resp.Tasks[0].History))
			}
		})
	}
}
