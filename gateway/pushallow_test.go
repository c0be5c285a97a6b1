package gateway

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/serve"
)

// TestBadServeConfig: a server configuration that cannot be used (here a
// bad push allowlist entry) stops New at once, naming the entry, rather
// than after it has waited for the mesh's agents.
func TestBadServeConfig(t *testing.T) {
	top, err := ParseTopology([]byte("version: 1\nagents: {a: 'http://127.0.0.1:1/'}\nentry: {agent: a}\n"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = New(ctx, top, Config{Remote: bridge.RemoteConfig{Wait: time.Minute},
		Serve: serve.Config{PushAllow: []string{"127.0.0.0/8", "not a host"}}})
	if !errors.Is(err, serve.ErrConfig) || !strings.Contains(err.Error(), `"not a host"`) {
		t.Fatalf("New with a bad push allowlist = %v, want a serve.ErrConfig naming the entry", err)
	}
}
