package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/idptest"
	"github.com/a2amesh/a2amesh/serve"
)

// The identities of the hop tests: the gateway's OAuth client at the
// IdP, and the audiences the gateway's and the worker's gates admit.
const (
	gatewayClient = "gateway"
	gatewaySecret = "gateway-client-secret-0123"
	gatewayAud    = "gateway"
	workerAud     = "worker"
	apiUserKey    = "api-user-key-0123456789"
)

// audit is a gate's audit log, as JSON records.
type audit struct{ a2atest.LogBuffer }

// admitted returns the principals admitted for method, in order.
func (a *audit) admitted(method string) []string {
	var out []string
	for _, line := range strings.Split(a.String(), "\n") {
		var r struct{ Decision, Method, Principal string }
		if json.Unmarshal([]byte(line), &r) == nil && r.Decision == "admitted" && r.Method == method {
			out = append(out, r.Principal)
		}
	}
	return out
}

// hopWorker is an agent behind a gate that admits the IdP's tokens for
// the worker's audience. Its model answers whom it serves ("serving
// alice (aud worker)"), or, asked to wait, says it works and then waits
// until its run is cancelled.
type hopWorker struct {
	s     *serve.Server
	audit *audit
}

func serveHopWorker(t *testing.T, idp *idptest.IdP) *hopWorker {
	t.Helper()
	w := &hopWorker{audit: &audit{}}
	script := func(ctx context.Context, call int, input []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		p := auth.FromContext(ctx)
		if p == nil {
			return modeltest.Answer("serving no one"), nil
		}
		if strings.Contains(input[len(input)-1].Content, "wait") {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return modeltest.Answer(fmt.Sprintf("serving %s (aud %v)", p.Subject, p.Claims["aud"])), nil
	}
	agent, err := adk.NewChatModelAgent(context.Background(), &adk.ChatModelAgentConfig{Name: "worker", Description: "says whom it serves",
		Model: modeltest.FromScript(script)})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{idp.Authenticator(t, workerAud)},
		Audit: slog.New(slog.NewJSONHandler(w.audit, nil))})
	if err != nil {
		t.Fatal(err)
	}
	w.s = startServer(t, func(ctx context.Context) (*serve.Server, error) {
		return serve.New(ctx, agent, serve.Config{Listener: listen(t), GRPCAddr: "127.0.0.1:0", Gate: gate, Logger: slog.New(slog.DiscardHandler)})
	})
	return w
}

// startServer makes a server and serves it until the test ends.
func startServer(t *testing.T, newServer func(context.Context) (*serve.Server, error)) *serve.Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := newServer(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

// tasksOf returns the worker's tasks that belong to subject (of the IdP).
func (w *hopWorker) tasksOf(t *testing.T, idp *idptest.IdP, subject string) []*a2a.Task {
	t.Helper()
	ctx := auth.NewContext(context.Background(), &auth.Principal{Issuer: idp.Issuer(), Subject: subject})
	l, err := w.s.Handler().ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Tasks
}

// startHopGateway serves a gateway whose one agent is the worker, called
// with the credential cred (YAML) over the binding named (JSON-RPC when
// none), behind a gate that admits the IdP's tokens for the gateway's
// audience and one API key.
func startHopGateway(t *testing.T, idp *idptest.IdP, w *hopWorker, cred string, binding ...string) *serve.Server {
	t.Helper()
	doc := fmt.Sprintf("version: 1\nagents: {worker: %q}\nentry: {agent: worker}\ncredentials: {worker: %s}\n", w.s.URL(), cred)
	if len(binding) > 0 {
		doc += "bindings: [" + strings.Join(binding, ", ") + "]\n"
	}
	top, err := ParseTopology([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{{Key: apiUserKey, Name: "api-user"}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{idp.Authenticator(t, gatewayAud), keys},
		Audit: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	t.Cleanup(hc.CloseIdleConnections)
	return startServer(t, func(ctx context.Context) (*serve.Server, error) {
		return New(ctx, top, Config{Model: modeltest.New(), Remote: bridge.RemoteConfig{HTTPClient: hc, CancelTimeout: testBound},
			Serve: serve.Config{Listener: listen(t), Gate: gate, Logger: slog.New(slog.DiscardHandler)}})
	})
}

// dialAs returns a client of s that authenticates with opt.
func dialAs(t *testing.T, s *serve.Server, opt client.CallOption) *client.Client {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	c, err := client.New(context.Background(), s.URL(), client.Config{HTTPClient: hc, CallOptions: []client.CallOption{opt}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); hc.CloseIdleConnections() })
	return c
}

// ask sends text to the gateway and returns the settled task and all it
// says (artifacts and status message).
func ask(t *testing.T, c *client.Client, text string) (*a2a.Task, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	defer cancel()
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, text)})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	task, ok := ev.(*a2a.Task)
	if !ok {
		t.Fatalf("SendMessage = %T", ev)
	}
	var said []string
	for _, a := range task.Artifacts {
		said = append(said, a.Text())
	}
	if m := task.Status.Message; m != nil {
		said = append(said, m.Text())
	}
	return task, strings.Join(said, " | ")
}

// secretFile writes a secret to a file of the test's, as a mounted
// Secret holds it, and returns its path.
func secretFile(t *testing.T, value string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(value+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHopIdentity: a gateway calls an agent behind a JWT gate with each
// kind of credential, over real servers and a real (test) IdP: as itself
// with client credentials (the agent sees the gateway's principal), and
// on behalf of its caller by forwarding or exchanging the caller's token
// (the agent sees the user, and the task is the user's).
func TestHopIdentity(t *testing.T) {
	idp := idptest.New(t, idptest.Config{Clients: map[string]string{gatewayClient: gatewaySecret}})
	w := serveHopWorker(t, idp)
	secret := secretFile(t, gatewaySecret)
	oauth := fmt.Sprintf("tokenURL: %q, clientID: %s, secretFile: %q", idp.TokenURL(), gatewayClient, secret)

	for _, tc := range []struct {
		name, cred string
		binding    string   // the hop's binding, "" for JSON-RPC
		userAud    []string // the audiences of the user's token
		said       string   // what the worker says it serves
		owner      string   // whose the worker's task is
		grant      string   // the grant the IdP saw, "" for none
	}{
		{name: "client credentials", cred: "{kind: clientCredentials, " + oauth + ", audience: worker}", userAud: []string{gatewayAud},
			said: "serving gateway (aud [worker])", owner: gatewayClient, grant: idptest.GrantClientCredentials},
		{name: "forward", cred: "{kind: forward}", userAud: []string{gatewayAud, workerAud},
			said: "serving alice (aud [gateway worker])", owner: "alice"},
		{name: "exchange", cred: "{kind: exchange, " + oauth + ", audience: worker}", userAud: []string{gatewayAud},
			said: "serving alice (aud [worker])", owner: "alice", grant: idptest.GrantTokenExchange},
		{name: "exchange over gRPC", cred: "{kind: exchange, " + oauth + ", audience: worker}", binding: "GRPC", userAud: []string{gatewayAud},
			said: "serving alice (aud [worker])", owner: "alice", grant: idptest.GrantTokenExchange},
		{name: "client credentials over HTTP+JSON", cred: "{kind: clientCredentials, " + oauth + ", audience: worker}", binding: "HTTP+JSON", userAud: []string{gatewayAud},
			said: "serving gateway (aud [worker])", owner: gatewayClient, grant: idptest.GrantClientCredentials},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var binding []string
			if tc.binding != "" {
				binding = []string{tc.binding}
			}
			gw := startHopGateway(t, idp, w, tc.cred, binding...)
			before := len(idp.Requests())
			owned := len(w.tasksOf(t, idp, tc.owner))
			user := idp.Mint(t, map[string]any{"sub": "alice", "aud": tc.userAud})
			c := dialAs(t, gw, client.BearerToken(user))
			for range 2 { // the second call reuses the token
				task, said := ask(t, c, "who do you serve?")
				if task.Status.State != a2a.TaskStateCompleted || !strings.Contains(said, tc.said) {
					t.Fatalf("the gateway's task is %s saying %q, want it to say %q", task.Status.State, said, tc.said)
				}
			}
			if got := len(w.tasksOf(t, idp, tc.owner)) - owned; got != 2 {
				t.Errorf("%d new tasks of %s at the worker, want 2", got, tc.owner)
			}
			var grants []string
			for _, r := range idp.Requests()[before:] {
				grants = append(grants, r.GrantType)
			}
			if tc.grant != "" && (len(grants) != 1 || grants[0] != tc.grant) {
				t.Errorf("the IdP saw grants %v, want one %s", grants, tc.grant)
			}
			if tc.grant == "" && len(grants) != 0 {
				t.Errorf("the IdP saw grants %v, want none", grants)
			}
		})
	}
}

// TestHopCancel: cancelling the caller's task cancels the remote task
// with the caller's identity, which the remote agent admits as the
// task's owner, and the remote task ends CANCELED rather than working on
// for no one.
func TestHopCancel(t *testing.T) {
	idp := idptest.New(t, idptest.Config{Clients: map[string]string{gatewayClient: gatewaySecret}})
	w := serveHopWorker(t, idp)
	oauth := fmt.Sprintf("tokenURL: %q, clientID: %s, secretFile: %q", idp.TokenURL(), gatewayClient, secretFile(t, gatewaySecret))
	alice := (&auth.Principal{Issuer: idp.Issuer(), Subject: "alice"}).ID()
	for _, tc := range []struct{ name, cred, binding string }{
		{"forward", "{kind: forward}", "JSONRPC"},
		{"exchange", "{kind: exchange, " + oauth + ", audience: worker}", "JSONRPC"},
		{"forward over gRPC", "{kind: forward}", "GRPC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := startHopGateway(t, idp, w, tc.cred, tc.binding)
			c := dialAs(t, gw, client.BearerToken(idp.Mint(t, map[string]any{"sub": "alice", "aud": []string{gatewayAud, workerAud}})))
			ctx, cancel := context.WithTimeout(context.Background(), testBound)
			defer cancel()
			known := map[string]bool{}
			for _, task := range w.tasksOf(t, idp, "alice") {
				known[task.ID] = true
			}
			ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "wait for me"),
				Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}})
			if err != nil {
				t.Fatal(err)
			}
			task := ev.(*a2a.Task)
			remote := awaitTask(t, func() *a2a.Task {
				for _, r := range w.tasksOf(t, idp, "alice") {
					if !known[r.ID] && r.Status.State == a2a.TaskStateWorking {
						return r
					}
				}
				return nil
			})
			cancels := len(w.audit.admitted("CancelTask"))
			if got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("CancelTask at the gateway = %v, %v", got, err)
			}
			awaitTask(t, func() *a2a.Task {
				for _, r := range w.tasksOf(t, idp, "alice") {
					if r.ID == remote.ID && r.Status.State == a2a.TaskStateCanceled {
						return r
					}
				}
				return nil
			})
			if got := w.audit.admitted("CancelTask")[cancels:]; len(got) != 1 || got[0] != alice {
				t.Errorf("the worker admitted CancelTask for %v, want alice (%s) once", got, alice)
			}
		})
	}
}

// awaitTask polls find until it returns a task, within testBound.
func awaitTask(t *testing.T, find func() *a2a.Task) *a2a.Task {
	t.Helper()
	deadline := time.Now().Add(testBound)
	for {
		if task := find(); task != nil {
			return task
		}
		if time.Now().After(deadline) {
			t.Fatalf("the remote task did not come within %s", testBound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHopCredentialFailures: a credential that cannot be had, or that the
// agent refuses, fails the caller's task with an error naming the agent
// and why, and sends nothing the agent would act on.
func TestHopCredentialFailures(t *testing.T) {
	idp := idptest.New(t, idptest.Config{Clients: map[string]string{gatewayClient: gatewaySecret}})
	w := serveHopWorker(t, idp)
	expired := idp.Mint(t, map[string]any{"sub": "gateway", "aud": workerAud, "exp": time.Now().Add(-time.Hour).Unix()})
	user := client.BearerToken(idp.Mint(t, map[string]any{"sub": "alice", "aud": gatewayAud}))
	for _, tc := range []struct {
		name, cred string
		as         client.CallOption
		want       []string // substrings of what the failed task says
	}{
		{"expired token", fmt.Sprintf("{kind: bearer, secretFile: %q}", secretFile(t, expired)), user,
			[]string{"remote agent worker at " + w.s.URL(), "invalid credentials: token expired"}},
		{"client secret refused", fmt.Sprintf("{kind: clientCredentials, tokenURL: %q, clientID: gateway, secretFile: %q, audience: worker}", idp.TokenURL(), secretFile(t, "wrong-secret")), user,
			[]string{"remote agent worker at " + w.s.URL(), "credentials: client credentials of gateway", "token endpoint " + idp.TokenURL(), "invalid_client"}},
		{"no caller's token to forward", "{kind: forward}", client.APIKey("X-API-Key", apiUserKey),
			[]string{"remote agent worker at " + w.s.URL(), `agent "worker"`, "no caller's bearer token", "apikey|api-user"}},
		{"no caller's token to exchange", fmt.Sprintf("{kind: exchange, tokenURL: %q, clientID: gateway, secretFile: %q, audience: worker}", idp.TokenURL(), secretFile(t, gatewaySecret)),
			client.APIKey("X-API-Key", apiUserKey), []string{"remote agent worker at " + w.s.URL(), "token exchange", "no caller's bearer token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gw := startHopGateway(t, idp, w, tc.cred)
			admitted := len(w.audit.admitted("SendStreamingMessage"))
			task, said := ask(t, dialAs(t, gw, tc.as), "who do you serve?")
			if task.Status.State != a2a.TaskStateFailed {
				t.Fatalf("the task is %s saying %q, want FAILED", task.Status.State, said)
			}
			for _, want := range tc.want {
				if !strings.Contains(said, want) {
					t.Errorf("the failed task says %q, without %q", said, want)
				}
			}
			if strings.Contains(said, gatewaySecret) || strings.Contains(said, "wrong-secret") || strings.Contains(said, expired) {
				t.Errorf("the failure holds a secret: %q", said)
			}
			if n := len(w.audit.admitted("SendStreamingMessage")) - admitted; n != 0 {
				t.Errorf("the worker admitted %d calls", n)
			}
		})
	}
}
