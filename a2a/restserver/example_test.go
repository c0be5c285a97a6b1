package restserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// greeter greets whoever it is told about.
type greeter struct{}

func (greeter) Execute(ctx context.Context, req *server.ExecRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		reply := a2a.NewTextMessage(a2a.RoleAgent, "Hello, "+req.Message.Text()+"!")
		yield(a2a.NewStatusUpdate(req.TaskID, req.ContextID, a2a.TaskStateCompleted, reply), nil)
	}
}

func (greeter) Cancel(context.Context, *a2a.Task) error { return nil }

// Both HTTP bindings of one Handler on one port, at one base URL: the
// HTTP+JSON routes, JSON-RPC at "/" and the card that lists both. A task
// made over one binding is read over the other.
func ExampleServer_Serve() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	h, err := server.New(server.Config{
		Card: &a2a.AgentCard{
			Name:        "greeter",
			Description: "Greets whoever it is told about.",
			Version:     "1.0.0",
			SupportedInterfaces: []a2a.AgentInterface{
				{URL: url + "/", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version},
				{URL: url + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			},
		},
		Executor: greeter{},
	})
	if err != nil {
		log.Fatal(err)
	}
	rpc, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := restserver.New(h, restserver.Config{JSONRPC: rpc})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln, time.Second) }()
	defer func() {
		stop()
		if err := <-served; err != nil {
			log.Print(err)
		}
		h.Close(context.Background())
	}()

	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	// POST /message:send with the SendMessageRequest as the body.
	resp, err := client.Post(url+"/message:send", "application/a2a+json",
		strings.NewReader(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Ada"}]}}`))
	if err != nil {
		log.Fatal(err)
	}
	var sent a2a.StreamResponse
	err = json.NewDecoder(resp.Body).Decode(&sent)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), sent.Task.Status.Message.Text())

	// The same task over JSON-RPC.
	req, err := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+sent.Task.ID+`"}}`))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", a2a.Version)
	resp, err = client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	var got struct{ Result a2a.Task }
	err = json.NewDecoder(resp.Body).Decode(&got)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(got.Result.Status.State)

	// Errors are google.rpc.Status objects.
	resp, err = client.Get(url + "/tasks/no-such-task")
	if err != nil {
		log.Fatal(err)
	}
	var status struct {
		Error struct {
			Code   int
			Status string
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&status)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, status.Error.Status)
	// Output:
	// 200 application/a2a+json Hello, Ada!
	// TASK_STATE_COMPLETED
	// 404 NOT_FOUND
}

// The HTTP+JSON binding, with JSON-RPC beside it, as an http.Handler in a
// net/http server of one's own, next to one's other handlers.
func ExampleServer_ServeHTTP() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	h, err := server.New(server.Config{
		Card: &a2a.AgentCard{
			Name: "greeter", Description: "Greets whoever it is told about.", Version: "1.0.0",
			SupportedInterfaces: []a2a.AgentInterface{
				{URL: url + "/", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version},
				{URL: url + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
			},
		},
		Executor: greeter{},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(context.Background())
	rpc, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := restserver.New(h, restserver.Config{JSONRPC: rpc})
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.Handle("/", srv)
	srv.Listening(ln.Addr()) // requests may name the listener's address
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Post(url+"/message:send", "application/json",
		strings.NewReader(`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Grace"}]}}`))
	if err != nil {
		log.Fatal(err)
	}
	var sent a2a.StreamResponse
	err = json.NewDecoder(resp.Body).Decode(&sent)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, sent.Task.Status.Message.Text())
	// Output:
	// 200 Hello, Grace!
}
