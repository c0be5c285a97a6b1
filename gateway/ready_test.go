package gateway

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// readyz GETs the server's /readyz on a connection of its own.
func readyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := hc.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// awaitReadyz polls addr's /readyz until it answers want.
func awaitReadyz(t *testing.T, addr string, want int) string {
	t.Helper()
	deadline := time.Now().Add(testBound)
	for {
		code, body := readyz(t, addr)
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz %d %q, want %d within %s", code, body, want, testBound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// serveEcho serves the echo agent on ln until the test ends.
func serveEcho(t *testing.T, ln net.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{Listener: ln, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// A gateway whose agents are not all up is alive and not ready, naming the
// agents it waits for; it is ready once they are.
func TestReadyOnceAgentsFound(t *testing.T) {
	lnUp, lnDown, lnGW := listen(t), listen(t), listen(t)
	serveEcho(t, lnUp)
	// The agent that is down answers no card yet.
	releaseDown := serve.Hold(lnDown, func() string { return "starting" })
	top, err := ParseTopology([]byte("version: 1\nagents: {up: 'http://" + lnUp.Addr().String() + "/', down: 'http://" + lnDown.Addr().String() +
		"/'}\nentry: {sequential: {name: both, steps: [{agent: up, alias: Up}, {agent: down, alias: Down}]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	made := make(chan *serve.Server, 1)
	go func() {
		s, err := New(ctx, top, Config{Remote: bridge.RemoteConfig{Wait: testBound, HTTPClient: hc},
			Serve: serve.Config{Listener: lnGW, Logger: slog.New(slog.DiscardHandler)}})
		if err != nil {
			t.Error(err)
		}
		made <- s
	}()
	// Until the agent that is up has been found, both are named.
	deadline := time.Now().Add(testBound)
	for {
		body := awaitReadyz(t, lnGW.Addr().String(), 503)
		if !strings.Contains(body, "down at http://"+lnDown.Addr().String()+"/: ") {
			t.Fatalf("not ready saying %q, want it to name the agent that is down", body)
		}
		if !strings.Contains(body, "up at") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for the agent that is up: %q", body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	releaseDown()
	serveEcho(t, lnDown)
	s := <-made
	if s == nil {
		t.FailNow()
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	awaitReadyz(t, lnGW.Addr().String(), 200)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
