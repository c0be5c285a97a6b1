package restserver_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/a2atest"
)

// A page on another site cannot drive the agent through its user's
// browser: a name rebound to this server's address (Host) and a foreign
// page (Origin) are refused; the names the server is served at are not.
func TestForeignHostsRefused(t *testing.T) {
	w := serveEcho(t, restserver.Config{})
	u, _ := url.Parse(w.base)
	port := u.Port()
	get := func(w *wire, host, origin string) reply {
		return w.doWith("GET", "/tasks?pageSize=1", "", nil, func(r *http.Request) {
			if host != "" {
				r.Host = host
			}
			if origin != "" {
				r.Header.Set("Origin", origin)
			}
		})
	}
	for _, tt := range []struct {
		name, host, origin string
		status             int
	}{
		{"the listener's address", "", "", 200},
		{"localhost on the same port", "localhost:" + port, "", 200},
		{"the card's host", "placeholder", "", 200},
		{"a page served at the same place", "", "http://127.0.0.1:" + port, 200},
		{"a rebound name", "evil.example:" + port, "", 403},
		{"loopback on another port", "127.0.0.1:1", "", 403},
		{"a foreign page", "", "https://evil.example", 403},
		{"an opaque origin", "", "null", 403},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := get(w.on(t), tt.host, tt.origin)
			if tt.status == 403 {
				checkStatus(t, r, 403, "PERMISSION_DENIED", "INVALID_REQUEST")
				return
			}
			r.ok(t)
		})
	}
	configured := serveEcho(t, restserver.Config{AllowedHosts: []string{"agents.example.com"}})
	if r := get(configured, "agents.example.com", "https://agents.example.com"); r.status != 200 {
		t.Errorf("a configured host: HTTP %d: %s", r.status, r.body)
	}
	if r := get(configured, "", ""); r.status != 403 {
		t.Errorf("with hosts configured, the listener's address: HTTP %d, want 403", r.status)
	}
}

// A body over MaxBodyBytes is refused with 413 whether its length is
// declared or it comes chunked.
func TestOversizedBodies(t *testing.T) {
	w := serveEcho(t, restserver.Config{MaxBodyBytes: 1024})
	big := `{"message":` + msg(strings.Repeat("x", 4096)) + `}`
	for _, chunked := range []bool{false, true} {
		r := w.doWith("POST", "/message:send", big, nil, func(r *http.Request) {
			if chunked {
				r.ContentLength = -1
				r.Body = io.NopCloser(strings.NewReader(big))
			}
		})
		checkStatus(t, r, 413, "INVALID_ARGUMENT", "INVALID_REQUEST")
	}
}

// A client that dribbles its request, or says nothing, loses its
// connection after RequestTimeout, however often it sends a byte.
func TestSlowClientsAreCut(t *testing.T) {
	if a2atest.Mount() != a2atest.Hertz {
		t.Skip("RequestTimeout and the like are Hertz's options; mounted in net/http, the http.Server's own timeouts bound slow clients")
	}
	w := serveEcho(t, restserver.Config{RequestTimeout: 300 * time.Millisecond, ReadTimeout: 5 * time.Second, IdleTimeout: 300 * time.Millisecond})
	addr := strings.TrimPrefix(w.base, "http://")
	for _, dribble := range []bool{false, true} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("GET /tasks HTTP/1.1\r\nHost: " + addr + "\r\n")); err != nil {
			t.Fatal(err)
		}
		closed := false
		buf := make([]byte, 4096)
		for deadline := time.Now().Add(5 * time.Second); !closed && time.Now().Before(deadline); {
			if dribble {
				if _, err := conn.Write([]byte("X")); err != nil {
					closed = true
					break
				}
			}
			_ = conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			if _, err := conn.Read(buf); err != nil {
				var ne net.Error
				closed = !errors.As(err, &ne) || !ne.Timeout()
			}
		}
		conn.Close()
		if !closed {
			t.Errorf("dribbling %v: the connection was still open after 5 s with a 300 ms request timeout", dribble)
		}
	}
}

// A2A-Extensions reaches the Handler as the call's extensions: an agent
// that requires one serves a request that names it, among others.
func TestExtensionsHeader(t *testing.T) {
	card := echoCard()
	card.Capabilities.Extensions = []a2a.AgentExtension{{URI: requiredExt, Required: true}}
	w := serve(t, server.Config{Card: card, Executor: fastEcho()}, restserver.Config{})
	body := `{"message":` + msg("hi") + `}`
	checkStatus(t, w.do("POST", "/message:send", body, nil), 400, "FAILED_PRECONDITION", "EXTENSION_SUPPORT_REQUIRED")
	w.do("POST", "/message:send", body, hdr("A2A-Extensions", "https://example.com/other, "+requiredExt)).ok(t)
	w.stream("POST", "/message:stream", body, hdr("A2A-Extensions", requiredExt)).all()
}
