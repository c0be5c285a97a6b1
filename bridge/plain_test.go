package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/a2a/taskstore"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/internal/adktest"
	"github.com/a2amesh/a2amesh/services/echo"
)

func newClient(t *testing.T, url string) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), url, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// A plain A2A client sees a sensible task: the answer as an artifact, the
// steps as WORKING status messages in the history.
func TestPlainClientSeesATask(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(callTool("get_weather", `{"city":"Rome"}`), answer("Sunny in Rome."))
	c := newClient(t, serveAgent(t, agent(t, "WeatherAgent", "weather", m, weatherTool(t))))
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "weather in Rome?")})
	if err != nil {
		t.Fatal(err)
	}
	task := ev.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 || task.Artifacts[0].Text() != "Sunny in Rome." {
		t.Fatalf("task %+v", task)
	}
	var steps []string
	for _, h := range task.History {
		if h.Role == a2a.RoleAgent {
			steps = append(steps, h.Text())
		}
	}
	if !slices.Contains(steps, `[WeatherAgent] calls get_weather({"city":"Rome"})`) ||
		!slices.Contains(steps, "[WeatherAgent] get_weather returned: the temperature in Rome is 25°C") {
		t.Fatalf("history %q", steps)
	}
}

// A second task in the same context sees the earlier turns.
func TestContextKeepsTheConversation(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(answer("Nice to meet you, Ann."), answer("You are Ann."))
	c := newClient(t, serveAgent(t, agent(t, "Chat", "chats", m)))
	first, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "I am Ann")})
	if err != nil {
		t.Fatal(err)
	}
	second := a2a.NewTextMessage(a2a.RoleUser, "Who am I?")
	second.ContextID = first.(*a2a.Task).ContextID
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: second}); err != nil {
		t.Fatal(err)
	}
	got := adktest.DescribeInput(m.Calls()[1].Input)
	if !slices.Equal(got, []string{"user: I am Ann", "assistant: Nice to meet you, Ann.", "user: Who am I?"}) {
		t.Fatalf("second turn's input %q", got)
	}
}

// A plain client answers an INPUT_REQUIRED task with a follow-up message;
// the run resumes with its text.
func TestPlainClientAnswersAQuestion(t *testing.T) {
	ctx := context.Background()
	booker := agent(t, "Booker", "books", modeltest.New(callTool("ask_user", `{"question":"Which day?"}`), answer("Booked.")),
		mustTool(t, "ask_user", "Ask the person", ask))
	c := newClient(t, serveAgent(t, booker))
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "book")})
	if err != nil {
		t.Fatal(err)
	}
	task := ev.(*a2a.Task)
	if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message.Text() != "please answer: Which day?" {
		t.Fatalf("task %+v", task.Status)
	}
	reply := a2a.NewTextMessage(a2a.RoleUser, "Monday")
	reply.TaskID, reply.ContextID = task.ID, task.ContextID
	ev, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply})
	if err != nil {
		t.Fatal(err)
	}
	if task := ev.(*a2a.Task); task.Status.State != a2a.TaskStateCompleted || task.Artifacts[len(task.Artifacts)-1].Text() != "Booked." {
		t.Fatalf("task after the answer %+v", task)
	}
}

// A RemoteAgent works with an A2A agent that knows nothing of ADK: the echo
// agent's answers, its question and its answer to a follow-up.
func TestRemoteAgentOverAPlainA2AAgent(t *testing.T) {
	ctx := context.Background()
	ln, url := a2atest.Listen(t)
	a2atest.ServeOn(t, ln, a2atest.NewHandler(t, server.Config{Card: echo.Card(url), Executor: new(echo.Executor)}), jsonrpcserver.Config{})
	echo := remote(t, url)
	for _, streaming := range []bool{false, true} {
		evs := adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: echo, EnableStreaming: streaming}).Query(ctx, "hello there"))
		adktest.Expect(t, evs, `echo [echo] says "hello there"`)
	}
	store := &adk.MemoryCheckPointStore{}
	r := adk.NewRunner(ctx, adk.RunnerConfig{Agent: echo, CheckPointStore: store})
	evs := adktest.Drain(t, r.Query(ctx, "input: first", adk.WithCheckPointID("t")))
	p := adktest.Interrupted(t, evs).Points[0]
	if p.ID != "echo" || !strings.Contains(p.Info.(string), "send another message") {
		t.Fatalf("point %+v", p)
	}
	it, err := r.Resume(ctx, "t", adk.ResumeWith(p.ID, "the answer"))
	if err != nil {
		t.Fatal(err)
	}
	adktest.Expect(t, adktest.Drain(t, it), `echo [echo] says "the answer"`)
}

// Run metadata no caller of ours sends is refused with -32602.
func TestBadRunMetadata(t *testing.T) {
	ctx := context.Background()
	c := newClient(t, serveAgent(t, agent(t, "Chat", "chats", modeltest.New())))
	for _, meta := range []string{
		`{"input":[null]}`, `{"run_path":[{"agent":""}]}`, `{"callers":[{"description":"x"}]}`, `{"input":"not a list"}`,
		`{"resume_task":"` + strings.Repeat("t", 129) + `"}`,
		`{"resume":{"` + strings.Repeat("p", 4097) + `":"x"}}`,
	} {
		var m any
		_ = json.Unmarshal([]byte(meta), &m)
		_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "x"),
			Metadata: map[string]any{bridge.KeyRun: m}})
		if !errors.Is(err, a2a.ErrInvalidParams) {
			t.Errorf("%s: %v", meta, err)
		}
	}
}

// A conversation is its caller's: another caller naming its context id
// starts a conversation of its own and reads nothing of the first, whose
// caller still has all of it.
func TestConversationIsTheCallers(t *testing.T) {
	ctx := context.Background()
	m := modeltest.New(answer("Nice to meet you, Ann."), answer("I do not know you."), answer("You are Ann."))
	a := agent(t, "Chat", "chats", m)
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{
		{Key: "alice-key-0123456789", Name: "alice"}, {Key: "bob-key-0123456789ab", Name: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{keys}, Audit: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tasks := new(taskstore.Memory)
	exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: a, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	ln, url := a2atest.Listen(t)
	a2atest.ServeOn(t, ln, a2atest.NewHandler(t, server.Config{Card: bridge.Card(ctx, a, url), Executor: exec, Tasks: tasks, Gate: gate}), jsonrpcserver.Config{})
	c := newClient(t, url)
	alice, bob := client.APIKey("X-API-Key", "alice-key-0123456789"), client.APIKey("X-API-Key", "bob-key-0123456789ab")
	first, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "I am Ann")}, alice)
	if err != nil {
		t.Fatal(err)
	}
	say := func(text string, who client.CallOption) {
		t.Helper()
		msg := a2a.NewTextMessage(a2a.RoleUser, text)
		msg.ContextID = first.(*a2a.Task).ContextID
		if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg}, who); err != nil {
			t.Fatal(err)
		}
	}
	say("Who am I?", bob)
	if got := adktest.DescribeInput(m.Calls()[1].Input); !slices.Equal(got, []string{"user: Who am I?"}) {
		t.Fatalf("bob's turn in alice's context saw %q", got)
	}
	say("Who am I?", alice)
	if got := adktest.DescribeInput(m.Calls()[2].Input); !slices.Equal(got, []string{"user: I am Ann", "assistant: Nice to meet you, Ann.", "user: Who am I?"}) {
		t.Fatalf("alice's second turn saw %q", got)
	}
}
