package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/services/echo"
)

// The timeouts the tests of hung servers give the client, and the bound
// on their own waits: a client that waits for ever fails them.
const (
	hangTimeout = 300 * time.Millisecond
	testBound   = 10 * time.Second
)

// hungListener is a server that hangs as a stopped process does: the
// kernel completes the handshake and takes the request, and nobody ever
// reads or answers. It returns the URL.
func hungListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// bounded returns a context for a call the test expects to fail by the
// client's own timeout well before testBound.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testBound)
	t.Cleanup(cancel)
	return ctx
}

// checkTimedOut checks that err is the client's timeout, not the test's
// bound, and says what timed out.
func checkTimedOut(t *testing.T, ctx context.Context, err error, what string) {
	t.Helper()
	if ctx.Err() != nil {
		t.Fatalf("the call outlived the test's bound of %s: %v", testBound, err)
	}
	if !errors.Is(err, client.ErrTimeout) {
		t.Fatalf("error %v does not match client.ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), what) {
		t.Errorf("error %q does not say %q", err, what)
	}
}

// TestHungServer: every call to a server that accepts connections and
// never answers fails within the client's timeouts, saying what timed out:
// unary calls by Config.ResponseTimeout, streams by
// Config.StreamIdleTimeout, which counts from the request, not from the
// response headers.
func TestHungServer(t *testing.T) {
	url := hungListener(t)
	returnAtOnce := &a2a.SendMessageRequest{Message: textMessage("hello?"),
		Configuration: &a2a.SendMessageConfiguration{ReturnImmediately: true}}
	cases := []struct {
		name string
		call func(ctx context.Context, c *client.Client) error
		what string
	}{
		{"GetTask", func(ctx context.Context, c *client.Client) error {
			_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "t"})
			return err
		}, "GetTask " + url + ": no response within " + hangTimeout.String()},
		{"CancelTask", func(ctx context.Context, c *client.Client) error {
			_, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: "t"})
			return err
		}, "no response within " + hangTimeout.String()},
		{"SendMessage returning at once", func(ctx context.Context, c *client.Client) error {
			_, err := c.SendMessage(ctx, returnAtOnce)
			return err
		}, "SendMessage " + url + ": no response within " + hangTimeout.String()},
		{"SendStreamingMessage", func(ctx context.Context, c *client.Client) error {
			_, err := collect(c.SendStreamingMessage(ctx, sendReq("hello?")))
			return err
		}, "SendStreamingMessage " + url + ": stream cut before the task settled: no response for " + hangTimeout.String()},
		{"SubscribeToTask", func(ctx context.Context, c *client.Client) error {
			_, err := collect(c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: "t"}))
			return err
		}, "no response for " + hangTimeout.String()},
		{"Resubscribe", func(ctx context.Context, c *client.Client) error {
			_, err := collect(c.Resubscribe(ctx, "t", "3"))
			return err
		}, "no response for " + hangTimeout.String()},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			hc := newHTTPClient()
			t.Cleanup(hc.CloseIdleConnections)
			c := fromURL(t, url, client.Config{ProtocolVersion: v, HTTPClient: hc,
				ResponseTimeout: hangTimeout, StreamIdleTimeout: hangTimeout})
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					ctx := bounded(t)
					checkTimedOut(t, ctx, tc.call(ctx, c), tc.what)
				})
			}
		})
	}
	t.Run("card", func(t *testing.T) {
		ctx := bounded(t)
		_, err := client.New(ctx, url, client.Config{ResponseTimeout: hangTimeout})
		checkTimedOut(t, ctx, err, "resolve card at "+url+".well-known/agent-card.json: no response within "+hangTimeout.String())
	})
}

// stallingServer answers a streaming send with the task's first event
// and then nothing more, not even keep-alives, as a server stopped
// mid-stream does; a resubscription is not answered at all, or, with
// answerResumes, answered with headers and then nothing. It counts the
// streaming requests by method.
type stallingServer struct {
	*httptest.Server
	answerResumes bool
	release       chan struct{}
	mu            sync.Mutex
	methods       []string
}

func newStallingServer(t *testing.T, answerResumes bool) *stallingServer {
	s := &stallingServer{answerResumes: answerResumes, release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	t.Cleanup(func() { close(s.release) }) // first: let the handlers return
	return s
}

func (s *stallingServer) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req, rpcErr := jsonrpc.DecodeRequest(body)
	if rpcErr != nil {
		http.Error(w, rpcErr.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.methods = append(s.methods, req.Method)
	s.mu.Unlock()
	op, version, _ := jsonrpc.ParseMethod(req.Method)
	switch {
	case op == jsonrpc.OpSendStreamingMessage:
		w.Header().Set("Content-Type", "text/event-stream")
		task := &a2a.Task{ID: "task-1", ContextID: "ctx-1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
		var result any = a2a.Wrap(task)
		if version == a2a.Version03 {
			result = a2av03.FromEvent(task)
		}
		data, err := jsonrpc.AppendResult(nil, req.ID, result)
		if err != nil {
			panic(err)
		}
		w.Write([]byte("id: 1\ndata: " + string(data) + "\n\n"))
		w.(http.Flusher).Flush()
	case s.answerResumes:
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	select {
	case <-s.release:
	case <-r.Context().Done():
	}
}

func (s *stallingServer) streamMethods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

// TestStreamStallsAfterFirstEvent: a stream whose server stops after the
// first event is cut by the idle timeout and resumed, and the
// resumptions, which the stopped server does not serve, end it with the
// timeout's error in bounded time: a resumption that hears nothing must
// do so within the idle timeout of the cut; one that is answered and then
// stalls uses an attempt up.
func TestStreamStallsAfterFirstEvent(t *testing.T) {
	cases := []struct {
		name          string
		answerResumes bool
		resumes       int
		wantRequests  int
		what          string
	}{
		{"resumption not answered", false, 3, 2, "SubscribeToTask"},
		{"resumption not answered, many attempts", false, 1000, 2, "no response for " + hangTimeout.String()},
		{"resumption answered, then silent", true, 3, 4, "no event or keep-alive for " + hangTimeout.String()},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					s := newStallingServer(t, tc.answerResumes)
					c := fromURL(t, s.URL, client.Config{ProtocolVersion: v, HTTPClient: newHTTPClient(),
						StreamIdleTimeout: hangTimeout, ResumeAttempts: tc.resumes})
					t.Cleanup(c.CloseIdleConnections)
					ctx := bounded(t)
					evs, err := collect(c.SendStreamingMessage(ctx, sendReq("stall")))
					checkTimedOut(t, ctx, err, tc.what)
					if len(evs) != 1 || evs[0].ID != "1" {
						t.Errorf("events %v, want the first only", ids(evs))
					}
					methods := s.streamMethods()
					if len(methods) != tc.wantRequests {
						t.Fatalf("requests %v, want %d", methods, tc.wantRequests)
					}
					for _, m := range methods[1:] {
						if m != jsonrpc.OpSubscribeToTask.Method(v) {
							t.Errorf("resumption by %s", m)
						}
					}
				})
			}
		})
	}
}

// TestBlockingSendOutlivesResponseTimeout: a SendMessage that waits for
// its task lasts as long as the task, so Config.ResponseTimeout does not cut
// it; only Timeout or its context bounds it.
func TestBlockingSendOutlivesResponseTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			s := startEcho(t, serverOpts{hold: true})
			c := dialConfig(t, s, v, client.Config{ResponseTimeout: timeout})
			done := make(chan error, 1)
			go func() {
				_, err := c.SendMessage(context.Background(), sendReq(echo.SlowPrefix+"wait for me"))
				done <- err
			}()
			// The task is held until release: the call waits for it
			// several times the response timeout.
			time.Sleep(4 * timeout)
			s.release()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("blocking SendMessage: %v", err)
				}
			case <-time.After(testBound):
				t.Fatal("blocking SendMessage did not return after the task was released")
			}
		})
	}
}
