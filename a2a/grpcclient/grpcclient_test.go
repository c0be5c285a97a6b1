package grpcclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	kserver "github.com/cloudwego/kitex/server"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
	"github.com/a2amesh/a2amesh/services/echo"
)

// Every operation over gRPC, through a client that client.New made from
// the card the agent serves over HTTP (gRPC preferred, JSON-RPC listed
// too); what it does is visible over JSON-RPC, the same Handler behind
// both.
func TestOperations(t *testing.T) {
	grpcLn, httpLn := listen(t), listen(t)
	httpURL := "http://" + httpLn.Addr().String() + "/"
	card := grpcCard(grpcLn.Addr().String(), "")
	card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{URL: httpURL, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version})
	card.Capabilities.ExtendedAgentCard = true
	extended := *card
	extended.Description = "the extended card"
	f := serve(t, grpcLn, server.Config{Card: card, ExtendedCard: &extended})
	a2atest.ServeOn(t, httpLn, f.h, jsonrpcserver.Config{})

	ctx := t.Context()
	c, err := client.New(ctx, httpURL, client.Config{Bindings: []client.Binding{grpcclient.Binding(grpcclient.Config{}), client.JSONRPC}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Binding() != a2a.BindingGRPC || c.URL() != f.addr {
		t.Fatalf("the client speaks %s at %s, want gRPC at %s", c.Binding(), c.URL(), f.addr)
	}
	overJSON, err := client.New(ctx, httpURL, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer overJSON.Close()

	// A blocking send returns the completed task.
	res, err := c.SendMessage(ctx, sendReq("hello over gRPC"))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "hello over gRPC" {
		t.Fatalf("SendMessage returned %#v, want the completed echo task", res)
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: new(int)})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != task.ID || got.Status.State != a2a.TaskStateCompleted || got.History != nil {
		t.Errorf("GetTask returned %+v, want the task without history", got)
	}
	if viaJSON, err := overJSON.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil || viaJSON.Status.State != a2a.TaskStateCompleted {
		t.Errorf("over JSON-RPC, GetTask: %v, %v", viaJSON, err)
	}
	list, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: task.ContextID})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID || list.TotalSize != 1 {
		t.Errorf("ListTasks returned %+v, want the one task", list)
	}

	// A task that returns at once, canceled.
	res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message:       a2a.NewTextMessage(a2a.RoleUser, echo.SlowPrefix+strings.Repeat("long ", 400)),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	running := res.(*a2a.Task)
	canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: running.ID, Metadata: map[string]any{"why": "a test"}})
	if err != nil {
		t.Fatal(err)
	}
	if canceled.ID != running.ID || canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask returned %+v, want the task CANCELED", canceled)
	}

	// Push notification configs.
	cfg, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{
		TaskID: task.ID, URL: "https://hooks.example/a2a", Token: "tok",
		Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ID == "" || cfg.TaskID != task.ID || cfg.URL != "https://hooks.example/a2a" {
		t.Errorf("CreateTaskPushNotificationConfig returned %+v", cfg)
	}
	one, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID})
	if err != nil || one.Token != "tok" || one.Authentication == nil || one.Authentication.Credentials != "secret" {
		t.Errorf("GetTaskPushNotificationConfig: %+v, %v", one, err)
	}
	cfgs, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID})
	if err != nil || len(cfgs.Configs) != 1 || cfgs.Configs[0].ID != cfg.ID {
		t.Errorf("ListTaskPushNotificationConfigs: %+v, %v", cfgs, err)
	}
	if err := c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: cfg.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("the deleted config: %v, want task (or config) not found", err)
	}

	ext, err := c.GetExtendedAgentCard(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ext.Description != extended.Description || ext.Name != card.Name || len(ext.SupportedInterfaces) != 2 {
		t.Errorf("GetExtendedAgentCard returned %+v, want the extended card", ext)
	}
}

// client.New takes a card's gRPC interface, host:port or grpc://host:port,
// on the card's host, and refuses one elsewhere.
func TestNewFromServedCard(t *testing.T) {
	f := serve(t, nil, server.Config{})
	_, port, _ := net.SplitHostPort(f.addr)
	cases := []struct {
		url     string
		refused bool
	}{
		{f.addr, false},
		{"grpc://" + f.addr, false},
		{"grpc://" + f.addr + "/", false},
		{"localhost:" + port, true}, // another host name than the card's
		{"grpc://10.0.0.1:" + port, true},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			cardJSON, err := a2av03.CardJSON(grpcCard(tc.url, ""))
			if err != nil {
				t.Fatal(err)
			}
			cards := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write(cardJSON)
			}))
			defer cards.Close()
			c, err := client.New(t.Context(), cards.URL, client.Config{Bindings: []client.Binding{grpcclient.Binding(grpcclient.Config{})}})
			if tc.refused {
				if !errors.Is(err, client.ErrOriginRefused) {
					t.Fatalf("New: %v, want the origin refused", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.SendMessage(t.Context(), sendReq("hi")); err != nil {
				t.Error(err)
			}
		})
	}
}

// Streams number their events as over SSE: from 1 for a new task, from
// the task's latest for a subscription's snapshot, and Resubscribe after
// an id replays exactly the events after it.
func TestStreamIDs(t *testing.T) {
	f := serve(t, nil, server.Config{})
	c := dial(t, f.addr, "", client.Config{})
	const text = "slow: numbered like SSE"
	evs, err := collect(c.SendStreamingMessage(t.Context(), sendReq(text)))
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, evs, 1, text)
	taskID, _ := evs[0].TaskIDs()

	for _, after := range []int{1, 4, len(evs) - 1} {
		again, err := collect(c.Resubscribe(t.Context(), taskID, strconv.Itoa(after)))
		if err != nil {
			t.Fatalf("after %d: %v", after, err)
		}
		if len(again) != len(evs)-after {
			t.Fatalf("after %d: %d events, want %d", after, len(again), len(evs)-after)
		}
		for i, ev := range again {
			if want := evs[after+i]; ev.ID != want.ID || !sameEvent(ev.Event, want.Event) {
				t.Errorf("after %d: event %d is %s %#v, want %s %#v", after, i, ev.ID, ev.Event, want.ID, want.Event)
			}
		}
	}

	// A subscription to a running task starts with its snapshot, numbered
	// as the task's latest event; the events after it follow on.
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{
		Message: a2a.NewTextMessage(a2a.RoleUser, text), Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	sub, err := collect(c.SubscribeToTask(t.Context(), &a2a.SubscribeToTaskRequest{ID: res.(*a2a.Task).ID}))
	if err != nil {
		t.Fatal(err)
	}
	first, err := strconv.Atoi(sub[0].ID)
	if err != nil || first < 1 {
		t.Fatalf("the snapshot's id is %q", sub[0].ID)
	}
	checkEcho(t, sub, first, text)
	if last := first + len(sub) - 1; last != len(evs) {
		t.Errorf("the task's last event is %d, want %d as for the first task", last, len(evs))
	}
}

// sameEvent compares events by their JSON form.
func sameEvent(a, b a2a.Event) bool {
	ja, erra := json.Marshal(a2a.Wrap(a))
	jb, errb := json.Marshal(a2a.Wrap(b))
	return erra == nil && errb == nil && string(ja) == string(jb)
}

// A stream whose connection is cut mid-way is resumed after the last
// event received, over a new connection, with nothing lost or repeated.
func TestResumeAfterCut(t *testing.T) {
	f := serve(t, nil, server.Config{Executor: &echo.Executor{SlowChunks: slowChunks, SlowInterval: 50 * time.Millisecond}})
	p := newProxy(t, f.addr)
	c := dial(t, p.addr(), "", client.Config{})
	const text = "slow: every event exactly once"
	var evs []client.Event
	for ev, err := range c.SendStreamingMessage(t.Context(), sendReq(text), client.BearerToken("resume")) {
		if err != nil {
			t.Fatalf("after events %d: %v", len(evs), err)
		}
		evs = append(evs, ev)
		if len(evs) == 3 {
			p.cut()
		}
	}
	checkEcho(t, evs, 1, text)
	subs := f.rec.of("SubscribeToTask")
	if len(subs) != 1 {
		t.Fatalf("%d resumptions, want 1", len(subs))
	}
	if got := subs[0].MD.Get("last-event-id"); len(got) != 1 || got[0] != "3" {
		t.Errorf("the resumption asks for the events after %v, want 3", got)
	}
	if got := subs[0].MD.Get("authorization"); len(got) != 1 || got[0] != "Bearer resume" {
		t.Errorf("the resumption has authorization %v: the call's options are lost", got)
	}
}

// A server that accepts connections and never answers fails a stream
// within about StreamIdleTimeout, and a unary call within
// ResponseTimeout.
func TestHungServer(t *testing.T) {
	p := newProxy(t, "127.0.0.1:1")
	p.freeze()
	c := dial(t, p.addr(), "", client.Config{StreamIdleTimeout: 300 * time.Millisecond, ResponseTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	evs, err := collect(c.SendStreamingMessage(ctx, sendReq("anyone?")))
	if len(evs) != 0 || !isCutOrTimeout(err) {
		t.Errorf("stream: %d events, error %v; want none, a cut or a timeout", len(evs), err)
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "t"}); !errors.Is(err, client.ErrTimeout) {
		t.Errorf("GetTask: %v, want a timeout", err)
	}
}

// A server that stays silent longer than StreamIdleTimeout (an agent
// waiting on its model) but is alive keeps its stream: no cut, no
// resumption.
func TestSlowServerNotCut(t *testing.T) {
	f := serve(t, nil, server.Config{Executor: &echo.Executor{SlowChunks: 3, SlowInterval: 800 * time.Millisecond}})
	c := dial(t, f.addr, "", client.Config{StreamIdleTimeout: 200 * time.Millisecond})
	const text = "slow: take your time"
	evs, err := collect(c.SendStreamingMessage(t.Context(), sendReq(text)))
	if err != nil {
		t.Fatal(err)
	}
	checkEcho(t, evs, 1, text)
	if subs := f.rec.of("SubscribeToTask"); len(subs) != 0 {
		t.Errorf("the stream was resumed %d times, want never", len(subs))
	}
}

// A server that stops answering mid-stream (a stopped process whose
// kernel keeps the connection) is found out by the keepalive pings: the
// stream fails, after its resumption, rather than waits for ever. Kitex
// pings no more often than every 10 s, so this takes that long.
func TestFrozenServer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a keepalive ping (10 s)")
	}
	f := serve(t, nil, server.Config{Executor: &echo.Executor{SlowChunks: 1000, SlowInterval: 20 * time.Millisecond}})
	p := newProxy(t, f.addr)
	c := dial(t, p.addr(), "", client.Config{StreamIdleTimeout: time.Second})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var evs []client.Event
	var err error
	for ev, e := range c.SendStreamingMessage(ctx, sendReq("slow: "+strings.Repeat("x", 1000))) {
		if e != nil {
			err = e
			break
		}
		evs = append(evs, ev)
		if len(evs) == 3 {
			p.freeze()
		}
	}
	if ctx.Err() != nil || !isCutOrTimeout(err) {
		t.Errorf("after %d events: %v; want a cut or a timeout", len(evs), err)
	}
}

// The server's errors come back as the A2A errors they are.
func TestErrors(t *testing.T) {
	card := grpcCard("127.0.0.1:1", "")
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: "https://ext.test/needed", Required: true}}
	ln := listen(t)
	card.SupportedInterfaces[0].URL = ln.Addr().String()
	f := serve(t, ln, server.Config{Card: card, Limits: server.Limits{MaxRuns: 1, MaxQueuedRuns: -1}})
	c := dial(t, f.addr, "", client.Config{})
	ctx := t.Context()
	ext := client.Extensions("https://ext.test/needed")

	done, err := c.SendMessage(ctx, sendReq("done"), ext)
	if err != nil {
		t.Fatal(err)
	}
	doneID := done.(*a2a.Task).ID

	tests := []struct {
		name string
		call func() error
		want *a2a.Error
	}{
		{"unknown task", func() error { _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"}); return err }, a2a.ErrTaskNotFound},
		{"cancel a completed task", func() error { _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: doneID}); return err }, a2a.ErrTaskNotCancelable},
		{"subscribe to a completed task", func() error {
			_, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: doneID}))
			return err
		}, a2a.ErrUnsupportedOperation},
		{"no extended card", func() error { _, err := c.GetExtendedAgentCard(ctx); return err }, a2a.ErrUnsupportedOperation},
		{"required extension missing", func() error {
			_, err := c.SendMessage(ctx, sendReq("hi"), client.Extensions("https://ext.test/other"))
			return err
		}, a2a.ErrExtensionSupportRequired},
		{"no parts", func() error {
			_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser}}, ext)
			return err
		}, a2a.ErrInvalidParams},
		{"no parts, streamed", func() error {
			_, err := collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser}}, ext))
			return err
		}, a2a.ErrInvalidParams},
		{"busy", func() error {
			// One run at a time: a slow task holds it.
			slow, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
				Message:       a2a.NewTextMessage(a2a.RoleUser, echo.SlowPrefix+strings.Repeat("x", 400)),
				Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true},
			}, ext)
			if err != nil {
				return err
			}
			defer c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: slow.(*a2a.Task).ID})
			_, err = c.SendMessage(ctx, sendReq("one more"), ext)
			return err
		}, &a2a.Error{Code: a2a.CodeInternal, RetryAfter: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var e *a2a.Error
			if !errors.As(err, &e) || !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if e.RetryAfter != tt.want.RetryAfter {
				t.Errorf("RetryAfter %v, want %v", e.RetryAfter, tt.want.RetryAfter)
			}
			if errors.Is(err, client.ErrStreamCut) {
				t.Errorf("error %v is a cut: the server answered", err)
			}
		})
	}
}

// A tenant reaches the server in every request: the interface's, or a
// request's own; and a call's headers are its metadata.
func TestTenantsAndMetadata(t *testing.T) {
	f := serve(t, nil, server.Config{})
	c := dial(t, f.addr, "team-a", client.Config{CallOptions: []client.CallOption{client.BearerToken("tok")}})
	ctx := t.Context()
	opts := []client.CallOption{client.APIKey("X-API-Key", "k1"), client.Extensions("https://ext.test/a", "https://ext.test/b")}

	res, err := c.SendMessage(ctx, sendReq("hi"), opts...)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	if _, err := collect(c.SendStreamingMessage(ctx, sendReq("streamed"), opts...)); err != nil {
		t.Fatal(err)
	}
	if _, err := collect(c.Resubscribe(ctx, id, "1", opts...)); err != nil {
		t.Fatal(err)
	}
	calls := []func() error{
		func() error { _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id}, opts...); return err },
		func() error { _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}, opts...); return err },
		func() error { _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: id}, opts...); return err },
		func() error {
			_, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: id, ID: "p", URL: "https://h.example/"}, opts...)
			return err
		},
		func() error {
			_, err := c.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: id, ID: "p"}, opts...)
			return err
		},
		func() error {
			_, err := c.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: id}, opts...)
			return err
		},
		func() error {
			return c.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: id, ID: "p"}, opts...)
		},
		func() error { _, err := c.GetExtendedAgentCard(ctx, opts...); return err },
	}
	for _, call := range calls {
		_ = call() // what the server answers does not matter here; what it got does
	}
	recorded := f.rec.all()
	methods := map[string]bool{}
	for _, rc := range recorded {
		methods[rc.Method] = true
		if rc.Tenant != "team-a" {
			t.Errorf("%s: tenant %q, want team-a", rc.Method, rc.Tenant)
		}
		for key, want := range map[string]string{
			"a2a-version": "1.0", "authorization": "Bearer tok", "x-api-key": "k1",
			"a2a-extensions": "https://ext.test/a,https://ext.test/b",
		} {
			if got := rc.MD.Get(key); len(got) != 1 || got[0] != want {
				t.Errorf("%s: metadata %s is %v, want %q", rc.Method, key, got, want)
			}
		}
	}
	if len(methods) != 11 {
		t.Errorf("the server recorded the methods %v, want all 11", methods)
	}

	// A request's own tenant wins over the interface's; the task is
	// team-a's, not found in team-b.
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id, Tenant: "team-b"}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("GetTask in another tenant = %v, want task not found", err)
	}
	if gets := f.rec.of("GetTask"); gets[len(gets)-1].Tenant != "team-b" {
		t.Errorf("GetTask's tenant is %q, want the request's team-b", gets[len(gets)-1].Tenant)
	}
}

// Events and responses beyond MaxEventBytes are refused, before they are
// read whole.
func TestMaxEventBytes(t *testing.T) {
	f := serve(t, nil, server.Config{})
	c := dial(t, f.addr, "", client.Config{MaxEventBytes: 1 << 10})
	small := strings.Repeat("s", 100)
	if _, err := c.SendMessage(t.Context(), sendReq(small)); err != nil {
		t.Fatalf("a small task: %v", err)
	}
	big := strings.Repeat("b", 4<<10)
	_, err := c.SendMessage(t.Context(), sendReq(big))
	if err == nil || !strings.Contains(err.Error(), "MaxEventBytes") {
		t.Errorf("a task of 8 KiB: %v, want the limit's error", err)
	}
	_, err = collect(c.SendStreamingMessage(t.Context(), sendReq(big)))
	if err == nil || !strings.Contains(err.Error(), "MaxEventBytes") {
		t.Errorf("a stream of 4 KiB events: %v, want the limit's error", err)
	}
	// The client goes on over new connections.
	if _, err := c.SendMessage(t.Context(), sendReq(small)); err != nil {
		t.Errorf("a small task after: %v", err)
	}
}

// With a Guard, connections go through its dialer: 127.0.0.1 is refused
// unless allowed.
func TestGuard(t *testing.T) {
	f := serve(t, nil, server.Config{})
	refused := dial(t, f.addr, "", client.Config{Guard: &netguard.Guard{}})
	if _, err := refused.GetTask(t.Context(), &a2a.GetTaskRequest{ID: "t"}); !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("GetTask through a guard: %v, want it refused", err)
	}
	if _, err := collect(refused.SendStreamingMessage(t.Context(), sendReq("hi"))); !errors.Is(err, netguard.ErrRefused) {
		t.Errorf("a stream through a guard: %v, want it refused", err)
	}
	allowed := dial(t, f.addr, "", client.Config{Guard: &netguard.Guard{Allow: []string{"127.0.0.1"}}})
	if _, err := allowed.SendMessage(t.Context(), sendReq("hi")); err != nil {
		t.Errorf("through a guard that allows 127.0.0.1: %v", err)
	}
}

// Close closes the connections once the calls on them end, and the client
// goes on with new ones.
func TestClose(t *testing.T) {
	f := serve(t, nil, server.Config{})
	c := dial(t, f.addr, "", client.Config{})
	next, stop := iter.Pull2(c.SendStreamingMessage(t.Context(), sendReq("slow: across a Close")))
	defer stop()
	first, err, _ := next()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	evs := []client.Event{first}
	for {
		ev, err, ok := next()
		if !ok {
			break
		}
		if err != nil {
			t.Fatalf("the stream after Close: %v", err)
		}
		evs = append(evs, ev)
	}
	checkEcho(t, evs, 1, "slow: across a Close")
	if _, err := c.SendMessage(t.Context(), sendReq("after Close")); err != nil {
		t.Errorf("a call after Close: %v", err)
	}
}

// unnumbered is a gRPC server that numbers no events, as a2a-go's: its
// stream is a task, working, then cut.
type unnumbered struct{ *grpcserver.Server }

func (*unnumbered) SendStreamingMessage(_ *a2apb.SendMessageRequest, st a2apb.A2AService_SendStreamingMessageServer) error {
	working := &a2apb.TaskStatus{State: a2apb.TaskState_TASK_STATE_WORKING}
	if err := st.Send(&a2apb.StreamResponse{Payload: &a2apb.StreamResponse_Task{Task: &a2apb.Task{Id: "t1", ContextId: "c1", Status: working}}}); err != nil {
		return err
	}
	return status.Err(codes.Unavailable, "going away")
}

// Against a server that sends no first-event-id header, events have no
// ids, and a cut stream is not resumed (its error is returned).
func TestUnnumberedServer(t *testing.T) {
	h := a2atest.NewHandler(t, server.Config{Card: grpcCard("127.0.0.1:1", ""), Executor: slowEcho()})
	srv, err := grpcserver.New(h, grpcserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln := listen(t)
	stop := make(chan error)
	ks := a2aservice.NewServer(&unnumbered{srv}, kserver.WithListener(ln), kserver.WithExitWaitTime(100*time.Millisecond),
		kserver.WithExitSignal(func() <-chan error { return stop }))
	ran := make(chan error, 1)
	go func() { ran <- ks.Run() }()
	t.Cleanup(func() {
		close(stop)
		if err := <-ran; err != nil {
			t.Errorf("run: %v", err)
		}
		if err := h.Close(context.Background()); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})

	c := dial(t, ln.Addr().String(), "", client.Config{})
	evs, err := collect(c.SendStreamingMessage(t.Context(), sendReq("hi")))
	if len(evs) != 1 || evs[0].ID != "" {
		t.Errorf("events %+v, want the task without an id", evs)
	}
	if !errors.Is(err, client.ErrStreamCut) {
		t.Errorf("error %v, want the cut, not resumed", err)
	}
}

// TestZeroValuesReachTheServer: what the client sends keeps the members
// that hold their zero values (an empty text part, false, 0 and "" in
// metadata), which Kitex's own codec leaves off the wire; the server
// stores the message as it was sent, and answers with it whole. (Without
// the recorder: its WithCompatibleMiddlewareForUnary takes unary answers
// past the server's send middleware, which writes them with pbwire.)
func TestZeroValuesReachTheServer(t *testing.T) {
	grpcLn := listen(t)
	f := serveGRPC(t, grpcLn, server.Config{Card: grpcCard(grpcLn.Addr().String(), "")}, false)
	c, err := client.NewFromCard(grpcCard(f.addr, ""), client.Config{Bindings: []client.Binding{grpcclient.Binding(grpcclient.Config{})}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	meta := map[string]any{"b": false, "n": 0.0, "s": "", "l": []any{0.0, false, ""}}
	msg := a2a.NewMessage(a2a.RoleUser, a2a.TextPart(""), a2a.TextPart("x"))
	msg.Metadata = meta
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: msg, Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if len(task.History) == 0 {
		t.Fatal("the task has no history")
	}
	got := task.History[0]
	if len(got.Parts) != 2 || got.Parts[0].Kind() != a2a.PartKindText || got.Parts[0].Text != "" || got.Parts[1].Text != "x" {
		t.Errorf("the server stored parts %+v, want an empty text part and \"x\"", got.Parts)
	}
	if !reflect.DeepEqual(got.Metadata, meta) {
		t.Errorf("the server stored metadata %#v, want %#v", got.Metadata, meta)
	}
}
