package cli

import (
	"testing"
	"time"
)

func TestGiven(t *testing.T) {
	tests := []struct {
		name  string
		env   string // value of TEST_DELAY; empty: unset
		args  []string
		given bool
		want  time.Duration
	}{
		{name: "default", given: false, want: 0},
		{name: "flag", args: []string{"--delay", "3ms"}, given: true, want: 3 * time.Millisecond},
		{name: "flag at its default value", args: []string{"--delay", "0"}, given: true, want: 0},
		{name: "environment", env: "2ms", given: true, want: 2 * time.Millisecond},
		{name: "flag over environment", env: "2ms", args: []string{"--delay", "5ms"}, given: true, want: 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv("TEST_DELAY", tt.env)
			}
			f := NewFlags("test", "TEST")
			d := f.Duration("delay", 0, "a delay")
			other := f.String("other", "x", "another flag")
			if err := f.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if got := f.Given("delay"); got != tt.given {
				t.Errorf("Given(delay) = %v, want %v", got, tt.given)
			}
			if *d != tt.want {
				t.Errorf("delay = %v, want %v", *d, tt.want)
			}
			if f.Given("other") || *other != "x" {
				t.Errorf("other: given %v, value %q; want not given, x", f.Given("other"), *other)
			}
		})
	}
}
