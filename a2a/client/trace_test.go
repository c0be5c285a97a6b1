package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
)

// headerCatcher is an HTTP server that records the headers of the requests
// it gets and answers each with a JSON-RPC error (task not found), which
// both bindings' calls return as an error.
type headerCatcher struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newHeaderCatcher(t *testing.T) *headerCatcher {
	t.Helper()
	hc := &headerCatcher{}
	hc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		hc.mu.Lock()
		hc.seen = append(hc.seen, r.Header.Clone())
		hc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"no such task"}}`)
	}))
	t.Cleanup(hc.Close)
	return hc
}

func (hc *headerCatcher) headers() []http.Header {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	return hc.seen
}

// TestTraceContextInjected holds that a call made in a context with a span
// carries the span's W3C trace context to the agent, on every binding over
// HTTP and for unary calls and streams alike, and that a call without one
// carries none.
func TestTraceContextInjected(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	const want = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	calls := map[string]func(context.Context, *client.Client){
		"unary": func(ctx context.Context, c *client.Client) {
			_, _ = c.GetTask(ctx, &a2a.GetTaskRequest{ID: "t1"})
		},
		"stream": func(ctx context.Context, c *client.Client) {
			for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "t1"}) {
				if err != nil {
					break
				}
			}
		},
	}
	for _, binding := range []client.Binding{client.JSONRPC, client.HTTPJSON} {
		for name, call := range calls {
			for _, traced := range []bool{true, false} {
				t.Run(binding.Name()+"/"+name+"/traced="+map[bool]string{true: "yes", false: "no"}[traced], func(t *testing.T) {
					srv := newHeaderCatcher(t)
					c, err := client.NewFromURL(srv.URL, client.Config{Bindings: []client.Binding{binding}, ResumeAttempts: -1})
					if err != nil {
						t.Fatal(err)
					}
					defer c.Close()
					ctx := t.Context()
					if traced {
						ctx = trace.ContextWithSpanContext(ctx, sc)
					}
					call(ctx, c)
					seen := srv.headers()
					if len(seen) == 0 {
						t.Fatal("the server got no request")
					}
					for _, h := range seen {
						got := h.Get("Traceparent")
						if traced && got != want {
							t.Errorf("traceparent = %q, want %q", got, want)
						}
						if !traced && got != "" {
							t.Errorf("traceparent = %q without a span", got)
						}
					}
				})
			}
		}
	}
}
