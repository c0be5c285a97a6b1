package service

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/offline"
	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
)

// lockedBuffer is a bytes.Buffer for a writer and a reader in different
// goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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

// startService serves a test agent (the offline model) with args until ctx
// ends, and returns its URL once it is ready, what ServeAgent returns, and
// its log.
func startService(ctx context.Context, t *testing.T, args ...string) (string, <-chan error, *lockedBuffer) {
	t.Helper()
	f := cli.NewFlags("test", "TEST")
	common := CommonFlags(f, "127.0.0.1:0")
	if err := f.Parse(args); err != nil {
		t.Fatal(err)
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{Name: "TestAgent", Description: "tests", Model: offline.New()})
	if err != nil {
		t.Fatal(err)
	}
	var stdout lockedBuffer
	logs := new(lockedBuffer)
	log := slog.New(slog.NewTextHandler(logs, nil))
	// The service is stopped and waited for before the next test: it sets
	// Hertz's process-wide logger.
	ctx, cancel := context.WithCancel(ctx)
	done, exited := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(exited)
		done <- ServeAgent(ctx, common, Serve{Name: "test", Agent: agent}, log, &stdout)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			t.Error("the service did not stop within 15 s")
		}
	})
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stdout.String(), "ready at"); time.Sleep(10 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("the service stopped before it was ready: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service is not ready after 30 s:\n%s", logs.String())
		}
	}
	_, url, _ := strings.Cut(strings.TrimSpace(stdout.String()), "ready at ")
	return url, done, logs
}

// With --state nats, a message that would make a task too large for the
// stores (NATS's max_payload) is refused up front with a clear error, not
// taken and then lost in a failed write; the service goes on serving.
func TestTaskSizeFitsTheStores(t *testing.T) {
	srv := startNATS(t, t.TempDir(), -1, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url, _, logs := startService(ctx, t, "--state", "nats", "--nats", srv.ClientURL())
	c, err := client.New(ctx, url)
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

// With --state nats, a connection nats.go closes for good (here: NATS came
// back asking for credentials the service does not have) stops the
// service with an error that says so, which makes the process exit
// non-zero, instead of leaving it up failing every request.
func TestServeStopsWhenNATSIsGoneForGood(t *testing.T) {
	dir := t.TempDir()
	srv := startNATS(t, dir, -1, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, done, logs := startService(ctx, t, "--state", "nats", "--nats", srv.ClientURL(), "--heartbeat", "1s")

	port := srv.Addr().(*net.TCPAddr).Port
	srv.Shutdown()
	srv.WaitForShutdown()
	startNATS(t, dir, port, "a token the service does not have")
	select {
	case err := <-done:
		if !errors.Is(err, natsstore.ErrClosed) {
			t.Fatalf("the service stopped with %v, want natsstore.ErrClosed\n%s", err, logs.String())
		}
		if !strings.Contains(logs.String(), "connection to NATS closed for good") {
			t.Fatalf("no log line says why:\n%s", logs.String())
		}
		t.Log(err)
	case <-time.After(20 * time.Second):
		t.Fatalf("the service still serves 20 s after its NATS connection closed for good\n%s", logs.String())
	}
}
