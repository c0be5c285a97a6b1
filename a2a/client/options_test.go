package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/services/echo"
)

// TestCallOptionHeaders checks that call options become request headers,
// on unary calls, streams and the card fetch, and that a call's options
// override the client's.
func TestCallOptionHeaders(t *testing.T) {
	s := startEcho(t, serverOpts{})
	cases := []struct {
		name       string
		clientOpts []client.CallOption
		callOpts   []client.CallOption
		want       http.Header // values every A2A request must carry
		wantCard   http.Header // values the card fetch must carry
	}{
		{
			name:     "Header",
			callOpts: []client.CallOption{client.Header("X-Trace", "abc"), client.Header("x-trace", "def")},
			want:     http.Header{"X-Trace": {"abc", "def"}},
		},
		{
			name:     "BearerToken",
			callOpts: []client.CallOption{client.BearerToken("s3cret")},
			want:     http.Header{"Authorization": {"Bearer s3cret"}},
		},
		{
			name:     "APIKey",
			callOpts: []client.CallOption{client.APIKey("X-API-Key", "k-123")},
			want:     http.Header{"X-Api-Key": {"k-123"}},
		},
		{
			name:     "Extensions",
			callOpts: []client.CallOption{client.Extensions("urn:a2a:ext:one", "urn:a2a:ext:two")},
			want:     http.Header{"A2a-Extensions": {"urn:a2a:ext:one,urn:a2a:ext:two"}},
		},
		{
			name:       "client-wide, also on the card fetch",
			clientOpts: []client.CallOption{client.BearerToken("client"), client.Header("X-Client", "yes")},
			want:       http.Header{"Authorization": {"Bearer client"}, "X-Client": {"yes"}},
			wantCard:   http.Header{"Authorization": {"Bearer client"}, "X-Client": {"yes"}},
		},
		{
			name:       "a call's option overrides the client's",
			clientOpts: []client.CallOption{client.BearerToken("client"), client.APIKey("X-API-Key", "client-key")},
			callOpts:   []client.CallOption{client.BearerToken("call"), client.APIKey("X-API-Key", "call-key")},
			want:       http.Header{"Authorization": {"Bearer call"}, "X-Api-Key": {"call-key"}},
			wantCard:   http.Header{"Authorization": {"Bearer client"}, "X-Api-Key": {"client-key"}},
		},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					rec := newRecorder()
					c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client(), CallOptions: tc.clientOpts})
					ctx := context.Background()
					task := sendTask(t, c, sendReq("headers"))
					if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, tc.callOpts...); err != nil {
						t.Fatal(err)
					}
					if _, err := c.SendMessage(ctx, sendReq("headers"), tc.callOpts...); err != nil {
						t.Fatal(err)
					}
					if _, err := collect(c.SendStreamingMessage(ctx, sendReq("headers"), tc.callOpts...)); err != nil {
						t.Fatal(err)
					}
					if _, err := collect(c.Resubscribe(ctx, task.ID, "1", tc.callOpts...)); err != nil {
						t.Fatal(err)
					}
					reqs := rec.requests()
					if len(reqs) != 6 {
						t.Fatalf("%d requests, want the card fetch and 5 calls", len(reqs))
					}
					checkHeaders(t, "card fetch", reqs[0].Header, tc.wantCard)
					// The card fetch names the version a 1.0 client speaks,
					// and none for a client held to 0.3.
					wantCard := a2a.Version
					if v == a2a.Version03 {
						wantCard = ""
					}
					if got := reqs[0].Header.Get("A2A-Version"); got != wantCard {
						t.Errorf("the card fetch sent A2A-Version %q, want %q", got, wantCard)
					}
					// The first send carries only the client's options.
					for _, r := range reqs[2:] {
						checkHeaders(t, r.Method, r.Header, tc.want)
						if got := r.Header.Get("A2A-Version"); got != v {
							t.Errorf("%s: A2A-Version %q, want %q", r.Method, got, v)
						}
					}
				})
			}
		})
	}
}

func checkHeaders(t *testing.T, what string, got, want http.Header) {
	t.Helper()
	for k, vs := range want {
		if !slices.Equal(got.Values(k), vs) {
			t.Errorf("%s: %s = %q, want %q", what, k, got.Values(k), vs)
		}
	}
}

// TestTimeout: Timeout bounds a blocking SendMessage of a task that is still
// running, which goes on without the caller.
func TestTimeout(t *testing.T) {
	const timeout = 150 * time.Millisecond
	s := startEcho(t, serverOpts{hold: true})
	ctx := context.Background()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cases := []struct {
				name     string
				cfg      client.Config
				callOpts []client.CallOption
			}{
				{name: "per call", callOpts: []client.CallOption{client.Timeout(timeout)}},
				{name: "every call", cfg: client.Config{CallOptions: []client.CallOption{client.Timeout(timeout)}}},
				{
					name:     "the call's overrides the client's",
					cfg:      client.Config{CallOptions: []client.CallOption{client.Timeout(time.Hour)}},
					callOpts: []client.CallOption{client.Timeout(timeout)},
				},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					c := dialConfig(t, s, v, tc.cfg)
					m := textMessage(echo.SlowPrefix + "too slow")
					m.ContextID = "timeout-" + a2a.NewID()
					ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m}, tc.callOpts...)
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Fatalf("SendMessage = %v, %v; want context.DeadlineExceeded", ev, err)
					}
					// The task did not finish: it is held until the server
					// lets it go on.
					var list *a2a.ListTasksResponse
					for range 500 {
						// A call's own timeout overrides the client's.
						list, err = c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: m.ContextID}, client.Timeout(time.Minute))
						if err != nil {
							t.Fatal(err)
						}
						if len(list.Tasks) > 0 {
							break
						}
						time.Sleep(10 * time.Millisecond)
					}
					if len(list.Tasks) != 1 || list.Tasks[0].Status.State.Terminal() {
						t.Fatalf("tasks of the timed-out send: %+v", list.Tasks)
					}
				})
			}
		})
	}
}

// TestTimeoutDoesNotBoundStreams: Timeout applies to unary calls only.
func TestTimeoutDoesNotBoundStreams(t *testing.T) {
	s := startEcho(t, serverOpts{})
	const text = echo.SlowPrefix + "longer than the timeout"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			// The slow task takes slowChunks × slowInterval, much more than
			// the timeout.
			c := dialConfig(t, s, v, client.Config{CallOptions: []client.CallOption{client.Timeout(slowInterval / 3)}})
			evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq(text)))
			if err != nil {
				t.Fatalf("stream: %v", err)
			}
			checkConsecutive(t, evs, 1)
			if echoText(evs) != text || finalState(evs) != a2a.TaskStateCompleted {
				t.Errorf("echo %q, state %s", echoText(evs), finalState(evs))
			}
		})
	}
}

// TestStreamContextCanceled: canceling the context ends a stream with the
// context's error, and it is not resumed.
func TestStreamContextCanceled(t *testing.T) {
	s := startEcho(t, serverOpts{hold: true})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			rec := newRecorder()
			c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client()})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var n int
			var err error
			for _, e := range c.SendStreamingMessage(ctx, sendReq(echo.SlowPrefix+"never mind")) {
				if e != nil {
					err = e
					break
				}
				if n++; n == 2 { // the task and WORKING: the task is held
					cancel()
				}
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("stream ended with %v after %d events, want context.Canceled", err, n)
			}
			if n != 2 {
				t.Errorf("%d events, want 2", n)
			}
			if got := len(rec.streams()); got != 1 {
				t.Errorf("%d streaming requests, want 1 (no resumption)", got)
			}
		})
	}
}

// TestStreamErrorNamesMethod: a stream's error names the operation.
func TestStreamErrorNamesMethod(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			_, err := streamErr(c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: "nope"}))
			if err == nil || !strings.Contains(err.Error(), "SubscribeToTask") {
				t.Fatalf("error %v does not name SubscribeToTask", err)
			}
		})
	}
}
