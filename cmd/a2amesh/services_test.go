package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestServeExecutorServices serves each executor service as `a2amesh
// serve NAME` does and reads its card.
func TestServeExecutorServices(t *testing.T) {
	for _, def := range executorServices() {
		t.Run(def.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			done := make(chan error, 1)
			go func() {
				err := serveService(ctx, def.name, []string{"--addr", "127.0.0.1:0", "--log-level", "error"}, pw)
				pw.CloseWithError(err)
				done <- err
			}()
			line, err := bufio.NewReader(pr).ReadString('\n')
			if err != nil {
				t.Fatalf("no ready line: %v", err)
			}
			go io.Copy(io.Discard, pr) // nothing more is expected; keeps the writer unblocked
			url, ok := strings.CutPrefix(strings.TrimSpace(line), def.name+" ready at ")
			if !ok {
				t.Fatalf("ready line %q", line)
			}
			hc := &http.Client{Timeout: 10 * time.Second}
			resp, err := hc.Get(url + ".well-known/agent-card.json")
			if err != nil {
				t.Fatal(err)
			}
			var card struct {
				Name string `json:"name"`
			}
			err = json.NewDecoder(resp.Body).Decode(&card)
			resp.Body.Close()
			hc.CloseIdleConnections()
			if err != nil || card.Name != def.name {
				t.Fatalf("card name %q (%v), want %q", card.Name, err, def.name)
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("serve: %v", err)
			}
		})
	}
}

// TestEchoSlowInterval checks that --slow-interval reaches the echo
// agent, and that without it the agent keeps its own default.
func TestEchoSlowInterval(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 0},
		{[]string{"--slow-interval", "3s"}, 3 * time.Second},
	} {
		var def executorService
		for _, s := range executorServices() {
			if s.name == "echo" {
				def = s
			}
		}
		f := cli.NewFlags("echo", "ECHO_TEST")
		exec := def.setup(f)
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		e, ok := exec().(*echo.Executor)
		if !ok || e.SlowInterval != tc.want {
			t.Errorf("%v: executor %#v, want an echo executor with SlowInterval %v", tc.args, exec(), tc.want)
		}
	}
}
