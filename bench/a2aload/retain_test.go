package main

import (
	"testing"
	"time"
)

func TestParseGCTrace(t *testing.T) {
	tests := []struct {
		line string
		cpu  time.Duration
		ok   bool
	}{
		{"gc 7 @0.512s 3%: 0.019+1.2+0.021 ms clock, 0.039+0.45/1.1/0.50+0.042 ms cpu, 4->4->2 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P",
			2131 * time.Microsecond, true},
		{"gc 12 @3.001s 1%: 0.1+2+0.1 ms clock, 0.2+0/3/0+0.2 ms cpu, 40->41->20 MB, 41 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)",
			3400 * time.Microsecond, true},
		{`time=2026-11-27T14:09:03Z level=WARN msg="serving without authentication"`, 0, false},
		{"gc 1 @0.1s 0%: garbled", 0, false},
		{"gc 2 @0.1s 0%: 1+1+1 ms clock, x+1/1/1+1 ms cpu", 0, false},
	}
	for _, tt := range tests {
		cpu, ok := parseGCTrace(tt.line)
		if ok != tt.ok || cpu.Round(time.Microsecond) != tt.cpu {
			t.Errorf("parseGCTrace(%q) = %v, %v; want %v, %v", tt.line, cpu, ok, tt.cpu, tt.ok)
		}
	}
}
