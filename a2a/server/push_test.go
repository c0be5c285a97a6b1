package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/push/pushtest"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
)

// waitGoroutines waits until at most n goroutines run, failing the test
// with the count if that does not happen within a bounded time.
func waitGoroutines(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := runtime.NumGoroutine()
		if got <= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d goroutines, want at most %d", what, got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStalledWebhooks gives hundreds of tasks a webhook that accepts and
// never answers: the webhook never holds more connections than the
// sender's per-destination bound, goroutines do not grow with the tasks,
// the server answers other requests meanwhile, and once the webhook fails
// its breaker opens and later tasks' deliveries do not connect.
func TestStalledWebhooks(t *testing.T) {
	const (
		n         = 300
		perHost   = 4
		pending   = 8
		threshold = 4
	)
	hook := pushtest.NewStalled(t)
	logs := pushtest.NewLogs()
	h := newHandler(t, new(echo.Executor), func(c *server.Config) {
		c.PushSender = &push.Sender{
			Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}, Logger: logs.Logger(),
			// The webhook is released by the test, not by a timeout.
			Timeout: time.Minute, MaxAttempts: 2, BaseBackoff: time.Millisecond,
			MaxConnsPerHost: perHost, MaxPendingPerHost: pending,
			BreakerThreshold: threshold, BreakerCooldown: time.Hour,
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	withHook := func(text string) *a2a.SendMessageRequest {
		req := send(text)
		req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hook.URL}}
		return req
	}
	baseline := runtime.NumGoroutine()

	var last *a2a.Task
	for i := range n {
		ev, err := h.SendMessage(ctx, withHook("x"))
		if last = mustTask(t, ev, err); last.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("task %d: state %s", i, last.Status.State)
		}
	}
	if err := hook.WaitOpen(ctx, perHost); err != nil {
		t.Fatalf("the webhook never had %d connections open: %v", perHost, err)
	}
	// The pending deliveries' goroutines, the connections' (two each in
	// the transport, one in the webhook) and a margin; not one per task.
	waitGoroutines(t, baseline+pending+3*perHost+20, "while the webhook hangs")

	// Meanwhile the server serves.
	if _, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: last.ID}); err != nil {
		t.Fatalf("GetTask while the webhook hangs: %v", err)
	}
	if task := sendTask(t, h, send("y")); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("a send while the webhook hangs: state %s", task.Status.State)
	}

	hook.Release()
	if err := logs.Wait(ctx, "push: webhook destination keeps failing; notifications to it fail at once until a probe after the cooldown succeeds"); err != nil {
		t.Fatalf("the breaker never opened: %v", err)
	}
	waitGoroutines(t, baseline+10, "after the webhook failed")
	_, most, _ := hook.Counts()
	if most > perHost {
		t.Errorf("the webhook had %d connections open at once, want at most %d", most, perHost)
	}

	// Deliveries after the breaker opened fail at once, without
	// connecting: the webhook only ever saw the attempts that opened the
	// breaker and those in flight when it did.
	const failedFast = "push: notification not attempted"
	before := logs.Count(failedFast)
	for range 20 {
		sendTask(t, h, withHook("x"))
	}
	waitGoroutines(t, baseline+10, "after more tasks")
	if got := logs.Count(failedFast) - before; got < 20 {
		t.Errorf("%d notifications of 20 later tasks failed at once, want all", got)
	}
	if _, _, total := hook.Counts(); total > threshold+perHost-1 {
		t.Errorf("the webhook accepted %d connections, want at most %d", total, threshold+perHost-1)
	}
}

// TestPushConfigCap: a task has at most MaxPushConfigsPerTask configs,
// whether they come by create (1.0), set (0.3) or a send's configuration;
// replacing a config by its id is not adding one.
func TestPushConfigCap(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer hook.Close()
	for _, tt := range []struct {
		name string
		max  int // the field; 0 is the default
		want int
	}{
		{"default", 0, 10},
		{"three", 3, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(t, new(echo.Executor), func(c *server.Config) {
				c.PushSender = &push.Sender{Guard: netguard.Guard{Allow: []string{"127.0.0.0/8"}}}
				c.Limits.MaxPushConfigsPerTask = tt.max
			})
			ctx := context.Background()
			v03 := server.WithCallInfo(ctx, server.CallInfo{ProtocolVersion: a2a.Version03})
			task := sendTask(t, h, send("input: x")) // waits for input, so it takes follow-ups
			create := func(ctx context.Context, id string) error {
				_, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: id, URL: hook.URL})
				return err
			}
			var first string
			for i := range tt.want {
				c, err := h.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, URL: hook.URL})
				if err != nil {
					t.Fatalf("config %d of %d: %v", i+1, tt.want, err)
				}
				if i == 0 {
					first = c.ID
				}
			}
			err := create(ctx, "")
			wantCode(t, err, a2a.CodeInvalidParams)
			if msg := err.Error(); !strings.Contains(msg, "delete one") || !strings.Contains(msg, " "+strconv.Itoa(tt.want)+" ") {
				t.Fatalf("create beyond the cap: %v, want the limit and what to do", err)
			}
			if err := create(ctx, first); err != nil {
				t.Fatalf("replacing config %s at the cap: %v", first, err)
			}

			// 0.3 set: the id defaults to the task's; setting it again
			// replaces it.
			if err := h.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: first}); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := create(v03, task.ID); err != nil {
					t.Fatalf("0.3 set at the cap: %v", err)
				}
			}
			wantCode(t, create(v03, "another"), a2a.CodeInvalidParams)

			// A send's configuration adds one too; refused before the
			// task changes.
			req := followUp(task.ID, "done")
			req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: hook.URL}}
			_, err = h.SendMessage(ctx, req)
			wantCode(t, err, a2a.CodeInvalidParams)
			if !strings.Contains(err.Error(), "taskPushNotificationConfig") {
				t.Fatalf("send beyond the cap: %v, want it to name the configuration", err)
			}
			got, err := h.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.Status.State != a2a.TaskStateInputRequired || len(got.History) != len(task.History) {
				t.Fatalf("task after a refused send: %+v, %v", got, err)
			}
			list, err := h.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
			if err != nil || len(list.Configs) != tt.want {
				t.Fatalf("list: %d configs, %v; want %d", len(list.Configs), err, tt.want)
			}
			// Replacing by id goes through.
			req.Configuration.TaskPushNotificationConfig.ID = task.ID
			if got := sendTask(t, h, req); got.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("send replacing a config: state %s", got.Status.State)
			}
		})
	}
}
