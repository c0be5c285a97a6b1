package grpcserver

import (
	"context"
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/cloudwego/kitex/client"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"

	"github.com/a2amesh/a2amesh/a2a"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/internal/pbconv"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/proto/a2apb"
	"github.com/a2amesh/a2amesh/proto/a2apb/a2aservice"
	"github.com/a2amesh/a2amesh/services/echo"
)

// serveTLS runs a Server with cfg over TLS of ca, verifying client
// certificates of ca when given, and returns its address and a function
// that stops it and returns Serve's error.
func serveTLS(t *testing.T, ca *a2atest.CA, hcfg server.Config, cfg Config) (addr string, stop func() error) {
	t.Helper()
	hcfg.Card = echo.Card("127.0.0.1:0")
	if hcfg.Executor == nil {
		hcfg.Executor = &echo.Executor{SlowChunks: 4, SlowInterval: 20 * time.Millisecond}
	}
	h := a2atest.NewHandler(t, hcfg)
	cfg.TLS = ca.ServerTLS(t)
	srv, err := New(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var served error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			served = <-done
		}
		return served
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		if err := h.Close(cctx); err != nil {
			t.Errorf("close handler: %v", err)
		}
	})
	return ln.Addr().String(), stop
}

// tlsClient returns a Kitex client of addr that trusts ca and presents
// certs.
func tlsClient(t *testing.T, addr string, ca *a2atest.CA, certs ...tls.Certificate) a2aservice.Client {
	t.Helper()
	tc := ca.ClientTLS(certs...)
	tc.ServerName = "127.0.0.1"
	cli, err := a2aservice.NewClient("lf.a2a.v1.A2AService", client.WithHostPorts(addr), client.WithRPCTimeout(30*time.Second),
		client.WithGRPCTLSConfig(tc))
	if err != nil {
		t.Fatal(err)
	}
	return cli
}

// TestMutualTLS: over TLS, a client certificate the server verified names
// the caller; without one the caller is unauthenticated, and one caller
// does not see another's tasks. Streams run over TLS too.
func TestMutualTLS(t *testing.T) {
	ca := a2atest.NewCA(t)
	gate, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{auth.NewMTLS(auth.MTLSConfig{})}})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveTLS(t, ca, server.Config{Gate: gate}, Config{Grace: 100 * time.Millisecond})
	research := tlsClient(t, addr, ca, ca.Client(t, "spiffe://mesh.example/research"))
	writer := tlsClient(t, addr, ca, ca.Client(t, "spiffe://mesh.example/writer"))
	anonymous := tlsClient(t, addr, ca)

	resp, err := research.SendMessage(t.Context(), sendReq("hello over TLS", nil))
	if err != nil {
		t.Fatalf("with a certificate: %v", err)
	}
	task := resp.GetTask()
	if task == nil {
		t.Fatalf("answer %v, want a task", resp)
	}
	if _, err := research.GetTask(t.Context(), &a2apb.GetTaskRequest{Id: task.Id}); err != nil {
		t.Errorf("its own task: %v", err)
	}
	_, err = writer.GetTask(t.Context(), &a2apb.GetTaskRequest{Id: task.Id})
	wantStatus(t, err, codes.NotFound, "TASK_NOT_FOUND")
	_, err = anonymous.ListTasks(t.Context(), &a2apb.ListTasksRequest{})
	wantStatus(t, err, codes.Unauthenticated, "")

	stream, err := research.SendStreamingMessage(t.Context(), sendReq("a stream over TLS", nil))
	if err != nil {
		t.Fatal(err)
	}
	checkEchoStream(t, recvAll(t, stream.Recv), "a stream over TLS")
	sub, err := anonymous.SubscribeToTask(t.Context(), &a2apb.SubscribeToTaskRequest{Id: task.Id})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sub.Recv()
	wantStatus(t, err, codes.Unauthenticated, "")
}

// TestTLSGracefulStop: a stream in progress when Serve's context ends
// runs to its end within the grace period, and Serve returns without
// error (the leak check of TestMain finds any connection left behind).
func TestTLSGracefulStop(t *testing.T) {
	ca := a2atest.NewCA(t)
	addr, stop := serveTLS(t, ca, server.Config{Executor: &echo.Executor{SlowChunks: 4, SlowInterval: 100 * time.Millisecond}},
		Config{Grace: 20 * time.Second})
	cli := tlsClient(t, addr, ca)
	const text = "slow: to the end"
	stream, err := cli.SendStreamingMessage(t.Context(), sendReq(text, nil))
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	rest := recvAll(t, stream.Recv)
	ev, err := pbconv.EventFromPB(first)
	if err != nil {
		t.Fatal(err)
	}
	checkEchoStream(t, append([]a2a.Event{ev}, rest...), text)
	if err := <-stopped; err != nil {
		t.Errorf("serve: %v", err)
	}
}
