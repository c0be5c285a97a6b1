package serve_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/route"
	kclient "github.com/cloudwego/kitex/client"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/natsstore"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

func TestConfigCheck(t *testing.T) {
	const url = "nats://127.0.0.1:4222"
	tests := []struct {
		name  string
		cfg   serve.Config
		field string // "" when the config is usable
	}{
		{"zero", serve.Config{}, ""},
		{"memory with events on NATS", serve.Config{State: serve.StateMemory, NATS: serve.NATS{URL: url, EventsMaxAge: time.Hour, EventsPerTask: 10}}, ""},
		{"state on NATS, implied by its URL", serve.Config{NATS: serve.NATS{URL: url, Heartbeat: time.Second}}, ""},
		{"state on NATS", serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: url, Heartbeat: time.Second, TasksMaxAge: time.Hour}}, ""},
		{"checkpoints in a directory", serve.Config{DataDir: "/tmp/x"}, ""},
		{"unknown state", serve.Config{State: "disk"}, "State"},
		{"state on NATS without a URL", serve.Config{State: serve.StateNATS}, "State"},
		{"data dir with the state on NATS", serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: url}, DataDir: "/tmp/x"}, "DataDir"},
		{"heartbeat in memory", serve.Config{State: serve.StateMemory, NATS: serve.NATS{URL: url, Heartbeat: time.Second}}, "NATS.Heartbeat"},
		{"data dir with the state on NATS implied", serve.Config{NATS: serve.NATS{URL: url}, DataDir: "/tmp/x"}, "DataDir"},
		{"tasks max age in memory", serve.Config{NATS: serve.NATS{TasksMaxAge: time.Hour}}, "NATS.TasksMaxAge"},
		{"events max age without NATS", serve.Config{NATS: serve.NATS{EventsMaxAge: time.Hour}}, "NATS.EventsMaxAge"},
		{"events per task without NATS", serve.Config{NATS: serve.NATS{EventsPerTask: 5}}, "NATS.EventsPerTask"},
		{"streams on three servers", serve.Config{NATS: serve.NATS{URL: url, StreamReplicas: 3}}, ""},
		{"stream replicas without NATS", serve.Config{NATS: serve.NATS{StreamReplicas: 3}}, "NATS.StreamReplicas"},
		{"more stream replicas than NATS takes", serve.Config{NATS: serve.NATS{URL: url, StreamReplicas: 6}}, "NATS"},
		{"negative stream replicas", serve.Config{NATS: serve.NATS{URL: url, StreamReplicas: -1}}, "NATS"},
		{"NATS credentials", serve.Config{NATS: serve.NATS{URL: url, Auth: natsstore.Auth{User: "mesh", PasswordFile: "/p"}}}, ""},
		{"NATS credentials without NATS", serve.Config{NATS: serve.NATS{Auth: natsstore.Auth{TokenFile: "/t"}}}, "NATS.Auth"},
		{"a NATS user without a password", serve.Config{NATS: serve.NATS{URL: url, Auth: natsstore.Auth{User: "mesh"}}}, "NATS.Auth"},
		{"negative retention", serve.Config{Retention: -time.Second}, "Retention"},
		{"bad push allowlist", serve.Config{PushAllow: []string{"not a host"}}, "PushAllow"},
		{"negative drain delay", serve.Config{DrainDelay: -time.Second}, "DrainDelay"},
		{"no drain", serve.Config{DrainTimeout: -1}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Check() = %v, want nil", err)
				}
				return
			}
			var ce *serve.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || !errors.Is(err, serve.ErrConfig) {
				t.Fatalf("Check() = %v, want a ConfigError on %s", err, tt.field)
			}
		})
	}
}

// start serves a test agent on the offline model with cfg until the test
// ends; done receives what Serve returns.
func start(t *testing.T, cfg serve.Config) (s *serve.Server, done <-chan error, logs *a2atest.LogBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "TestAgent", Description: "tests", Model: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	logs = new(a2atest.LogBuffer)
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, err = serve.New(ctx, agent, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	ch, stopped := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(stopped)
		ch <- s.Serve(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-stopped:
		case <-time.After(15 * time.Second):
			t.Error("the server did not stop within 15 s")
		}
		select {
		case err := <-ch: // unless the test took it
			if err != nil {
				t.Errorf("Serve = %v", err)
			}
		default:
		}
	})
	return s, ch, logs
}

func TestServeAnAgent(t *testing.T) {
	s, _, logs := start(t, serve.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	if got := c.Card().Name; got != "TestAgent" {
		t.Errorf("card name %q", got)
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 {
		t.Fatalf("SendMessage = %#v, want a completed task with an answer", res)
	}
	// Open, on 127.0.0.1 alone: said, not warned.
	if l := logs.String(); !strings.Contains(l, `level=INFO msg="serving without authentication`) || !strings.Contains(l, "loopback=true") {
		t.Errorf("the open server on loopback did not say so at INFO:\n%s", l)
	}
}

func TestServeAnExecutorUnderAnotherName(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{Name: "Parrot", Description: "repeats"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	card := c.Card()
	if card.Name != "Parrot" || card.Description != "repeats" || card.SupportedInterfaces[0].URL != s.URL() {
		t.Errorf("card %+v", card)
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "polly")})
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := res.(*a2a.Task); !ok || task.Artifacts[0].Parts[0].Text != "polly" {
		t.Fatalf("SendMessage = %#v", res)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve after its context ended = %v, want nil", err)
	}
}

// A Server that is never served releases its listener on Close.
func TestCloseUnserved(t *testing.T) {
	ctx := context.Background()
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{})
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(s.URL(), "http://"), "/")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the address is still held after Close: %v", err)
	}
	ln.Close()
}

// startNATS runs a NATS server with JetStream on dir and port (-1: any),
// asking clients for token if it is not empty.
func startNATS(t *testing.T, dir string, port int, token string) *server.Server {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		Authorization: token, NoSigs: true, NoLog: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS did not start")
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv
}

// With the state on NATS, a message that would make a task too large for
// the stores (NATS's max_payload) is refused up front with a clear error,
// not taken and then lost in a failed write; the server goes on serving.
func TestTaskSizeFitsTheStores(t *testing.T) {
	srv := startNATS(t, t.TempDir(), -1, "")
	s, _, logs := start(t, serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL()}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	big := a2a.NewTextMessage(a2a.RoleUser, strings.Repeat("x", 1100<<10))
	_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: big})
	if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), "bytes per task") {
		t.Fatalf("a 1.1 MB message with 1 MB NATS messages: %v, want -32602 naming the limit\n%s", err, logs.String())
	}
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
	if err != nil {
		t.Fatalf("after the refusal: %v", err)
	}
	if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after the refusal: %#v", res)
	}
}

// With the state on a NATS that asks for a token, the server connects with
// the token of NATS.Auth's file, and its tasks are stored there; without
// it, New fails at once, naming NATS.
func TestStateOnNATSWithAToken(t *testing.T) {
	srv := startNATS(t, t.TempDir(), -1, "the-mesh-token")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("the-mesh-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, _, _ := start(t, serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL(), Auth: natsstore.Auth{TokenFile: file}}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
	if task, ok := res.(*a2a.Task); err != nil || !ok || task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("%#v, %v", res, err)
	}

	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "TestAgent", Description: "tests", Model: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = serve.New(ctx, agent, serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL()}})
	if !errors.Is(err, nats.ErrAuthorization) || !strings.Contains(err.Error(), srv.ClientURL()) || ctx.Err() != nil {
		t.Fatalf("New without the token: %v, want an authorization error naming %s, at once", err, srv.ClientURL())
	}
}

// With the state on NATS, a connection nats.go closes for good (here: NATS
// came back asking for credentials the server does not have) stops Serve
// with an error that says so, so that the process exits and is restarted,
// instead of staying up failing every request.
func TestServeStopsWhenNATSIsGoneForGood(t *testing.T) {
	dir := t.TempDir()
	srv := startNATS(t, dir, -1, "")
	_, done, logs := start(t, serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL(), Heartbeat: time.Second}})

	port := srv.Addr().(*net.TCPAddr).Port
	srv.Shutdown()
	srv.WaitForShutdown()
	startNATS(t, dir, port, "a token the server does not have")
	select {
	case err := <-done:
		if !errors.Is(err, natsstore.ErrClosed) {
			t.Fatalf("Serve stopped with %v, want natsstore.ErrClosed\n%s", err, logs.String())
		}
		if !strings.Contains(logs.String(), "connection to NATS closed for good") {
			t.Fatalf("no log line says why:\n%s", logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("still serving 20 s after the NATS connection closed for good\n%s", logs.String())
	}
}

// TestServeGRPC: with GRPCAddr the agent is served over gRPC as well, the
// card lists the binding at the listener's host:port beside JSON-RPC and
// HTTP+JSON, and the bindings share one core: a task made over gRPC is
// the one JSON-RPC and HTTP+JSON return.
func TestServeGRPC(t *testing.T) {
	s, _, _ := start(t, serve.Config{GRPCAddr: "127.0.0.1:0"})
	var grpcAddr string
	var bindings []string
	for _, iface := range s.Card().SupportedInterfaces {
		bindings = append(bindings, iface.ProtocolBinding+" "+iface.ProtocolVersion)
		if iface.ProtocolBinding == a2a.BindingGRPC {
			grpcAddr = iface.URL
		}
	}
	if want := "JSONRPC 1.0,HTTP+JSON 1.0,GRPC 1.0,JSONRPC 0.3"; strings.Join(bindings, ",") != want {
		t.Fatalf("card interfaces %v, want %s", bindings, want)
	}
	if _, _, err := net.SplitHostPort(grpcAddr); err != nil || strings.Contains(grpcAddr, "/") {
		t.Fatalf("gRPC interface URL %q, want a bare host:port", grpcAddr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := a2aservice.NewClient("lf.a2a.v1.A2AService", kclient.WithHostPorts(grpcAddr), kclient.WithRPCTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	res, err := g.SendMessage(ctx, &a2apb.SendMessageRequest{Message: &a2apb.Message{MessageId: a2a.NewID(), Role: a2apb.Role_ROLE_USER,
		Parts: []*a2apb.Part{{Content: &a2apb.Part_Text{Text: "hello"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	task := res.GetTask()
	if task == nil || task.Status.GetState() != a2apb.TaskState_TASK_STATE_COMPLETED {
		t.Fatalf("SendMessage over gRPC = %v, want a completed task", res)
	}
	c, err := client.New(ctx, s.URL(), client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseIdleConnections()
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.Id})
	if err != nil {
		t.Fatalf("GetTask over JSON-RPC of the task made over gRPC: %v", err)
	}
	if got.Status.State != a2a.TaskStateCompleted || len(got.Artifacts) != len(task.Artifacts) {
		t.Errorf("JSON-RPC sees %s with %d artifacts, gRPC made %v with %d", got.Status.State, len(got.Artifacts), task.Status.GetState(), len(task.Artifacts))
	}
	rc, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{client.HTTPJSON}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if rc.Binding() != a2a.BindingHTTPJSON || rc.URL() != s.URL() {
		t.Fatalf("client speaks %s at %s, want HTTP+JSON at %s", rc.Binding(), rc.URL(), s.URL())
	}
	if got, err := rc.GetTask(ctx, &a2a.GetTaskRequest{ID: task.Id}); err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("GetTask over HTTP+JSON of the task made over gRPC = %v, %v", got, err)
	}
}

func TestServeGRPCConfig(t *testing.T) {
	for name, cfg := range map[string]serve.Config{
		"both address and listener": {GRPCAddr: "127.0.0.1:0", GRPCListener: new(net.TCPListener)},
		"public address alone":      {GRPCPublicAddr: "agent.example:443"},
	} {
		if err := cfg.Check(); !errors.Is(err, serve.ErrConfig) {
			t.Errorf("%s: Check() = %v, want a ConfigError", name, err)
		}
	}
}

// Routes of the caller's answer beside the bindings, before the HTTP+JSON
// binding's catch-all, and their context ends when the server stops, so
// that their streams end with it.
func TestRoutes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "TestAgent", Description: "tests", Model: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	lives := make(chan context.Context, 1)
	s, err := serve.New(ctx, agent, serve.Config{Logger: slog.New(slog.DiscardHandler), Routes: func(life context.Context, r route.IRoutes) {
		lives <- life
		r.GET("/mine/*rest", func(_ context.Context, c *app.RequestContext) { c.String(200, "mine: %s", c.Param("rest")) })
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	var life context.Context
	select {
	case life = <-lives:
	case <-time.After(bound):
		t.Fatal("Routes was not called within the bound")
	}
	base := strings.TrimSuffix(s.URL(), "/")
	if body := await(t, base+"/mine/tasks:cancel", 200); body != "mine: tasks:cancel" {
		t.Errorf("GET /mine/tasks:cancel = %q, want the route's answer", body)
	}
	if code, _ := probe(t, http.MethodGet, base+"/tasks/x"); code == 200 {
		t.Errorf("GET /tasks/x = 200, want the binding's refusal")
	}
	if life.Err() != nil {
		t.Fatal("the routes' context ended while serving")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(bound):
		t.Fatal("Serve did not return within the bound")
	}
	if life.Err() == nil {
		t.Error("the routes' context outlived the server")
	}
}
