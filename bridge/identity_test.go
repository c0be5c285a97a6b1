package bridge_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/credentials"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/adk/schema"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/idptest"
)

// serveGated serves agent behind a gate that admits the IdP's tokens for
// audience, and returns its URL.
func serveGated(t *testing.T, agent adk.Agent, idp *idptest.IdP, audience string) string {
	t.Helper()
	ctx := context.Background()
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{idp.Authenticator(t, audience)}})
	if err != nil {
		t.Fatal(err)
	}
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: agent})
	if err != nil {
		t.Fatal(err)
	}
	ln, url := a2atest.Listen(t)
	a2atest.ServeOn(t, ln, a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, agent, url), Executor: exec, Gate: gate}), jsonrpcserver.Config{})
	return url
}

// TestResumeCarriesTheResumingCaller: a run that calls a remote agent on
// its caller's behalf does so, through an interrupt, with the identity of
// whoever sends each message: the remote agent's resumed run sees the
// credential the resuming message came with, not the one the run began
// with.
func TestResumeCarriesTheResumingCaller(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idp := idptest.New(t, idptest.Config{})
	var mu sync.Mutex
	var seen []string // who the Booker's tool ran for: subject/session
	booker := agent(t, "Booker", "Books trips", modeltest.FromScript(func(_ context.Context, _ int, in []*schema.Message, _ []*schema.ToolInfo) (*schema.Message, error) {
		if last := in[len(in)-1]; last.Role == schema.Tool {
			return answer("Booked: " + last.Content), nil
		}
		return callTool("ask_user", `{"question":"Which day?"}`), nil
	}), mustTool(t, "ask_user", "Ask the person", func(ctx context.Context, in askIn) (string, error) {
		who := "no one"
		if p := auth.FromContext(ctx); p != nil {
			who = fmt.Sprintf("%s/%v", p.Subject, p.Claims["session"])
		}
		mu.Lock()
		seen = append(seen, who)
		mu.Unlock()
		return ask(ctx, in)
	}))
	bookerURL := serveGated(t, booker, idp, "booker")
	toBooker, err := bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: bookerURL, Credentials: credentials.Forward{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(toBooker.Client().CloseIdleConnections)
	router := modeltest.FromScript(func(context.Context, int, []*schema.Message, []*schema.ToolInfo) (*schema.Message, error) {
		return callTool(adk.TransferToAgentToolName, `{"agent_name":"Booker"}`), nil
	})
	front, err := adk.SetSubAgents(ctx, agent(t, "Front", "Takes requests", router), []adk.Agent{toBooker})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, serveGated(t, front, idp, "front"))
	as := func(session string) client.CallOption {
		return client.BearerToken(idp.Mint(t, map[string]any{"sub": "alice", "aud": []string{"front", "booker"}, "session": session}))
	}

	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "book a trip")}, as("first"))
	if err != nil {
		t.Fatal(err)
	}
	task := ev.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task is %s: %s", task.Status.State, task.Status.Message.Text())
	}
	reply := a2a.NewTextMessage(a2a.RoleUser, "Friday")
	reply.TaskID, reply.ContextID = task.ID, task.ContextID
	ev, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply}, as("second"))
	if err != nil {
		t.Fatal(err)
	}
	if task := ev.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resumed task is %s: %s", task.Status.State, task.Status.Message.Text())
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"alice/first", "alice/second"}; !slices.Equal(seen, want) {
		t.Errorf("the Booker's tool ran for %v, want %v", seen, want)
	}
}
