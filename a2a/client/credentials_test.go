package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

const aliceKey = "alice-key-0123456789"

// callerKey marks a test's context with whom its calls are made for.
type callerKey struct{}

// keyCredentials present an API key, the one the test sets, and record
// for whom each call they authenticate is made (the callerKey of its
// context).
type keyCredentials struct {
	mu  sync.Mutex
	key string
	err error
	who []string
}

func (k *keyCredentials) Header(ctx context.Context) (http.Header, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	who, _ := ctx.Value(callerKey{}).(string)
	k.who = append(k.who, who)
	if k.err != nil {
		return nil, k.err
	}
	return http.Header{"X-Api-Key": {k.key}}, nil
}

func (k *keyCredentials) set(key string, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.key, k.err = key, err
}

// asked returns how many calls the credentials were asked for, and
// whether each was made for alice.
func (k *keyCredentials) asked(t *testing.T) int {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, w := range k.who {
		if w != "alice" {
			t.Errorf("call %d asked the credentials with a context for %q, not the call's", i, w)
		}
	}
	return len(k.who)
}

// gatedEchoBindings serves one echo agent, behind alice's API key, over
// JSON-RPC and HTTP+JSON, and returns its card, which names both. Its
// "slow:" tasks are held after their first event until the test ends.
func gatedEchoBindings(t *testing.T) *a2a.AgentCard {
	t.Helper()
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{{Key: aliceKey, Name: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{keys}})
	if err != nil {
		t.Fatal(err)
	}
	rpcLn, rpcURL := a2atest.Listen(t)
	restLn, restURL := a2atest.Listen(t)
	card := echo.Card(rpcURL)
	card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{URL: restURL, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version})
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) }) // before the servers stop: cleanups run last first
	h := a2atest.NewHandler(t, server.Config{Card: card, Gate: gate,
		Executor: &gatedEcho{Executor: &echo.Executor{SlowChunks: slowChunks, SlowInterval: slowInterval}, hold: true, gate: hold}})
	rest, err := restserver.New(h, restserver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	a2atest.ServeOn(t, rpcLn, h, jsonrpcserver.Config{})
	a2atest.ServeBinding(t, restLn, rest)
	return card
}

// TestCredentials: the client asks its Credentials on every call, with the
// call's context, on every binding and version: unary calls, streams,
// the resumption of a cut stream, Resubscribe, CancelTask; the server
// admits the calls by the key they send. A header the call sets itself
// wins. Credentials that fail fail the call, naming the agent, and
// nothing is sent.
func TestCredentials(t *testing.T) {
	card := gatedEchoBindings(t)
	for _, tc := range []struct {
		name    string
		binding client.Binding
		version string
	}{
		{"JSONRPC 1.0", client.JSONRPC, a2a.Version},
		{"JSONRPC 0.3", client.JSONRPC, a2a.Version03},
		{"HTTP+JSON", client.HTTPJSON, a2a.Version},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), callerKey{}, "alice"), 30*time.Second)
			defer cancel()
			creds := &keyCredentials{key: aliceKey}
			rec := newRecorder()
			rec.cutAfter, rec.cutStreams = 2, 1 // the first stream is cut after two events
			c, err := client.NewFromCard(card, client.Config{Bindings: []client.Binding{tc.binding}, ProtocolVersion: tc.version,
				HTTPClient: rec.client(), Credentials: creds})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)

			send := func(req *a2a.SendMessageRequest) *a2a.Task {
				t.Helper()
				ev, err := c.SendMessage(ctx, req)
				if err != nil {
					t.Fatalf("SendMessage: %v", err)
				}
				task, ok := ev.(*a2a.Task)
				if !ok {
					t.Fatalf("SendMessage = %T, want a task", ev)
				}
				return task
			}
			task := send(&a2a.SendMessageRequest{Message: textMessage("hello")})
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			// A stream cut after two events, resumed, then the task
			// followed again from its first event.
			evs, err := collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("stream me")}))
			if err != nil || finalState(evs) != a2a.TaskStateCompleted {
				t.Fatalf("stream: %v, ending %s", err, finalState(evs))
			}
			if n := len(rec.streams()); n != 2 {
				t.Fatalf("%d streams were opened, want the stream and its resumption", n)
			}
			streamed, _ := evs[0].TaskIDs()
			if _, err := collect(c.Resubscribe(ctx, streamed, "1")); err != nil {
				t.Fatalf("Resubscribe: %v", err)
			}
			held := send(&a2a.SendMessageRequest{Message: textMessage(echo.SlowPrefix + "wait"),
				Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
			if got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: held.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("CancelTask = %v, %v", got, err)
			}
			sent := len(rec.requests())
			if asked := creds.asked(t); asked != sent {
				t.Errorf("the credentials were asked %d times for %d requests", asked, sent)
			}

			// The server reads the key the credentials give: a wrong one
			// is refused, unless the call sets the header itself.
			creds.set("not-a-key-of-anyone", nil)
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrUnauthenticated) {
				t.Errorf("GetTask with a wrong key = %v, want unauthenticated", err)
			}
			if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, client.APIKey("X-API-Key", aliceKey)); err != nil {
				t.Errorf("GetTask with the call's own key: %v", err)
			}

			// Credentials that fail: no request goes out, and the error
			// says whose call failed and why.
			creds.set("", errors.New("the token endpoint is down"))
			sent = len(rec.requests())
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, client.ErrCredentials) || !strings.Contains(err.Error(), `agent "echo" at `) ||
					!strings.Contains(err.Error(), "the token endpoint is down") || !strings.Contains(err.Error(), op) {
					t.Errorf("%s with failing credentials = %v", op, err)
				}
			}
			_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("hello")})
			check("SendMessage", err)
			_, err = collect(c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: textMessage("hello")}))
			check("SendStreamingMessage", err)
			_, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			check("CancelTask", err)
			if n := len(rec.requests()); n != sent {
				t.Errorf("%d requests went out with failing credentials", n-sent)
			}
		})
	}
}
