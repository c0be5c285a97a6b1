package service

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/internal/cli"
)

// TestPushAllow: --push-allow (or A2AMESH_PUSH_ALLOW) configures the push
// sender's allowlist, and a bad entry stops Run before anything starts,
// naming the entry.
func TestPushAllow(t *testing.T) {
	t.Setenv("A2AMESH_PUSH_ALLOW", "")
	def := Def{Name: "test", Addr: "127.0.0.1:0", Setup: func(*cli.Flags) Build {
		return func(context.Context, *Env) (adk.Agent, error) {
			t.Error("the agent was built despite a bad --push-allow")
			return nil, context.Canceled
		}
	}}
	for _, tt := range []struct {
		args []string
		env  string
		bad  string
	}{
		{args: []string{"--push-allow", "10.0.0.0/8, bad host"}, bad: "bad host"},
		{args: []string{"--push-allow", "hooks.internal:0"}, bad: "hooks.internal:0"},
		{env: "127.0.0.0/8,10.0.0.0/33", bad: "10.0.0.0/33"},
	} {
		t.Setenv("A2AMESH_PUSH_ALLOW", tt.env)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := Run(ctx, def, tt.args, io.Discard)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "--push-allow") || !strings.Contains(err.Error(), `"`+tt.bad+`"`) {
			t.Errorf("Run(%q, env %q) = %v, want an error naming --push-allow and %q", tt.args, tt.env, err, tt.bad)
		}
	}

	t.Setenv("A2AMESH_PUSH_ALLOW", "")
	f := cli.NewFlags("test", "TEST")
	c := CommonFlags(f, "127.0.0.1:0")
	if err := f.Parse([]string{"--push-allow", "127.0.0.0/8, hooks.internal:8443"}); err != nil {
		t.Fatal(err)
	}
	s, err := c.pushSender(nil)
	if err != nil {
		t.Fatal(err)
	}
	for u, ok := range map[string]bool{
		"http://127.0.0.1:8080/hook":         true,
		"https://hooks.internal:8443/hook":   true,
		"https://hooks.internal/hook":        true, // a name is not checked before it resolves
		"http://10.0.0.1/hook":               false,
		"http://[64:ff9b::7f00:1]:9000/hook": true,
	} {
		if err := s.Guard.CheckURL(u); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", u, err, ok)
		}
	}
}
