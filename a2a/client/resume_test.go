package client_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/services/echo"
)

// checkResumed checks the streaming requests of a stream that was cut and
// resumed: the first is the original call, each later one resubscribes
// after the last event the consumer got, with the call's headers.
func checkResumed(t *testing.T, rec *recorder, version string, first jsonrpc.Op, evs []client.Event, wantStreams int) {
	t.Helper()
	streams := rec.streams()
	if len(streams) != wantStreams {
		t.Fatalf("%d streaming requests, want %d", len(streams), wantStreams)
	}
	if got := streams[0].Method; got != first.Method(version) {
		t.Errorf("first request is %s, want %s", got, first.Method(version))
	}
	seen := map[string]bool{}
	for _, ev := range evs {
		seen[ev.ID] = true
	}
	for i, r := range streams[1:] {
		if r.Method != jsonrpc.OpSubscribeToTask.Method(version) {
			t.Errorf("resumption %d is %s, want %s", i+1, r.Method, jsonrpc.OpSubscribeToTask.Method(version))
		}
		if id := r.Header.Get("Last-Event-ID"); !seen[id] {
			t.Errorf("resumption %d has Last-Event-ID %q, not an event received", i+1, id)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer resume" {
			t.Errorf("resumption %d has Authorization %q: the call's options are lost", i+1, got)
		}
	}
}

func TestResumeAfterCut(t *testing.T) {
	s := startEcho(t, serverOpts{})
	const text = "every event exactly once"
	cases := []struct {
		name        string
		text        string
		cutAfter    int
		cutStreams  int // -1: all
		resumes     int // 0: the default
		wantEvents  int
		wantStreams int
	}{
		{name: "after the task", text: text, cutAfter: 1, cutStreams: 1, wantEvents: 13, wantStreams: 2},
		{name: "mid-artifact", text: text, cutAfter: 5, cutStreams: 1, wantEvents: 13, wantStreams: 2},
		{name: "before the final event", text: text, cutAfter: 12, cutStreams: 1, wantEvents: 13, wantStreams: 2},
		{name: "slow task", text: echo.SlowPrefix + text, cutAfter: 3, cutStreams: 1, wantEvents: 3 + slowChunks, wantStreams: 2},
		{name: "three cuts", text: text, cutAfter: 4, cutStreams: 3, wantEvents: 13, wantStreams: 4},
		{name: "every stream cut", text: text, cutAfter: 1, cutStreams: -1, resumes: 12, wantEvents: 13, wantStreams: 13},
		// Attempts count failures in a row: each resumption that delivers
		// an event earns them back, so one attempt carries a stream that
		// is cut after every event.
		{name: "progress earns attempts back", text: text, cutAfter: 1, cutStreams: -1, resumes: 1, wantEvents: 13, wantStreams: 13},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					rec := newRecorder()
					rec.cutAfter, rec.cutStreams = tc.cutAfter, tc.cutStreams
					c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client(), ResumeAttempts: tc.resumes})
					evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq(tc.text), client.BearerToken("resume")))
					if err != nil {
						t.Fatalf("stream: %v (after events %v)", err, ids(evs))
					}
					if len(evs) != tc.wantEvents {
						t.Fatalf("%d events %v, want %d", len(evs), ids(evs), tc.wantEvents)
					}
					checkConsecutive(t, evs, 1)
					if got := echoText(evs); got != tc.text {
						t.Errorf("echo = %q, want %q", got, tc.text)
					}
					if finalState(evs) != a2a.TaskStateCompleted {
						t.Errorf("final state %s", finalState(evs))
					}
					checkResumed(t, rec, v, jsonrpc.OpSendStreamingMessage, evs, tc.wantStreams)
				})
			}
		})
	}
}

// TestResubscribeResumesAfterCut: a Resubscribe stream is resumed like the
// others.
func TestResubscribeResumesAfterCut(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			all, err := collect(c.SendStreamingMessage(context.Background(), sendReq("resubscribe, cut, resume")))
			if err != nil {
				t.Fatal(err)
			}
			taskID, _ := all[0].TaskIDs()
			rec := newRecorder()
			rec.cutAfter, rec.cutStreams = 3, 1
			rc := dialConfig(t, s, v, client.Config{HTTPClient: rec.client()})
			evs, err := collect(rc.Resubscribe(context.Background(), taskID, "2", client.BearerToken("resume")))
			if err != nil {
				t.Fatal(err)
			}
			checkConsecutive(t, evs, 3)
			if len(evs) != 11 || echoText(evs) != echoText(all[2:]) {
				t.Fatalf("events %v, echo %q", ids(evs), echoText(evs))
			}
			checkResumed(t, rec, v, jsonrpc.OpSubscribeToTask, evs, 2)
			if got := rec.streams()[0].Header.Get("Last-Event-ID"); got != "2" {
				t.Errorf("first request's Last-Event-ID = %q, want 2", got)
			}
		})
	}
}

func TestCutNotResumed(t *testing.T) {
	s := startEcho(t, serverOpts{})
	cases := []struct {
		name        string
		cutAfter    int
		cutLater    int // events before the cut of resumed streams
		cutStreams  int
		resumes     int // Config.ResumeAttempts: 0, the default; negative, off
		wantEvents  int
		wantStreams int
	}{
		// Nothing was received: no task to resubscribe to.
		{name: "cut before any event", cutAfter: 0, cutLater: -1, cutStreams: 1, wantEvents: 0, wantStreams: 1},
		{name: "resumption off", cutAfter: 4, cutLater: -1, cutStreams: 1, resumes: -1, wantEvents: 4, wantStreams: 1},
		// Resumptions that deliver nothing use attempts up.
		{name: "attempts used up", cutAfter: 1, cutLater: 0, cutStreams: -1, resumes: 2, wantEvents: 1, wantStreams: 3},
		{name: "default attempts used up", cutAfter: 2, cutLater: 0, cutStreams: -1, wantEvents: 2, wantStreams: 4},
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					rec := newRecorder()
					rec.cutAfter, rec.cutLater, rec.cutStreams = tc.cutAfter, tc.cutLater, tc.cutStreams
					c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client(), ResumeAttempts: tc.resumes})
					evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq("cut short"), client.BearerToken("resume")))
					if !errors.Is(err, errCut) {
						t.Fatalf("stream ended with %v after %v, want the cut's error", err, ids(evs))
					}
					if len(evs) != tc.wantEvents {
						t.Fatalf("%d events %v, want %d", len(evs), ids(evs), tc.wantEvents)
					}
					checkConsecutive(t, evs, 1)
					checkResumed(t, rec, v, jsonrpc.OpSendStreamingMessage, evs, tc.wantStreams)
				})
			}
		})
	}
}

// TestIdleTimeoutResumes: a stream silent for longer than the idle timeout
// (the agent pauses longer, and keep-alives are far apart) is treated as
// cut and resumed, and still delivers every event exactly once. Each pause
// is shorter than twice the timeout: a resumption must hear from the
// server within the idle timeout of the cut.
func TestIdleTimeoutResumes(t *testing.T) {
	const interval = 300 * time.Millisecond
	s := startEcho(t, serverOpts{
		agent: &echo.Executor{SlowChunks: slowChunks, SlowInterval: interval},
		rpc:   jsonrpcserver.Config{KeepAlive: time.Minute},
	})
	const text = echo.SlowPrefix + "pauses longer than the idle timeout"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			rec := newRecorder()
			c := dialConfig(t, s, v, client.Config{
				HTTPClient:        rec.client(),
				StreamIdleTimeout: interval * 2 / 3,
				// Every pause is cut once; attempts are not what this
				// test limits.
				ResumeAttempts: 1000,
			})
			evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq(text), client.BearerToken("resume")))
			if err != nil {
				t.Fatalf("stream: %v (after %v)", err, ids(evs))
			}
			checkConsecutive(t, evs, 1)
			if len(evs) != 3+slowChunks || echoText(evs) != text || finalState(evs) != a2a.TaskStateCompleted {
				t.Fatalf("events %v, echo %q, state %s", ids(evs), echoText(evs), finalState(evs))
			}
			streams := rec.streams()
			if len(streams) < 2 {
				t.Fatalf("%d streaming requests: the silent stream was not treated as cut", len(streams))
			}
			checkResumed(t, rec, v, jsonrpc.OpSendStreamingMessage, evs, len(streams))
		})
	}
}

// TestIdleTimeoutKeepAlive: keep-alive comments keep a stream that has no
// event for longer than the idle timeout from being cut.
func TestIdleTimeoutKeepAlive(t *testing.T) {
	const idle = 250 * time.Millisecond
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			s := startEcho(t, serverOpts{
				hold: true,
				rpc:  jsonrpcserver.Config{KeepAlive: 10 * time.Millisecond},
			})
			rec := newRecorder()
			c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client(), StreamIdleTimeout: idle, ResumeAttempts: -1})
			task := startHeld(t, c, "kept alive")
			var evs []client.Event
			for ev, err := range c.SubscribeToTask(context.Background(), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					t.Fatalf("stream: %v (after %v)", err, ids(evs))
				}
				evs = append(evs, ev)
				if len(evs) == 1 {
					// Silent but for keep-alives, for several times the
					// idle timeout, then on.
					time.AfterFunc(4*idle, s.release)
				}
			}
			if finalState(evs) != a2a.TaskStateCompleted || len(rec.streams()) != 1 {
				t.Fatalf("events %v, %d streams", kinds(evs), len(rec.streams()))
			}
		})
	}
}

// TestBreakEarly: a consumer that stops ranging ends the stream and frees
// its connection (the package's leak check would see it otherwise), and
// the task goes on without it.
func TestBreakEarly(t *testing.T) {
	s := startEcho(t, serverOpts{})
	const text = echo.SlowPrefix + "nobody is listening"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := dial(t, s, v)
			for _, after := range []int{1, 2, 4} {
				t.Run(strconv.Itoa(after), func(t *testing.T) {
					var evs []client.Event
					for ev, err := range c.SendStreamingMessage(context.Background(), sendReq(text)) {
						if err != nil {
							t.Fatal(err)
						}
						if evs = append(evs, ev); len(evs) == after {
							break
						}
					}
					if len(evs) != after {
						t.Fatalf("%d events, want %d", len(evs), after)
					}
					taskID, _ := evs[0].TaskIDs()
					done := waitState(t, c, taskID, a2a.TaskStateCompleted)
					if got := artifactText(done); got != text {
						t.Errorf("echo = %q, want %q", got, text)
					}
				})
			}
			t.Run("Resubscribe", func(t *testing.T) {
				task := sendTask(t, c, sendReq(text))
				for ev, err := range c.Resubscribe(context.Background(), task.ID, "1") {
					if err != nil {
						t.Fatal(err)
					}
					if ev.ID != "2" {
						t.Fatalf("first event %q, want 2", ev.ID)
					}
					break
				}
			})
		})
	}
}

// TestIdleTimeoutIgnoresConsumerTime: the idle timer runs only while the
// client waits for the server, so a consumer slower than the timeout does
// not get its healthy stream cut.
func TestIdleTimeoutIgnoresConsumerTime(t *testing.T) {
	s := startEcho(t, serverOpts{
		// Keep-alives much more often than the idle timeout: the stream is
		// never silent.
		rpc: jsonrpcserver.Config{KeepAlive: 10 * time.Millisecond},
	})
	const idle = 200 * time.Millisecond
	const text = echo.SlowPrefix + "a consumer that takes its time"
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			rec := newRecorder()
			c := dialConfig(t, s, v, client.Config{HTTPClient: rec.client(), StreamIdleTimeout: idle, ResumeAttempts: -1})
			var evs []client.Event
			var err error
			for ev, e := range c.SendStreamingMessage(context.Background(), sendReq(text)) {
				if e != nil {
					err = e
					break
				}
				if evs = append(evs, ev); len(evs) == 1 {
					time.Sleep(2 * idle) // handling the event takes a while
				}
			}
			if err != nil {
				t.Fatalf("a healthy stream failed while its consumer was busy: %v (after %v)", err, ids(evs))
			}
			if len(evs) != 3+slowChunks || len(rec.streams()) != 1 {
				t.Errorf("events %v over %d streams", ids(evs), len(rec.streams()))
			}
		})
	}
}
