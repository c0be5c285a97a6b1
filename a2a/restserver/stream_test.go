package restserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hzserver "github.com/cloudwego/hertz/pkg/app/server"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/eventlog"
	"github.com/a2amesh/a2amesh/a2a/internal/httpbind"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
	"github.com/a2amesh/a2amesh/services/echo"
)

// An error after a stream's first event ends the stream with an event of
// type "error", without an SSE id, whose data is the google.rpc.Status:
// the HTTP status went out with the first event. The Handler has no error
// to give mid-stream on request, so the events here are made up and
// served by the binding's stream writer on a real Hertz server.
func TestStreamErrorAfterFirstEvent(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	h := a2atest.NewHandler(t, server.Config{Card: echo.Card("http://placeholder/"), Executor: new(echo.Executor), Logger: quiet})
	t.Cleanup(func() { _ = h.Close(context.Background()) })
	s, err := New(h, Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	task := &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	events := func(yield func(eventlog.Entry, error) bool) {
		if yield(eventlog.Entry{Seq: 1, Event: task}, nil) {
			yield(eventlog.Entry{}, fmt.Errorf("follow: %w", eventlog.ErrUnavailable))
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hz := hzserver.New(append(s.HertzOptions(), hzserver.WithListener(ln), hzserver.WithExitWaitTime(10*time.Millisecond))...)
	hz.GET("/stream", func(ctx context.Context, c *app.RequestContext) {
		s.serveStream(ctx, &exchange{c: httpbind.Hertz(c), media: mediaJSON, op: jsonrpc.OpSubscribeToTask}, iter.Seq2[eventlog.Entry, error](events))
	})
	ran := make(chan error, 1)
	go func() { ran <- hz.Run() }()
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hz.Shutdown(ctx)
		<-ran
	})

	var resp *http.Response
	for range 200 { // until the server listens
		if resp, err = hc.Get("http://" + ln.Addr().String() + "/stream"); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("HTTP %d, %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	events2 := strings.Split(strings.TrimSuffix(string(b), "\n\n"), "\n\n")
	if len(events2) != 2 {
		t.Fatalf("%d events, want 2:\n%s", len(events2), b)
	}
	if !strings.HasPrefix(events2[0], "id: 1\ndata: {\"task\":") {
		t.Errorf("first event:\n%s", events2[0])
	}
	sc := bufio.NewScanner(strings.NewReader(events2[1]))
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 2 || lines[0] != "event: error" || !strings.HasPrefix(lines[1], "data: ") {
		t.Fatalf("error event:\n%s", events2[1])
	}
	var st struct {
		Error struct {
			Code    int              `json:"code"`
			Status  string           `json:"status"`
			Message string           `json:"message"`
			Details []map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(lines[1], "data: ")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Error.Code != 500 || st.Error.Status != "INTERNAL" || len(st.Error.Details) != 1 || st.Error.Details[0]["reason"] != "INTERNAL_ERROR" {
		t.Errorf("error event's Status: %+v", st.Error)
	}
}
