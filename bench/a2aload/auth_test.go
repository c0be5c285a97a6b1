package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestAuthVariants serves the echo agent gated as each of authCmd's
// variants says, from the files it writes, and drives it over JSON-RPC
// and gRPC with and without the variant's credentials: with them every
// request is answered as the echo agent does; without them, a gated
// server refuses the check and fails every request of a run.
func TestAuthVariants(t *testing.T) {
	ctx := context.Background()
	variants, err := authVariants(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(variants) != 4 || variants[0].config != "" {
		t.Fatalf("variants %+v: want the open server first, then three gated", variants)
	}
	for _, v := range variants {
		var gate *auth.Gate
		if v.config != "" {
			c, err := auth.LoadConfig(v.config)
			if err != nil {
				t.Fatal(err)
			}
			if gate, err = c.Gate(nil, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
		}
		eps, err := cardEndpoints(ctx, startGated(t, gate))
		if err != nil {
			t.Fatal(err)
		}
		for _, bd := range []string{bindingJSONRPC, bindingGRPC} {
			ep, ok := eps[bd]
			if !ok {
				t.Fatalf("no %s endpoint on the card", bd)
			}
			for _, key := range []string{"send", "stream"} {
				sc := scenarios[key]
				t.Run(fmt.Sprintf("%s/%s/%s", v.name, bd, key), func(t *testing.T) {
					const n = 10
					b := &bindingsBench{conns: 2, grpcConns: 1, maxReq: n, headers: v.headers}
					if err := verify(ctx, ep, sc, v.headers); err != nil {
						t.Fatal(err)
					}
					run, err := b.driver(ctx, ep, sc)
					if err != nil {
						t.Fatal(err)
					}
					res, err := run(time.Minute) // the count ends it
					if err != nil || res.Requests != n || res.Errors != 0 || res.Refused != 0 {
						t.Fatalf("with credentials: %d requests, %d errors, %d refused, %v; want %d, none failed", res.Requests, res.Errors, res.Refused, err, n)
					}
					if v.config == "" {
						return
					}
					if err := verify(ctx, ep, sc, nil); err == nil {
						t.Fatal("the check passed without credentials")
					}
					bare := *b
					bare.headers = nil
					run, err = bare.driver(ctx, ep, sc)
					if err != nil {
						t.Fatal(err)
					}
					res, _ = run(time.Minute)
					if res.Requests != 0 || res.Errors+res.Refused == 0 {
						t.Fatalf("without credentials: %d requests answered, %d errors, %d refused; want every one refused", res.Requests, res.Errors, res.Refused)
					}
				})
			}
		}
	}
}

// startGated serves the echo agent on JSON-RPC and gRPC behind gate (nil:
// open) until the test ends, and returns the JSON-RPC address.
func startGated(t *testing.T, gate *auth.Gate) string {
	t.Helper()
	ln, gln := listen(t), listen(t)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{
		Listener: ln, GRPCListener: gln, Retention: 5 * time.Second, Gate: gate, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("a2amesh: %v", err)
		}
	})
	return ln.Addr().String()
}

func TestHeaderFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want header
		err  bool
	}{
		{"Authorization: Bearer a.b.c", header{"Authorization", "Bearer a.b.c"}, false},
		{"X-API-Key:k", header{"X-API-Key", "k"}, false},
		{"no colon", header{}, true},
		{": empty name", header{}, true},
		{"Bad Name: v", header{}, true},
		{"X: a\r\nInjected: b", header{}, true},
	} {
		var f headerFlag
		err := f.Set(tc.in)
		if tc.err {
			if err == nil {
				t.Errorf("Set(%q) = %v, want an error", tc.in, f)
			}
			continue
		}
		if err != nil || len(f) != 1 || f[0] != tc.want {
			t.Errorf("Set(%q) = %v, %v; want %v", tc.in, f, err, tc.want)
		}
	}
	req := withHeaders(request("h:1", "/", "SendMessage", "1.0", "hi"), []header{{"X-API-Key", "k"}})
	if !strings.HasPrefix(string(req), "POST / HTTP/1.1\r\nX-API-Key: k\r\nHost: h:1\r\n") {
		t.Errorf("withHeaders: %q", req)
	}
}
