package jsonrpcserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// rawPost sends a GetTask with the given Host and Origin (none when "").
func (w *wire) rawPost(host, origin string) reply {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	req := w.newRequest(ctx, http.MethodPost, "/", strings.NewReader(rpc("1", "GetTask", `{"id":"x"}`)), v10)
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// A page on another site cannot drive the agent through its user's
// browser: a name rebound to this server's address (Host) and a foreign
// page (Origin) are refused; the names the server is served at are not.
func TestForeignHostsRefused(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	u, _ := url.Parse(w.url)
	port := u.Port()
	for _, tt := range []struct {
		name, host, origin string
		status             int
	}{
		{"the listener's address", "", "", 200},
		{"localhost on the same port", "localhost:" + port, "", 200},
		{"LOCALHOST.", "LOCALHOST.:" + port, "", 200},
		{"[::1]", "[::1]:" + port, "", 200},
		{"the card's host", "placeholder", "", 200},
		{"a page served at the same place", "", "http://127.0.0.1:" + port, 200},
		{"a rebound name", "evil.example:" + port, "", 403},
		{"loopback on another port", "127.0.0.1:1", "", 403},
		{"a foreign page", "", "https://evil.example", 403},
		{"an opaque origin", "", "null", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := w.on(t).rawPost(tt.host, tt.origin)
			if r.status != tt.status {
				t.Fatalf("HTTP %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.status == 403 {
				checkAnswer(t, errCase{status: 403, wantID: "null", code: -32600, shape: shape10}, r.status, r.header, r.body)
			}
		})
	}

	configured := serveEcho(t, jsonrpcserver.Config{AllowedHosts: []string{"agents.example.com"}})
	if r := configured.rawPost("agents.example.com", "https://agents.example.com"); r.status != 200 {
		t.Fatalf("a configured host: HTTP %d: %s", r.status, r.body)
	}
	if r := configured.rawPost("", ""); r.status != 403 {
		t.Fatalf("with hosts configured, the listener's address: HTTP %d, want 403", r.status)
	}
	anyHost := serveEcho(t, jsonrpcserver.Config{AllowedHosts: []string{"*"}})
	if r := anyHost.rawPost("whatever.example", ""); r.status != 200 {
		t.Fatalf(`with "*": HTTP %d: %s`, r.status, r.body)
	}
}

// A refusal the client may retry says when, in the error and in HTTP.
func TestBusyAnswersRetryAfter(t *testing.T) {
	cfg := server.Config{Card: echoCard(), Executor: fastEcho()}
	cfg.Limits.MaxLiveTasks = 1
	w := serve(t, cfg, jsonrpcserver.Config{})
	w.post(rpc("1", "SendMessage", `{"message":`+msg10("input: wait")+`}`), v10).result(t)

	check := func(t *testing.T, status int, header http.Header, body []byte) {
		t.Helper()
		checkAnswer(t, errCase{wantID: `"2"`, code: -32603, shape: shape10}, status, header, body)
		if ra := header.Get("Retry-After"); ra == "" || ra == "0" {
			t.Errorf("Retry-After %q, want a number of seconds", ra)
		}
		var details []map[string]any
		_ = json.Unmarshal(decodeEnvelope(t, body).err.Data, &details)
		for _, d := range details {
			if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" && d["retryDelay"] != "" {
				return
			}
		}
		t.Errorf("error.data %v has no google.rpc.RetryInfo", details)
	}
	t.Run("unary", func(t *testing.T) {
		r := w.on(t).post(rpc(`"2"`, "SendMessage", `{"message":`+msg10("one more")+`}`), v10)
		check(t, r.status, r.header, r.body)
	})
	t.Run("stream", func(t *testing.T) {
		s := w.on(t).stream(rpc(`"2"`, "SendStreamingMessage", `{"message":`+msg10("one more")+`}`), v10)
		evs := s.all()
		if len(evs) != 1 {
			t.Fatalf("%d events, want the error alone", len(evs))
		}
		h := s.resp.Header.Clone()
		h.Set("Content-Type", "application/json") // the event's data is JSON
		check(t, http.StatusOK, h, []byte(evs[0].data))
	})
}

// A client that dribbles its request, or says nothing, loses its
// connection after RequestTimeout, however often it sends a byte; an idle
// kept-alive connection goes after IdleTimeout.
func TestSlowClientsAreCut(t *testing.T) {
	if a2atest.Mount() != a2atest.Hertz {
		t.Skip("RequestTimeout and the like are Hertz's options; mounted in net/http, the http.Server's own timeouts bound slow clients")
	}
	w := serveEcho(t, jsonrpcserver.Config{RequestTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second, IdleTimeout: 300 * time.Millisecond})
	addr := strings.TrimSuffix(strings.TrimPrefix(w.url, "http://"), "/")

	// closedWithin reports whether the server closes conn before limit,
	// writing a byte every 50 ms when dribble is set.
	closedWithin := func(conn net.Conn, limit time.Duration, dribble bool) bool {
		deadline := time.Now().Add(limit)
		buf := make([]byte, 4096)
		for time.Now().Before(deadline) {
			if dribble {
				if _, err := conn.Write([]byte("X")); err != nil {
					return true
				}
			}
			_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := conn.Read(buf); err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				return true // closed (an answer before it is fine too)
			}
		}
		return false
	}
	for _, tt := range []struct {
		name    string
		dribble bool
	}{{"silent", false}, {"dribbling", true}} {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.Write([]byte("POST / HTTP/1.1\r\nHost: " + addr + "\r\n")); err != nil {
				t.Fatal(err)
			}
			if !closedWithin(conn, 5*time.Second, tt.dribble) {
				t.Fatal("the connection was still open after 5 s with a 300 ms request timeout")
			}
		})
	}
	t.Run("idle", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := rpc("1", "GetTask", `{"id":"x"}`)
		req := "POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body
		if _, err := conn.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(requestTimeout))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !closedWithin(conn, 5*time.Second, false) {
			t.Fatal("an idle kept-alive connection was still open after 5 s with a 300 ms idle timeout")
		}
	})
}
