package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// The example runs as `go run` runs it: the task waits for approval, and
// the answer completes it through the tool.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := "RefundAgent asks: Refund 42.50 EUR? Answer yes or no.\nanswered yes: [offline model] refund of 42.50 EUR issued\n"
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
