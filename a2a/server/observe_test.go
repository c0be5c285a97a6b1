package server_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/services/echo"
	"github.com/a2amesh/a2amesh/telemetry"
)

func TestErrorName(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "OK"},
		{a2a.Errorf(a2a.CodeTaskNotFound, "no"), "TASK_NOT_FOUND"},
		{fmt.Errorf("wrapped: %w", a2a.Errorf(a2a.CodeUnauthenticated, "who")), "UNAUTHENTICATED"},
		{a2a.Errorf(-32099, "a code of the peer's own"), "UNKNOWN"},
		{errors.New("the stores are down"), "INTERNAL_ERROR"},
		{context.Canceled, "INTERNAL_ERROR"},
	} {
		if got := server.ErrorName(tc.err); got != tc.want {
			t.Errorf("ErrorName(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// Without a Telemetry, or with one that records no spans, a request's
// Call allocates nothing; the zero Call does nothing.
func TestBeginWithoutSpans(t *testing.T) {
	metricsOnly, err := telemetry.New(telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, tel := range map[string]*telemetry.Telemetry{"none": nil, "metrics": metricsOnly} {
		t.Run(name, func(t *testing.T) {
			h := newHandler(t, new(echo.Executor), func(c *server.Config) { c.Telemetry = tel })
			ctx := context.Background()
			notFound := a2a.Errorf(a2a.CodeTaskNotFound, "no")
			allocs := testing.AllocsPerRun(100, func() {
				c2, call := h.Begin(ctx, a2a.BindingJSONRPC, "", nil)
				call.SetMethod("GetTask")
				call.End(notFound)
				if c2 != ctx {
					t.Fatal("Begin changed the context")
				}
			})
			if allocs != 0 {
				t.Errorf("Begin and End allocate %v times, want none", allocs)
			}
		})
	}
	var zero server.Call
	zero.End(nil)
}
