package serve_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/serve"
)

// Keys of the callers in the authentication tests: alice and bob in
// tenant acme, carol in globex.
const (
	aliceKey = "alice-key-0123456789"
	bobKey   = "bob-key-0123456789ab"
	carolKey = "carol-key-0123456789"
)

func gatedServer(t *testing.T) *serve.Server { return gatedServerOn(t, serve.Config{}) }

// gatedServerOn starts a server of cfg behind the callers' API keys,
// serving gRPC too.
func gatedServerOn(t *testing.T, cfg serve.Config) *serve.Server {
	t.Helper()
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{
		{Key: aliceKey, Name: "alice", Tenant: "acme"},
		{Key: bobKey, Name: "bob", Tenant: "acme"},
		{Key: carolKey, Name: "carol", Tenant: "globex"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{keys}})
	if err != nil {
		t.Fatal(err)
	}
	cfg.GRPCAddr, cfg.Gate = "127.0.0.1:0", gate
	cfg.PushAllow = []string{"127.0.0.0/8"} // the tests' webhook configs name a local URL
	s, _, _ := start(t, cfg)
	return s
}

// TestAuthOnEveryBinding: on JSON-RPC, HTTP+JSON and gRPC alike, a request
// without a credential or with an unknown one is refused as
// unauthenticated, and a task is its creator's alone: to another caller
// of the same tenant or of another, every task method (get, list,
// subscribe, cancel, a message to it, every push-config operation) answers
// task not found, and the list is empty.
func TestAuthOnEveryBinding(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		s := gatedServer(t)
		authOnEveryBinding(t, s, s)
	})
	t.Run("NATS, two replicas", func(t *testing.T) {
		// The task is made at one replica and sought at the other.
		srv := startNATS(t, t.TempDir(), -1, "")
		cfg := serve.Config{State: serve.StateNATS, NATS: serve.NATS{URL: srv.ClientURL()}}
		authOnEveryBinding(t, gatedServerOn(t, cfg), gatedServerOn(t, cfg))
	})
}

// authOnEveryBinding makes alice's task at a and tries it at b.
func authOnEveryBinding(t *testing.T, a, b *serve.Server) {
	card := a.Card()
	if len(card.SecurityRequirements) != 1 || card.SecuritySchemes["apiKey"].APIKey == nil || card.SecuritySchemes["apiKey"].APIKey.Name != "X-API-Key" {
		t.Fatalf("card declares %+v / %+v, want the API key scheme required", card.SecuritySchemes, card.SecurityRequirements)
	}
	bindings := map[string]client.Binding{"JSONRPC": client.JSONRPC, "HTTP+JSON": client.HTTPJSON, "GRPC": grpcclient.Binding(grpcclient.Config{})}
	for name, binding := range bindings {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			connect := func(s *serve.Server) *client.Client {
				c, err := client.New(ctx, s.URL(), client.Config{Bindings: []client.Binding{binding}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				if c.Binding() != name {
					t.Fatalf("client speaks %s, want %s", c.Binding(), name)
				}
				return c
			}
			c, cb := connect(a), connect(b)
			as := func(key string) client.CallOption { return client.APIKey("X-API-Key", key) }
			hello := func() *a2a.SendMessageRequest {
				return &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")}
			}

			for who, opts := range map[string][]client.CallOption{
				"no credential": nil,
				"unknown key":   {as("not-a-key-of-anyone")},
				"bearer token":  {client.BearerToken("not.a.jwt")},
			} {
				if _, err := c.SendMessage(ctx, hello(), opts...); !errors.Is(err, a2a.ErrUnauthenticated) {
					t.Errorf("SendMessage with %s = %v, want unauthenticated", who, err)
				}
				if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}, opts...); !errors.Is(err, a2a.ErrUnauthenticated) {
					t.Errorf("ListTasks with %s = %v, want unauthenticated", who, err)
				}
			}

			ev, err := c.SendMessage(ctx, hello(), as(aliceKey))
			if err != nil {
				t.Fatal(err)
			}
			task, ok := ev.(*a2a.Task)
			if !ok {
				t.Fatalf("SendMessage = %T, want a task", ev)
			}
			if _, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, as(aliceKey)); err != nil {
				t.Fatalf("alice's GetTask of her task: %v", err)
			}
			if l, err := cb.ListTasks(ctx, &a2a.ListTasksRequest{}, as(aliceKey)); err != nil || len(l.Tasks) == 0 {
				t.Fatalf("alice's ListTasks = %v, %v; want her tasks", l, err)
			}
			const hook = "http://127.0.0.1:9/hook"
			if _, err := c.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "hers", URL: hook}, as(aliceKey)); err != nil {
				t.Fatalf("alice's push config for her task: %v", err)
			}
			for _, other := range []string{bobKey, carolKey} {
				o := as(other)
				notFound := func(op string, err error) {
					t.Helper()
					if !errors.Is(err, a2a.ErrTaskNotFound) {
						t.Errorf("%s of alice's task by another = %v, want task not found", op, err)
					}
				}
				_, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, o)
				notFound("GetTask", err)
				_, err = cb.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}, o)
				notFound("CancelTask", err)
				follow := hello()
				follow.Message.TaskID = task.ID
				_, err = cb.SendMessage(ctx, follow, o)
				notFound("SendMessage to it", err)
				err = nil
				for _, serr := range cb.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}, o) {
					err = serr // the first item: an error, not an event
					break
				}
				notFound("SubscribeToTask", err)
				_, err = cb.CreateTaskPushNotificationConfig(ctx, &a2a.TaskPushNotificationConfig{TaskID: task.ID, ID: "theirs", URL: hook}, o)
				notFound("CreateTaskPushNotificationConfig", err)
				_, err = cb.GetTaskPushNotificationConfig(ctx, &a2a.GetTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "hers"}, o)
				notFound("GetTaskPushNotificationConfig", err)
				_, err = cb.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}, o)
				notFound("ListTaskPushNotificationConfigs", err)
				err = cb.DeleteTaskPushNotificationConfig(ctx, &a2a.DeleteTaskPushNotificationConfigRequest{TaskID: task.ID, ID: "hers"}, o)
				notFound("DeleteTaskPushNotificationConfig", err)
				l, err := cb.ListTasks(ctx, &a2a.ListTasksRequest{}, o)
				if err != nil {
					t.Fatal(err)
				}
				for _, lt := range l.Tasks {
					if lt.ID == task.ID {
						t.Errorf("another's ListTasks lists alice's task")
					}
				}
			}
			// What the others tried changed nothing of alice's.
			if pc, err := cb.ListTaskPushNotificationConfigs(ctx, &a2a.ListTaskPushNotificationConfigsRequest{TaskID: task.ID}, as(aliceKey)); err != nil || len(pc.Configs) != 1 || pc.Configs[0].ID != "hers" {
				t.Errorf("alice's push configs after the others' tries = %+v, %v; want hers alone", pc, err)
			}
			if got, err := cb.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, as(aliceKey)); err != nil || got.Status.State != task.Status.State || len(got.History) != len(task.History) {
				t.Errorf("alice's task after the others' tries = %+v, %v; want it as it was", got, err)
			}
		})
	}
}

// TestAuthOnTheWire: the HTTP bindings answer a missing credential with
// 401 and a WWW-Authenticate challenge naming the header, JSON-RPC with
// its -31401 error in the body; a credential bound to another tenant than
// the route names is 403.
func TestAuthOnTheWire(t *testing.T) {
	s := gatedServer(t)
	post := func(path, body string, header map[string]string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("POST", strings.TrimSuffix(s.URL(), "/")+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	send := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	rpc := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + send + `}`
	tests := []struct {
		name, path, body string
		header           map[string]string
		status           int
		contains         string
	}{
		{"JSON-RPC without a key", "/", rpc, nil, 401, `"code":-31401`},
		{"HTTP+JSON without a key", "/message:send", send, nil, 401, `"status":"UNAUTHENTICATED"`},
		{"HTTP+JSON with an unknown key", "/message:send", send, map[string]string{"X-API-Key": "nobody-0123456789"}, 401, `unknown API key`},
		{"HTTP+JSON in another tenant", "/globex/message:send", send, map[string]string{"X-API-Key": aliceKey}, 403, `"status":"PERMISSION_DENIED"`},
		{"HTTP+JSON in the key's tenant", "/acme/message:send", send, map[string]string{"X-API-Key": aliceKey}, 200, `"task"`},
	}
	for _, tt := range tests {
		resp, body := post(tt.path, tt.body, tt.header)
		if resp.StatusCode != tt.status || !strings.Contains(body, tt.contains) {
			t.Errorf("%s: HTTP %d %s, want %d with %s", tt.name, resp.StatusCode, body, tt.status, tt.contains)
		}
		if tt.status == 401 && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `ApiKey header="X-API-Key"`) {
			t.Errorf("%s: WWW-Authenticate %q, want the API key challenge", tt.name, resp.Header.Get("WWW-Authenticate"))
		}
		if strings.Contains(body, aliceKey) {
			t.Errorf("%s: the answer repeats the key", tt.name)
		}
	}
}

// TestSignedCard: a server with a signing key serves a card whose
// signature verifies against the key it publishes at JWKSPath, as a
// client that fetched the card checks it; the same card changed in any
// way does not verify.
func TestSignedCard(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := start(t, serve.Config{SigningKey: key})
	get := func(path string, header ...string) []byte {
		t.Helper()
		req, err := http.NewRequest("GET", strings.TrimSuffix(s.URL(), "/")+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: HTTP %d %s", path, resp.StatusCode, b)
		}
		return b
	}
	// The signature is over the 1.0 card, which a 1.0 client fetches.
	raw := get("/.well-known/agent-card.json", "A2A-Version", "1.0")
	if !strings.Contains(string(get(serve.JWKSPath)), `"kty":"EC"`) {
		t.Fatal("the JWKS holds no EC key")
	}
	v, err := cardsign.NewVerifier(cardsign.VerifierConfig{JWKSURL: strings.TrimSuffix(s.URL(), "/") + serve.JWKSPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := v.VerifyJSON(ctx, raw); err != nil {
		t.Fatalf("the served card does not verify: %v", err)
	}
	// The card served to clients without A2A-Version (0.3's, with 0.3's
	// members beside 1.0's) carries the same signature: it verifies as
	// the 1.0 card it decodes to.
	var union a2a.AgentCard
	if err := json.Unmarshal(get("/.well-known/agent-card.json"), &union); err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(ctx, &union); err != nil {
		t.Fatalf("the union card, decoded, does not verify: %v", err)
	}
	tampered := strings.Replace(string(raw), `"name":"TestAgent"`, `"name":"EvilAgent"`, 1)
	if tampered == string(raw) {
		t.Fatal("the card has no name to tamper with")
	}
	if err := v.VerifyJSON(ctx, []byte(tampered)); !errors.Is(err, cardsign.ErrBadSignature) {
		t.Fatalf("a tampered card: %v, want a bad signature", err)
	}
}
