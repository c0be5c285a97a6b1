package service

import (
	"os"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/internal/cli"
	"github.com/a2amesh/a2amesh/natsstore"
)

func TestCommitDelayDefaultsByState(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
	}{
		{nil, 0},
		{[]string{"--state", "memory"}, 0},
		{[]string{"--state", "nats"}, natsstore.CommitDelay},
		{[]string{"--state", "nats", "--commit-delay", "0"}, 0},
		{[]string{"--state", "nats", "--commit-delay", "5ms"}, 5 * time.Millisecond},
		{[]string{"--commit-delay", "2ms"}, 2 * time.Millisecond},
	}
	for _, env := range []string{"A2AMESH_STATE", "A2AMESH_COMMIT_DELAY"} {
		t.Setenv(env, "") // restored after the test
		os.Unsetenv(env)
	}
	for _, tt := range tests {
		f := cli.NewFlags("test", "TEST")
		c := CommonFlags(f, "127.0.0.1:0")
		if err := f.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if got := c.commitDelay(); got != tt.want {
			t.Errorf("%v: commit delay %v, want %v", tt.args, got, tt.want)
		}
	}
}
