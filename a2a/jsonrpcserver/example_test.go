package jsonrpcserver_test

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

// A Server puts a server.Handler on the network: JSON-RPC at "/" and the
// agent card at CardPath, on a listener of the caller's. Any HTTP client
// can call it; a2a/client is the one that speaks the whole protocol.
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
				{URL: url + "/", ProtocolBinding: "JSONRPC", ProtocolVersion: a2a.Version},
			},
		},
		Executor: greeter{},
	})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := jsonrpcserver.New(h, jsonrpcserver.Config{})
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

	resp, err := client.Get(url + jsonrpcserver.CardPath)
	if err != nil {
		log.Fatal(err)
	}
	var card a2a.AgentCard
	err = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(card.Name+":", card.Description)

	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
		"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Ada"}]}}}`
	req, err := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", a2a.Version)
	resp, err = client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	var reply struct {
		Result a2a.StreamResponse `json:"result"`
	}
	err = json.NewDecoder(resp.Body).Decode(&reply)
	resp.Body.Close()
	if err != nil {
		log.Fatal(err)
	}
	task := reply.Result.Task
	fmt.Println(resp.StatusCode, task.Status.State, task.Status.Message.Text())
	// Output:
	// greeter: Greets whoever it is told about.
	// 200 TASK_STATE_COMPLETED Hello, Ada!
}
