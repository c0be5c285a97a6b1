// Command a2agoecho serves the echo agent built on a2a-go v2.4.0 (package
// bench/peers/goecho), for side-by-side benchmarks: JSON-RPC with
// net/http on --addr, and with --rest-addr and --grpc-addr also a2a-go's
// HTTP+JSON binding (net/http) and gRPC binding (grpc-go), each on its
// own address. One request handler is behind every binding, and the card
// lists each binding served. --slow-interval and --debug-addr are for
// holding thousands of tasks and streams open and counting what they
// cost (a2aload streams).
package main

import (
	"errors"
	"flag"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	a2agrpc "github.com/a2aproject/a2a-go/v2/a2agrpc/v1"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"google.golang.org/grpc"

	"github.com/a2amesh/a2amesh/bench/peers/goecho"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:9102", "address to serve JSON-RPC and the agent card on")
	restAddr := flag.String("rest-addr", "", "address to serve the HTTP+JSON binding on as well (empty: none)")
	grpcAddr := flag.String("grpc-addr", "", "address to serve the gRPC binding on as well (empty: none)")
	slow := flag.Duration("slow-interval", 0, "time between the 20 chunks of a \"slow:\" run (0: 250 ms)")
	debugAddr := flag.String("debug-addr", "", "address for /debug/pprof/ (empty: off)")
	flag.Parse()
	if err := serve(*addr, *restAddr, *grpcAddr, *debugAddr, goecho.Options{Executor: goecho.Executor{SlowInterval: *slow}}); err != nil {
		log.Fatal(err)
	}
}

// serve runs every binding asked for, and the profiling endpoints, until
// one of them fails. The listeners are open before any binding serves,
// so a client that reads the card can reach every interface it lists.
func serve(addr, restAddr, grpcAddr, debugAddr string, opts goecho.Options) error {
	card := goecho.Card("http://"+addr+"/", false)
	jsonrpcLn, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	var restLn, grpcLn net.Listener
	if restAddr != "" {
		if restLn, err = net.Listen("tcp", restAddr); err != nil {
			return err
		}
		card.SupportedInterfaces = append(card.SupportedInterfaces, &a2a.AgentInterface{
			URL: "http://" + restAddr + "/", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0",
		})
	}
	if grpcAddr != "" {
		if grpcLn, err = net.Listen("tcp", grpcAddr); err != nil {
			return err
		}
		card.SupportedInterfaces = append(card.SupportedInterfaces, &a2a.AgentInterface{
			URL: grpcAddr, ProtocolBinding: a2a.TransportProtocolGRPC, ProtocolVersion: "1.0",
		})
	}
	var debugLn net.Listener
	if debugAddr != "" {
		if debugLn, err = net.Listen("tcp", debugAddr); err != nil {
			return err
		}
	}
	rh := goecho.NewRequestHandler(card, opts)
	failed := make(chan error, 4)
	go func() { failed <- http.Serve(jsonrpcLn, goecho.NewJSONRPCHandler(card, rh)) }()
	if restLn != nil {
		go func() { failed <- http.Serve(restLn, a2asrv.NewRESTHandler(rh)) }()
	}
	if grpcLn != nil {
		s := grpc.NewServer()
		a2agrpc.NewHandler(rh).RegisterWith(s)
		go func() { failed <- s.Serve(grpcLn) }()
	}
	if debugLn != nil {
		// pprof.Index serves every named profile: goroutine, heap, ….
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { failed <- srv.Serve(debugLn) }()
	}
	err = <-failed // the process exits on it: the other bindings end with it
	if err == nil {
		err = errors.New("a binding stopped serving")
	}
	return err
}
