package grpcclient_test

import (
	"syscall"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/grpcclient"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// BenchmarkBindings compares gRPC, in plain text and over TLS, with
// JSON-RPC in one process, all served over the same Handler (the echo
// agent) on 127.0.0.1: a blocking
// SendMessage, and a streamed send (the task, 12 updates), one call at a
// time and in parallel.
//
//	go test -run '^$' -bench Bindings -benchmem ./a2a/grpcclient
func BenchmarkBindings(b *testing.B) {
	grpcLn, httpLn := listen(b), listen(b)
	card := grpcCard(grpcLn.Addr().String(), "")
	card.SupportedInterfaces = append(card.SupportedInterfaces, a2a.AgentInterface{
		URL: "http://" + httpLn.Addr().String() + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version,
	})
	f := serveGRPC(b, grpcLn, server.Config{Card: card, Executor: &echo.Executor{}}, false)
	a2atest.ServeOn(b, httpLn, f.h, jsonrpcserver.Config{})
	// gRPC over TLS runs on grpcserver's transport on Go's net package.
	ca, tlsLn := a2atest.NewCA(b), listen(b)
	serveHandler(b, tlsLn, f.h, grpcserver.Config{Grace: 100 * time.Millisecond, TLS: ca.ServerTLS(b)})

	clients := []struct {
		name    string
		card    *a2a.AgentCard
		binding client.Binding
	}{
		{"gRPC", card, grpcclient.Binding(grpcclient.Config{})},
		{"gRPC+TLS", grpcCard(tlsLn.Addr().String(), ""), grpcclient.Binding(grpcclient.Config{TLS: ca.ClientTLS()})},
		{"JSON-RPC", card, client.JSONRPC},
	}
	for _, cl := range clients {
		c, err := client.NewFromCard(cl.card, client.Config{Bindings: []client.Binding{cl.binding}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		send := func(b *testing.B) {
			if _, err := c.SendMessage(b.Context(), sendReq("hello")); err != nil {
				b.Fatal(err)
			}
		}
		stream := func(b *testing.B) {
			evs, err := collect(c.SendStreamingMessage(b.Context(), sendReq("hello, streamed")))
			if err != nil || len(evs) != 13 {
				b.Fatalf("%d events, %v", len(evs), err)
			}
		}
		for _, op := range []struct {
			name string
			call func(*testing.B)
		}{{"send", send}, {"stream", stream}} {
			b.Run(cl.name+"/"+op.name, func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					op.call(b)
				}
			})
			b.Run(cl.name+"/"+op.name+"/parallel", func(b *testing.B) {
				b.ReportAllocs()
				defer reportCPU(b)()
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						op.call(b)
					}
				})
			})
		}
	}
}

// reportCPU reports the process's CPU time (user and system, client and
// server together) per operation, which a machine shared with other work
// disturbs less than the time per operation: call the function it returns
// when the loop is done.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(b.N), "cpu-us/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
