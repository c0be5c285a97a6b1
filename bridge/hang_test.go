package bridge_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/adk/model/modeltest"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/adktest"
)

// testBound bounds the waits of tests whose remote agent hangs: a run
// that waits for ever fails them.
const testBound = 10 * time.Second

// hungAgent serves an agent card naming itself, and hangs on every A2A
// call as a stopped process does: with firstEvent, a stream gets the
// task's first event first. It hangs until the test ends or the client
// goes away.
func hungAgent(t *testing.T, firstEvent bool) string {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	var url string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			card := &a2a.AgentCard{Name: "Sleeper", Description: "stops", SupportedInterfaces: []a2a.AgentInterface{
				{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version}}}
			b, err := a2av03.CardJSON(card)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write(b)
			return
		}
		body, _ := io.ReadAll(r.Body)
		req, _ := jsonrpc.DecodeRequest(body)
		if firstEvent && req.Method == jsonrpc.OpSendStreamingMessage.Method(a2a.Version) {
			task := &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
			data, err := jsonrpc.AppendResult(nil, req.ID, a2a.Wrap(task))
			if err != nil {
				panic(err)
			}
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: 1\ndata: " + string(data) + "\n\n"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	url = s.URL + "/"
	t.Cleanup(s.Close)
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	return url
}

// Point 8: an agent that hangs (accepts connections, never answers) is an
// error event naming it and its URL, in bounded time, as a dead one is.
func TestHungRemoteAgent(t *testing.T) {
	for _, tc := range []struct {
		name       string
		firstEvent bool
	}{
		{"before the first event", false},
		{"after the first event", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			url := hungAgent(t, tc.firstEvent)
			r, err := bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: url, IdleTimeout: 300 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Client().CloseIdleConnections)
			done := make(chan []*adk.AgentEvent, 1)
			go func() { done <- adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: r}).Query(ctx, "hi")) }()
			var evs []*adk.AgentEvent
			select {
			case evs = <-done:
			case <-time.After(testBound):
				t.Fatalf("the run still waits for the hung agent after %s", testBound)
			}
			last := evs[len(evs)-1]
			if last.Err == nil || !strings.Contains(last.Err.Error(), "remote agent Sleeper at "+url+":") {
				t.Fatalf("events %q, want an error naming Sleeper at %s", adktest.DescribeAll(evs), url)
			}
			if !errors.Is(last.Err, client.ErrTimeout) {
				t.Errorf("error %v does not match client.ErrTimeout", last.Err)
			}
		})
	}
}

// The URL is what the caller trusts: a card there that names an
// interface elsewhere is refused at once (not retried for Wait), unless
// the other origin is allowed.
func TestRemoteAgentInterfaceOrigin(t *testing.T) {
	ctx := context.Background()
	target := serveAgent(t, agent(t, "Elsewhere", "answers from another origin", modeltest.New(answer("here"))))
	cardSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		card := &a2a.AgentCard{Name: "Elsewhere", SupportedInterfaces: []a2a.AgentInterface{
			{URL: target, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version}}}
		b, _ := a2av03.CardJSON(card)
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	t.Cleanup(cardSrv.Close)

	wctx, cancel := context.WithTimeout(ctx, testBound)
	defer cancel()
	_, err := bridge.NewRemoteAgent(wctx, bridge.RemoteConfig{URL: cardSrv.URL, Wait: time.Hour})
	if !errors.Is(err, client.ErrOriginRefused) || !strings.Contains(err.Error(), target) {
		t.Fatalf("NewRemoteAgent = %v, want the interface's origin refused", err)
	}

	r, err := bridge.NewRemoteAgent(ctx, bridge.RemoteConfig{URL: cardSrv.URL, AllowedOrigins: []string{target}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Client().CloseIdleConnections)
	adktest.Expect(t, adktest.Drain(t, adk.NewRunner(ctx, adk.RunnerConfig{Agent: r}).Query(ctx, "where?")),
		`Elsewhere [Elsewhere] says "here"`)
}
