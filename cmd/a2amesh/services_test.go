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
