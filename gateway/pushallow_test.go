package gateway

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestBadPushAllow: a bad --push-allow stops the gateway at once, naming
// the entry, rather than after it has discovered the mesh's agents.
func TestBadPushAllow(t *testing.T) {
	t.Setenv("A2AMESH_PUSH_ALLOW", "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := Run(ctx, []string{"--push-allow", "127.0.0.0/8,not a host", "--wait", "1m"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"not a host"`) {
		t.Fatalf("Run with a bad --push-allow = %v, want an error naming the entry", err)
	}
}
