package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	a2ago "github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/a2amesh/a2amesh/bench/peers/goecho"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

func TestEndpointOf(t *testing.T) {
	for _, tc := range []struct {
		binding, url string
		want         endpoint
		err          bool
	}{
		{bindingJSONRPC, "http://127.0.0.1:9001/", endpoint{bindingJSONRPC, "127.0.0.1:9001", "/"}, false},
		{bindingREST, "http://127.0.0.1:9001/a2a", endpoint{bindingREST, "127.0.0.1:9001", "/a2a/"}, false},
		{bindingREST, "http://[::1]:9001", endpoint{bindingREST, "[::1]:9001", "/"}, false},
		{bindingGRPC, "127.0.0.1:9002", endpoint{bindingGRPC, "127.0.0.1:9002", "/"}, false},
		{bindingGRPC, "grpc://127.0.0.1:9002", endpoint{bindingGRPC, "127.0.0.1:9002", "/"}, false},
		{bindingJSONRPC, "http://agent.example:9001/", endpoint{}, true},
		{bindingJSONRPC, "http://10.0.0.1:9001/", endpoint{}, true},
		{bindingREST, "https://127.0.0.1:9001/", endpoint{}, true},
		{bindingGRPC, "127.0.0.1", endpoint{}, true},
	} {
		got, err := endpointOf(tc.binding, tc.url)
		if tc.err {
			if err == nil {
				t.Errorf("endpointOf(%s, %q) = %+v, want an error", tc.binding, tc.url, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("endpointOf(%s, %q) = %+v, %v; want %+v", tc.binding, tc.url, got, err, tc.want)
		}
	}
}

func TestSSEData(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"ids and blank lines", "id: 1\ndata: {\"a\":1}\n\nid: 2\ndata: {\"b\":2}\n\n", []string{`{"a":1}`, `{"b":2}`}},
		{"CRLF, no space, no final blank line", "data:{\"a\":1}\r\n\r\ndata: x", []string{`{"a":1}`, "x"}},
		{"data lines joined", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"comments and events without data", ": keep-alive\n\nevent: ping\n\n", nil},
	} {
		var got []string
		for _, d := range sseData([]byte(tc.body)) {
			got = append(got, string(d))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: sseData = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCheckEcho(t *testing.T) {
	send, stream := scenarios["send"], scenarios["stream"]
	good := []echoEvent{{kind: "task", state: "TASK_STATE_SUBMITTED"}, {kind: "statusUpdate", state: "TASK_STATE_WORKING"}}
	for _, c := range []string{"h", "e", "l", "l", "o", " ", "w", "o", "r", "ld"} {
		good = append(good, echoEvent{kind: "artifactUpdate", text: c})
	}
	good = append(good, echoEvent{kind: "statusUpdate", state: completed})
	for _, tc := range []struct {
		name string
		sc   scenario
		evs  []echoEvent
		ok   bool
	}{
		{"completed task", send, []echoEvent{{kind: "task", state: completed, text: "hello"}}, true},
		{"failed task", send, []echoEvent{{kind: "task", state: "TASK_STATE_FAILED", text: "hello"}}, false},
		{"wrong text", send, []echoEvent{{kind: "task", state: completed, text: "hell"}}, false},
		{"a message", send, []echoEvent{{kind: "message"}}, false},
		{"whole stream", stream, good, true},
		{"stream cut short", stream, good[:12], false},
		{"stream not ending completed", stream, append(good[:12:12], echoEvent{kind: "statusUpdate", state: "TASK_STATE_FAILED"}), false},
	} {
		err := checkEcho(tc.sc, tc.evs)
		if (err == nil) != tc.ok {
			t.Errorf("%s: checkEcho = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestDrivers runs every load driver against both echo servers, in this
// process, on each binding their cards list: verify accepts the answers,
// and a run bounded by its request count makes exactly that many, none
// failing.
func TestDrivers(t *testing.T) {
	ctx := context.Background()
	servers := map[string]string{"a2amesh": startOurs(t), "a2a-go": startPeer(t)}
	for name, addr := range servers {
		eps, err := cardEndpoints(ctx, addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "a2a-go" && len(eps) != 3 {
			t.Fatalf("a2a-go's card lists %v, want every binding", eps)
		}
		for _, ep := range eps {
			for _, key := range []string{"send", "stream"} {
				sc := scenarios[key]
				t.Run(fmt.Sprintf("%s/%s/%s", name, ep.binding, key), func(t *testing.T) {
					if err := verify(ctx, ep, sc, nil); err != nil {
						t.Fatal(err)
					}
					const n = 25
					b := &bindingsBench{conns: 4, grpcConns: 2, maxReq: n}
					run, err := b.driver(ctx, ep, sc)
					if err != nil {
						t.Fatal(err)
					}
					res, err := run(time.Minute) // the count ends it
					if err != nil || res.Requests != n || res.Errors != 0 || res.Refused != 0 {
						t.Fatalf("run = %d requests, %d errors, %d refused, %v; want %d, none failed", res.Requests, res.Errors, res.Refused, err, n)
					}
				})
			}
		}
	}
}

// startOurs serves a2amesh's echo agent on JSON-RPC and gRPC as
// `a2amesh serve echo` does, until the test ends, and returns the
// JSON-RPC address.
func startOurs(t *testing.T) string {
	t.Helper()
	ln, gln := listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{
		Listener: ln, GRPCListener: gln, Retention: 5 * time.Second, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("a2amesh: %v", err)
		}
	})
	return ln.Addr().String()
}

// startPeer serves a2a-go's echo peer on its three bindings as
// a2agoecho does, until the test ends, and returns the JSON-RPC address.
func startPeer(t *testing.T) string {
	t.Helper()
	ln, rln, gln := listen(t), listen(t), listen(t)
	card := goecho.Card("http://"+ln.Addr().String()+"/", false)
	card.SupportedInterfaces = append(card.SupportedInterfaces,
		&a2ago.AgentInterface{URL: "http://" + rln.Addr().String() + "/", ProtocolBinding: a2ago.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		&a2ago.AgentInterface{URL: gln.Addr().String(), ProtocolBinding: a2ago.TransportProtocolGRPC, ProtocolVersion: "1.0"})
	rh := goecho.NewRequestHandler(card, goecho.Options{})
	for _, s := range []struct {
		ln net.Listener
		h  http.Handler
	}{{ln, goecho.NewJSONRPCHandler(card, rh)}, {rln, a2asrv.NewRESTHandler(rh)}} {
		srv := httptest.NewUnstartedServer(s.h)
		srv.Listener.Close()
		srv.Listener = s.ln
		srv.Start()
		t.Cleanup(srv.Close)
	}
	gs := grpc.NewServer()
	a2agrpc.NewHandler(rh).RegisterWith(gs)
	done := make(chan error, 1)
	go func() { done <- gs.Serve(gln) }()
	t.Cleanup(func() {
		gs.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("a2a-go gRPC: %v", err)
		}
	})
	return ln.Addr().String()
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
