package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// The example leaves nothing running: its servers have stopped and the
// gateway's connections to the teams' agents are closed when run returns.
func TestMain(m *testing.M) { a2atest.VerifyTestMain(m) }

// The example runs as `go run` runs it: the router hands each question to
// the team whose agent's skills fit it, and that agent answers with its
// tool.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out strings.Builder
	if err := run(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := `asking Company: One entry to the billing and logistics teams' agents

Q: Has invoice 1042 been paid yet?
InvoiceAgent answered: [offline model] invoice 1042: 1,250.00 EUR, due 31 March, paid on 28 March

Q: Where is my parcel 5531 right now?
ShippingAgent answered: [offline model] parcel 5531: left the Rotterdam depot this morning; out for delivery, arriving today by 18:00
`
	if out.String() != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
