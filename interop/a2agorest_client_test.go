package interop

// a2a-go v2.4.0's REST client (A2A 1.0 over HTTP+JSON) against the
// a2amesh server serving HTTP+JSON and JSON-RPC on one port.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// startOurRESTServer serves the holding echo agent over HTTP+JSON and
// JSON-RPC on one port until the test ends; its card lists HTTP+JSON
// first, under tenant when one is given.
func startOurRESTServer(t *testing.T, tenant string, card func(*a2a.AgentCard), extended bool) *ourServer {
	t.Helper()
	ln, url := a2atest.Listen(t)
	c := echo.Card(url)
	c.SupportedInterfaces = append([]a2a.AgentInterface{
		{URL: url, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version, Tenant: tenant},
	}, c.SupportedInterfaces...)
	agent := &holdingEcho{Executor: &echo.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval}}
	cfg := server.Config{Card: c, Executor: agent}
	if extended {
		c.Capabilities.ExtendedAgentCard = true
		cfg.ExtendedCard = extendedCardFor(url)
	}
	if card != nil {
		card(c)
	}
	h := a2atest.NewHandler(t, cfg)
	rpc, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := restserver.New(h, restserver.Config{JSONRPC: rpc})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, 100*time.Millisecond) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	return &ourServer{URL: url, Handler: h, agent: agent}
}

// newGoRESTClient builds a2a-go's client from the card at baseURL with its
// REST transport alone.
func newGoRESTClient(t *testing.T, ctx context.Context, baseURL string, hc *http.Client, opts ...a2aclient.FactoryOption) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.NewResolver(hc).Resolve(ctx, baseURL)
	if err != nil {
		t.Fatalf("a2a-go resolver: %v", err)
	}
	opts = append([]a2aclient.FactoryOption{
		a2aclient.WithRESTTransport(hc),
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2ago.TransportProtocol{a2ago.TransportProtocolHTTPJSON}}),
	}, opts...)
	c, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		t.Fatalf("a2a-go factory: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Destroy(); err != nil {
			t.Errorf("destroy a2a-go client: %v", err)
		}
	})
	return c
}

func TestA2AGoRESTClient(t *testing.T) {
	for _, tenant := range []string{"", "acme"} {
		t.Run("tenant="+tenant, func(t *testing.T) { testA2AGoRESTClient(t, tenant) })
	}
}

func testA2AGoRESTClient(t *testing.T, tenant string) {
	ctx := testContext(t)
	srv := startOurRESTServer(t, tenant, func(c *a2a.AgentCard) { c.Capabilities.ExtendedAgentCard = true }, false)
	hc := newHTTPClient(t)
	// What goes over the wire is REST: count the requests per path.
	paths := &requestLog{base: hc.Transport}
	hc.Transport = paths
	c := newGoRESTClient(t, ctx, srv.URL, hc)

	t.Run("SendMessage", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("hello over REST")})
		if task.Status.State != a2ago.TaskStateCompleted || goArtifactText(task) != "hello over REST" {
			t.Fatalf("state %s, echo %q", task.Status.State, goArtifactText(task))
		}
		if !paths.saw("/message:send") {
			t.Fatalf("no POST /message:send among %v", paths.all())
		}
	})

	t.Run("SendStreamingMessage", func(t *testing.T) {
		evs := goCollect(t, c.SendStreamingMessage(ctx, &a2ago.SendMessageRequest{Message: goTextMessage(streamText)}))
		goCheckEchoStream(t, evs, streamText)
	})

	t.Run("GetTask", func(t *testing.T) {
		sent := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("get me")})
		for _, n := range []int{0, 1} {
			got, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: sent.ID, HistoryLength: &n})
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != sent.ID || goArtifactText(got) != "get me" || len(got.History) != n {
				t.Errorf("historyLength %d: %s echo %q with %d messages", n, got.ID, goArtifactText(got), len(got.History))
			}
		}
	})

	t.Run("ListTasks", func(t *testing.T) {
		contextID := a2ago.NewContextID()
		before := time.Now().Add(-time.Second)
		for range 3 {
			m := goTextMessage("list")
			m.ContextID = contextID
			goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: m})
		}
		page1, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, PageSize: 2, IncludeArtifacts: true, StatusTimestampAfter: &before})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1.Tasks) != 2 || page1.TotalSize != 3 || page1.NextPageToken == "" || goArtifactText(page1.Tasks[0]) == "" {
			t.Fatalf("first page: %d tasks of %d, next %q", len(page1.Tasks), page1.TotalSize, page1.NextPageToken)
		}
		page2, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, PageSize: 2, PageToken: page1.NextPageToken})
		if err != nil || len(page2.Tasks) != 1 {
			t.Fatalf("second page: %v, %v", page2, err)
		}
		later := time.Now().Add(time.Hour)
		none, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, StatusTimestampAfter: &later})
		if err != nil || len(none.Tasks) != 0 {
			t.Errorf("tasks after an hour from now: %v, %v", none, err)
		}
		failed, err := c.ListTasks(ctx, &a2ago.ListTasksRequest{ContextID: contextID, Status: a2ago.TaskStateFailed})
		if err != nil || len(failed.Tasks) != 0 {
			t.Errorf("status filter FAILED: %v, %v", failed, err)
		}
	})

	t.Run("CancelTask", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{
			Message: goTextMessage(heldText("cancel")),
			Config:  &a2ago.SendMessageConfig{ReturnImmediately: true},
		})
		canceled, err := c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: task.ID})
		if err != nil || canceled.Status.State != a2ago.TaskStateCanceled {
			t.Fatalf("CancelTask: %v, %v", canceled, err)
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
				srv.release("sub")
			}
		}
		if first, ok := evs[0].(*a2ago.Task); !ok || first.ID != task.ID {
			t.Fatalf("first event %s, want the task", goEventKind(evs[0]))
		}
		if last, ok := evs[len(evs)-1].(*a2ago.TaskStatusUpdateEvent); !ok || last.Status.State != a2ago.TaskStateCompleted {
			t.Fatalf("last event %s, want status(COMPLETED)", goEventKind(evs[len(evs)-1]))
		}
	})

	t.Run("PushConfig", func(t *testing.T) {
		task := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage(echo.InputPrefix + " push")})
		created, err := c.CreateTaskPushConfig(ctx, &a2ago.PushConfig{TaskID: task.ID, URL: "https://example.com/hook", Token: "go-token"})
		if err != nil {
			t.Fatal(err)
		}
		if created.ID == "" || created.TaskID != task.ID || created.Token != "go-token" {
			t.Fatalf("created %+v", created)
		}
		got, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID})
		if err != nil || got.URL != created.URL {
			t.Fatalf("GetTaskPushConfig: %+v, %v", got, err)
		}
		list, err := c.ListTaskPushConfigs(ctx, &a2ago.ListTaskPushConfigRequest{TaskID: task.ID})
		if err != nil || len(list) != 1 {
			t.Fatalf("ListTaskPushConfigs: %+v, %v", list, err)
		}
		if err := c.DeleteTaskPushConfig(ctx, &a2ago.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetTaskPushConfig(ctx, &a2ago.GetTaskPushConfigRequest{TaskID: task.ID, ID: created.ID}); !errors.Is(err, a2ago.ErrTaskNotFound) {
			t.Errorf("a deleted config: %v, want ErrTaskNotFound", err)
		}
	})

	t.Run("GetExtendedAgentCard", func(t *testing.T) {
		ext := startOurRESTServer(t, tenant, nil, true)
		got, err := newGoRESTClient(t, ctx, ext.URL, hc).GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{})
		if err != nil || got.Name != "echo-extended" {
			t.Fatalf("extended card: %+v, %v", got, err)
		}
		if _, err := c.GetExtendedAgentCard(ctx, &a2ago.GetExtendedAgentCardRequest{}); !errors.Is(err, a2ago.ErrExtendedCardNotConfigured) {
			t.Errorf("extended card not configured: %v", err)
		}
	})

	// a2a-go's REST client reads an error from the Status body, by the
	// ErrorInfo's reason, when it comes as application/json.
	t.Run("Errors", func(t *testing.T) {
		done := goSendTask(t, ctx, c, &a2ago.SendMessageRequest{Message: goTextMessage("done")})
		negative := -1
		for _, ch := range []struct {
			name string
			err  error
			want error
		}{
			{"GetTask unknown", second(c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"CancelTask completed", second(c.CancelTask(ctx, &a2ago.CancelTaskRequest{ID: done.ID})), a2ago.ErrTaskNotCancelable},
			{"SubscribeToTask completed", streamErr(c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: done.ID})), a2ago.ErrUnsupportedOperation},
			{"SubscribeToTask unknown", streamErr(c.SubscribeToTask(ctx, &a2ago.SubscribeToTaskRequest{ID: "no-such-task"})), a2ago.ErrTaskNotFound},
			{"GetTask negative historyLength", second(c.GetTask(ctx, &a2ago.GetTaskRequest{ID: done.ID, HistoryLength: &negative})), a2ago.ErrInvalidParams},
			{"SendMessage without parts", second(c.SendMessage(ctx, &a2ago.SendMessageRequest{Message: &a2ago.Message{ID: a2ago.NewMessageID(), Role: a2ago.MessageRoleUser}})), a2ago.ErrInvalidParams},
		} {
			if !errors.Is(ch.err, ch.want) {
				t.Errorf("%s: got %v, want %v", ch.name, ch.err, ch.want)
			}
		}
		_, err := c.GetTask(ctx, &a2ago.GetTaskRequest{ID: "no-such-task"})
		var ae *a2ago.Error
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, "no-such-task") {
			t.Errorf("task not found: %#v, want an *a2a.Error naming the task", err)
		}
	})

	for _, p := range paths.all() {
		if p == "/" {
			t.Errorf("a2a-go spoke JSON-RPC (POST /), not REST: %v", paths.all())
			break
		}
		if tenant != "" && !strings.HasPrefix(p, "/"+tenant+"/") && p != "/.well-known/agent-card.json" {
			t.Errorf("path %s is not under the tenant %s", p, tenant)
		}
	}
}

// requestLog is an http.RoundTripper that records the escaped path of
// every request it sends.
type requestLog struct {
	base  http.RoundTripper
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) RoundTrip(r *http.Request) (*http.Response, error) {
	l.mu.Lock()
	l.paths = append(l.paths, r.URL.EscapedPath())
	l.mu.Unlock()
	return l.base.RoundTrip(r)
}

// CloseIdleConnections closes the base's, as http.Client asks.
func (l *requestLog) CloseIdleConnections() {
	if c, ok := l.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.paths)
}

// saw reports whether a request's path ended with suffix.
func (l *requestLog) saw(suffix string) bool {
	return slices.ContainsFunc(l.all(), func(p string) bool { return strings.HasSuffix(p, suffix) })
}
