package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The example runs as `go run` runs it, and answers.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "calling ThermoAgent at http://127.0.0.1:") || !strings.Contains(out.String(), "answer: [offline model] 212 °F") {
		t.Fatalf("output:\n%s", out.String())
	}
}
