package interop

// a2a-go v2.4.0's client authenticating to a gated a2amesh server on every
// binding, with nothing but what the server's card declares.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	a2a03 "github.com/a2aproject/a2a-go/a2a"
	a2aclient03 "github.com/a2aproject/a2a-go/a2aclient"
	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/internal/idptest"
)

// The gated server of the authentication tests admits alice by her API
// key, bound to tenant acme, and bearer JWTs of its IdP for gatedAudience.
const (
	aliceKey      = "alice-key-0123456789"
	gatedAudience = "https://agents.acme.test/echo"
)

// startGatedServe serves the holding echo agent behind that gate until
// the test ends, and returns it with the IdP whose tokens it takes.
func startGatedServe(t *testing.T) (*ourServer, *idptest.IdP) {
	t.Helper()
	idp := idptest.New(t, idptest.Config{})
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{{Key: aliceKey, Name: "alice", Tenant: "acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{
		Authenticators: []auth.Authenticator{keys, idp.Authenticator(t, gatedAudience)},
		Audit:          slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return startServe(t, gate), idp
}

// goCardOfGated reads the card of a gated server at url for a2a-go.
// a2a-go v2.4.0 cannot read the securityRequirements of a 1.0 card: the
// scopes of a scheme are a StringList, {"list": [...]} in ProtoJSON as
// a2a.proto and the specification's example card have them, and a2a-go
// expects a bare array (a2aproject/a2a-go#430, open, with fixes proposed
// in #432 and #437). Its resolver refuses the whole card, which this
// asserts so that a version with the fix shows; the card is then read as
// a2a-go would read it fixed: each {"list": [...]} as its array.
func goCardOfGated(t *testing.T, ctx context.Context, hc *http.Client, url string) *a2ago.AgentCard {
	t.Helper()
	if _, err := agentcard.NewResolver(hc).Resolve(ctx, url); err == nil || !strings.Contains(err.Error(), "securityRequirements.schemes") {
		t.Fatalf("a2a-go's resolver on a card with securityRequirements: %v; want its StringList error (a2a-go#430), or the shim below is no longer needed", err)
	}
	resp, err := hc.Get(strings.TrimSuffix(url, "/") + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(resp.Body).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	var reqs []struct {
		Schemes map[string]struct {
			List []string `json:"list"`
		} `json:"schemes"`
	}
	if err := json.Unmarshal(raw["securityRequirements"], &reqs); err != nil {
		t.Fatalf("our card's securityRequirements: %v", err)
	}
	bare := make([]map[string]map[string][]string, len(reqs))
	for i, r := range reqs {
		bare[i] = map[string]map[string][]string{"schemes": {}}
		for name, l := range r.Schemes {
			bare[i]["schemes"][name] = append([]string{}, l.List...)
		}
	}
	if raw["securityRequirements"], err = json.Marshal(bare); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	var card a2ago.AgentCard
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatalf("a2a-go reading our card with the scopes as arrays: %v", err)
	}
	return &card
}

// TestA2AGoClientAuthenticates: a2a-go's AuthInterceptor finds in our
// card which schemes the server takes (securitySchemes and
// securityRequirements) and sends each session's credential as the scheme
// says: the API key in its header, the JWT as a bearer token, over
// JSON-RPC, HTTP+JSON and gRPC alike. The server's refusals reach it as
// a2a-go's own errors: no credential is ErrUnauthenticated, a tenant the
// key is not bound to ErrUnauthorized (over JSON-RPC, the HTTP status:
// see refusedAs), and another principal's task ErrTaskNotFound on every
// task method.
func TestA2AGoClientAuthenticates(t *testing.T) {
	ctx := testContext(t)
	srv, idp := startGatedServe(t)
	hc := newHTTPClient(t)
	card := goCardOfGated(t, ctx, hc, srv.URL)

	// The credentials by the names the card gives its schemes: a2a-go
	// learns from the card which is an API key and which a bearer token.
	var keyScheme, bearerScheme a2ago.SecuritySchemeName
	for name, scheme := range card.SecuritySchemes {
		switch scheme.(type) {
		case a2ago.APIKeySecurityScheme:
			keyScheme = name
		case a2ago.HTTPAuthSecurityScheme:
			bearerScheme = name
		}
	}
	if keyScheme == "" || bearerScheme == "" || len(card.SecurityRequirements) != 2 {
		t.Fatalf("a2a-go reads the card's schemes as %+v, requirements %+v; want an API key and a bearer scheme, either required", card.SecuritySchemes, card.SecurityRequirements)
	}
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("alice", keyScheme, aliceKey)
	creds.Set("bob", bearerScheme, a2aclient.AuthCredential(idp.Mint(t, map[string]any{"sub": "bob", "aud": gatedAudience, "tenant": "acme"})))
	creds.Set("expired", bearerScheme, a2aclient.AuthCredential(idp.Mint(t, map[string]any{"sub": "bob", "aud": gatedAudience, "exp": 1})))
	alice := a2aclient.AttachSessionID(ctx, "alice")
	bob := a2aclient.AttachSessionID(ctx, "bob")

	for _, transport := range []a2ago.TransportProtocol{a2ago.TransportProtocolJSONRPC, a2ago.TransportProtocolHTTPJSON, a2ago.TransportProtocolGRPC} {
		t.Run(string(transport), func(t *testing.T) {
			c, err := a2aclient.NewFromCard(ctx, card,
				a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2ago.TransportProtocol{transport}}),
				a2aclient.WithJSONRPCTransport(hc),
				a2aclient.WithRESTTransport(hc),
				a2agrpc.WithGRPCTransport(grpc.WithTransportCredentials(insecure.NewCredentials())),
				a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := c.Destroy(); err != nil {
					t.Errorf("destroy a2a-go client: %v", err)
				}
			})
			hello := func() *a2ago.SendMessageRequest { return &a2ago.SendMessageRequest{Message: goTextMessage("hello")} }
			// refusedAs checks err is a2a-go's want. Over JSON-RPC our
			// refusals are HTTP 401 and 403, as on the other HTTP binding
			// and as RFC 6750 has them (a2a-js's auth handlers retry on
			// them), with the JSON-RPC error in the body; a2a-go's JSON-RPC
			// transport reads no body but a 200's, so what it returns is
			// the status alone.
			refusedAs := func(what string, err, want error, status string) {
				t.Helper()
				if transport == a2ago.TransportProtocolJSONRPC {
					if err == nil || !strings.Contains(err.Error(), "unexpected HTTP status: "+status) {
						t.Errorf("%s = %v, want a2a-go's error for HTTP %s", what, err, status)
					}
					return
				}
				if !errors.Is(err, want) {
					t.Errorf("%s = %v, want a2a-go's %v", what, err, want)
				}
			}

			for who, ctx := range map[string]context.Context{
				"no session":     ctx,
				"an expired JWT": a2aclient.AttachSessionID(ctx, "expired"),
			} {
				refusedAs("SendMessage with "+who, second(c.SendMessage(ctx, hello())), a2ago.ErrUnauthenticated, "401 Unauthorized")
				refusedAs("SendStreamingMessage with "+who, streamErr(c.SendStreamingMessage(ctx, hello())), a2ago.ErrUnauthenticated, "401 Unauthorized")
			}

			task := goSendTask(t, alice, c, hello())
			if task.Status.State != a2ago.TaskStateCompleted || goArtifactText(task) != "hello" {
				t.Fatalf("alice's SendMessage: %s with echo %q", task.Status.State, goArtifactText(task))
			}
			if _, err := c.GetTask(alice, &a2ago.GetTaskRequest{ID: task.ID}); err != nil {
				t.Fatalf("alice's GetTask of her task: %v", err)
			}
			refusedAs("alice's key, bound to acme, naming tenant globex", second(c.GetTask(alice, &a2ago.GetTaskRequest{ID: task.ID, Tenant: "globex"})), a2ago.ErrUnauthorized, "403 Forbidden")

			// Bob, on a JWT, streams a task of his own and sees nothing of
			// alice's.
			goCheckEchoStream(t, goCollect(t, c.SendStreamingMessage(bob, &a2ago.SendMessageRequest{Message: goTextMessage(streamText)})), streamText)
			notFound := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, a2ago.ErrTaskNotFound) {
					t.Errorf("bob's %s of alice's task = %v, want a2a-go's ErrTaskNotFound", op, err)
				}
			}
			notFound("GetTask", second(c.GetTask(bob, &a2ago.GetTaskRequest{ID: task.ID})))
			notFound("CancelTask", second(c.CancelTask(bob, &a2ago.CancelTaskRequest{ID: task.ID})))
			notFound("SubscribeToTask", streamErr(c.SubscribeToTask(bob, &a2ago.SubscribeToTaskRequest{ID: task.ID})))
			follow := hello()
			follow.Message.TaskID = task.ID
			notFound("SendMessage to it", second(c.SendMessage(bob, follow)))
			l, err := c.ListTasks(bob, &a2ago.ListTasksRequest{})
			if err != nil {
				t.Fatalf("bob's ListTasks: %v", err)
			}
			for _, lt := range l.Tasks {
				if lt.ID == task.ID {
					t.Error("bob's ListTasks lists alice's task")
				}
			}
		})
	}
}

// jsAuthSummary is the line js/auth.mjs prints.
type jsAuthSummary struct {
	OK           bool      `json:"ok"`
	Error        string    `json:"error"`
	Binding      string    `json:"binding"`
	APIKeyHeader string    `json:"apiKeyHeader"`
	Anonymous    jsRefusal `json:"anonymous"`
	AliceTask    string    `json:"aliceTask"`
	Bob          struct {
		Challenges          []string  `json:"challenges"`
		Retried             int       `json:"retried"`
		RetriedAfterRefresh int       `json:"retriedAfterRefresh"`
		Get                 jsRefusal `json:"get"`
		Cancel              jsRefusal `json:"cancel"`
		Subscribe           jsRefusal `json:"subscribe"`
	} `json:"bob"`
}

// jsRefusal is what @a2a-js/sdk raised for a refused call.
type jsRefusal struct {
	Name         string `json:"name"`
	Code         int    `json:"code"`
	Message      string `json:"message"`
	TaskNotFound bool   `json:"taskNotFound"`
	// Wrapped: the SDK raised an Error whose cause is TaskNotFoundError,
	// as it does for an error event in a JSON-RPC stream.
	Wrapped bool `json:"wrapped"`
}

// TestJSClientAuthenticates: @a2a-js/sdk's client authenticates to a gated
// a2amesh server over JSON-RPC and HTTP+JSON with the SDK's own
// AuthenticationHandler: the API key's header is the one the card
// declares; an expired bearer token gets a 401 whose Bearer challenge
// (RFC 6750) makes the handler take a fresh token, which the SDK retries
// with and keeps; without a credential the call is refused; and another
// principal's task is TaskNotFoundError to get, cancel and subscribe.
func TestJSClientAuthenticates(t *testing.T) {
	// Reading the script lets go test's result cache notice when it
	// changes (it does not see what node reads).
	for _, name := range []string{"auth.mjs", "common.mjs"} {
		if _, err := os.ReadFile(filepath.Join("js", name)); err != nil {
			t.Fatal(err)
		}
	}
	node, npm := requireNode(t)
	dir := installJSDeps(t, npm)

	srv, idp := startGatedServe(t)
	stale := idp.Mint(t, map[string]any{"sub": "bob", "aud": gatedAudience, "exp": time.Now().Add(-time.Hour).Unix()})
	fresh := idp.Mint(t, map[string]any{"sub": "bob", "aud": gatedAudience})

	for _, tc := range []struct {
		binding string
		// refused is the code the SDK reports for a call without a
		// credential: the JSON-RPC error's, or the HTTP status.
		refused int
	}{
		{a2a.BindingJSONRPC, int(a2a.CodeUnauthenticated)},
		{a2a.BindingHTTPJSON, http.StatusUnauthorized},
	} {
		t.Run(tc.binding, func(t *testing.T) {
			var sum jsAuthSummary
			runJS(t, node, dir, nil, &sum, "auth.mjs", "--prefer", tc.binding,
				"--key", aliceKey, "--stale", stale, "--fresh", fresh, srv.URL)
			if !sum.OK {
				t.Fatalf("auth.mjs: %s", sum.Error)
			}
			if sum.Binding != tc.binding || sum.APIKeyHeader != "X-API-Key" {
				t.Errorf("the SDK spoke %s with the API key in %q, want %s and X-API-Key", sum.Binding, sum.APIKeyHeader, tc.binding)
			}
			if sum.Anonymous.Code != tc.refused {
				t.Errorf("a call without a credential: the SDK raised %+v, want code %d", sum.Anonymous, tc.refused)
			}
			if sum.Bob.Retried != 1 || sum.Bob.RetriedAfterRefresh != 0 || len(sum.Bob.Challenges) != 1 ||
				!strings.Contains(sum.Bob.Challenges[0], `error="invalid_token"`) || !strings.Contains(sum.Bob.Challenges[0], "expired") {
				t.Errorf("bob's refresh: %d retries (%d after), challenges %q; want one retry, on an invalid_token challenge saying the token expired", sum.Bob.Retried, sum.Bob.RetriedAfterRefresh, sum.Bob.Challenges)
			}
			for op, r := range map[string]jsRefusal{"getTask": sum.Bob.Get, "cancelTask": sum.Bob.Cancel, "resubscribeTask": sum.Bob.Subscribe} {
				if !r.TaskNotFound || r.Wrapped != (op == "resubscribeTask" && tc.binding == a2a.BindingJSONRPC) {
					t.Errorf("bob's %s of alice's task: the SDK raised %+v, want TaskNotFoundError (the cause of its error, for a JSON-RPC stream)", op, r)
				}
			}
			// The task is alice's on the server.
			alice := auth.NewContext(testContext(t), &auth.Principal{Scheme: "apiKey", Issuer: "apikey", Subject: "alice", Tenant: "acme"})
			if _, err := srv.Handler.GetTask(alice, &a2a.GetTaskRequest{ID: sum.AliceTask}); err != nil {
				t.Errorf("alice's task %s on the server: %v", sum.AliceTask, err)
			}
		})
	}
}

// TestA2AGo03ClientAuthenticates: a2a-go v0.3.15's client, speaking A2A 0.3
// over JSON-RPC, finds our card's 0.3 security (`security` and the 0.3
// `securitySchemes`) and authenticates with its AuthInterceptor: alice's
// API key, bob's JWT; another's task is ErrTaskNotFound to get, cancel and
// resubscribe; no credential is HTTP 401 (its JSON-RPC transport, like
// v2.4.0's, reads no body but a 200's).
func TestA2AGo03ClientAuthenticates(t *testing.T) {
	ctx := testContext(t)
	srv, idp := startGatedServe(t)
	creds := a2aclient03.NewInMemoryCredentialsStore()
	c, card := newGo03Client(t, ctx, srv.URL, newHTTPClient(t), a2aclient03.WithInterceptors(&a2aclient03.AuthInterceptor{Service: creds}))
	var keyScheme, bearerScheme a2a03.SecuritySchemeName
	for name, scheme := range card.SecuritySchemes {
		switch scheme.(type) {
		case a2a03.APIKeySecurityScheme:
			keyScheme = name
		case a2a03.HTTPAuthSecurityScheme:
			bearerScheme = name
		}
	}
	if keyScheme == "" || bearerScheme == "" || len(card.Security) != 2 {
		t.Fatalf("a2a-go 0.3 reads the card's schemes as %+v, security %+v; want an API key and a bearer scheme, either required", card.SecuritySchemes, card.Security)
	}
	creds.Set("alice", keyScheme, aliceKey)
	creds.Set("bob", bearerScheme, a2aclient03.AuthCredential(idp.Mint(t, map[string]any{"sub": "bob", "aud": gatedAudience})))
	alice := a2aclient03.WithSessionID(ctx, "alice")
	bob := a2aclient03.WithSessionID(ctx, "bob")

	if _, err := c.SendMessage(ctx, &a2a03.MessageSendParams{Message: go03Message("hello")}); err == nil || !strings.Contains(err.Error(), "401 Unauthorized") {
		t.Errorf("SendMessage without a credential = %v, want a2a-go's error for HTTP 401", err)
	}
	task := go03Send(t, alice, c, &a2a03.MessageSendParams{Message: go03Message("hello")})
	if _, err := c.GetTask(alice, &a2a03.TaskQueryParams{ID: task.ID}); err != nil {
		t.Fatalf("alice's GetTask of her task: %v", err)
	}
	if err := go03StreamErr(c.SendStreamingMessage(bob, &a2a03.MessageSendParams{Message: go03Message(streamText)})); err != nil {
		t.Fatalf("bob's stream: %v", err)
	}
	for op, err := range map[string]error{
		"GetTask":           second(c.GetTask(bob, &a2a03.TaskQueryParams{ID: task.ID})),
		"CancelTask":        second(c.CancelTask(bob, &a2a03.TaskIDParams{ID: task.ID})),
		"ResubscribeToTask": go03StreamErr(c.ResubscribeToTask(bob, &a2a03.TaskIDParams{ID: task.ID})),
	} {
		if !errors.Is(err, a2a03.ErrTaskNotFound) {
			t.Errorf("bob's %s of alice's task = %v, want a2a-go's ErrTaskNotFound", op, err)
		}
	}
}
