package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/cloudwego/hertz/pkg/app/server"

	"github.com/a2amesh/a2amesh/gateway/console"
)

// Serve a console beside routes of one's own (a gateway does this through
// serve.Config.Routes) and read its topology: one agent, down.
func Example() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := server.New(server.WithListener(ln), server.WithExitWaitTime(time.Second))
	console.New(console.Config{Name: "Mesh", Agents: map[string]string{"weather": "http://127.0.0.1:1/"},
		Hosts: console.HostsOf("", ln.Addr())}).Register(ctx, h)
	ran := make(chan error, 1)
	go func() { ran <- h.Run() }()
	defer func() { h.Shutdown(context.Background()); <-ran }()

	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := hc.Get("http://" + ln.Addr().String() + console.Path + "api/topology")
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var topo console.Topology
	if err := json.Unmarshal(b, &topo); err != nil {
		panic(err)
	}
	for _, a := range topo.Agents {
		fmt.Println(topo.Name, a.Key, a.URL, "ready:", a.Ready)
	}
	// Output:
	// Mesh weather http://127.0.0.1:1/ ready: false
}
