package console_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/common/config"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/gateway/console"
)

const apiKey = "console-test-key-0123456789"

var quiet = slog.New(slog.DiscardHandler)

// serveConsole serves a console of cfg on a real Hertz server until the
// test ends, and returns its base URL.
func serveConsole(t *testing.T, cfg console.Config) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hosts == nil {
		cfg.Hosts = console.HostsOf("", ln.Addr())
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := server.New(server.WithListener(ln), server.WithExitWaitTime(time.Second), config.Option{F: func(o *config.Options) { o.NoDefaultServerHeader = true }})
	console.New(cfg).Register(ctx, h)
	ran := make(chan error, 1)
	go func() { ran <- h.Run() }()
	t.Cleanup(func() {
		cancel()
		sctx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		_ = h.Shutdown(sctx)
		<-ran
	})
	return "http://" + ln.Addr().String()
}

// readyAgent answers /readyz as an agent that takes work does.
func readyAgent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "ready\n")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// downAgent is the URL of a port nothing listens on.
func downAgent(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

func gate(t *testing.T, anonymous bool) *auth.Gate {
	t.Helper()
	keys, err := auth.NewAPIKeys(auth.APIKeysConfig{Keys: []auth.APIKey{{Key: apiKey, Name: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	g, err := auth.NewGate(auth.GateConfig{Authenticators: []auth.Authenticator{keys}, AllowAnonymous: anonymous,
		Audit: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestEndpoints(t *testing.T) {
	agents := map[string]string{"up": readyAgent(t), "down": downAgent(t)}
	open := serveConsole(t, console.Config{Name: "Mesh", Agents: agents, Entry: json.RawMessage(`{"agent":"up"}`)})
	gated := serveConsole(t, console.Config{Agents: agents, Gate: gate(t, false), NATS: "nats://127.0.0.1:1"})
	anonymousGate := serveConsole(t, console.Config{Gate: gate(t, true), NATS: "nats://127.0.0.1:1"})
	named := serveConsole(t, console.Config{Hosts: []string{"mesh.example:8080"}})
	unreachable := serveConsole(t, console.Config{NATS: "nats://127.0.0.1:1", Logger: quiet})

	tests := []struct {
		name    string
		base    string
		path    string
		headers map[string]string
		status  int
		want    string // in the body
		header  [2]string
	}{
		{name: "the page", base: open, path: "/console/", status: 200, want: "a2amesh console",
			header: [2]string{"Content-Security-Policy", "default-src 'self'"}},
		{name: "its script", base: open, path: "/console/app.js", status: 200, want: "textContent",
			header: [2]string{"Content-Type", "javascript"}},
		{name: "no such file", base: open, path: "/console/nope.js", status: 404},
		{name: "no climbing out", base: open, path: "/console/../console.go", status: 404},
		{name: "the topology, probed", base: open, path: "/console/api/topology", status: 200,
			want: `"name":"Mesh","agents":[{"key":"down","url":"` + agents["down"] + `","ready":false,"status":"unreachable: `},
		{name: "a ready agent", base: open, path: "/console/api/topology", status: 200,
			want: `{"key":"up","url":"` + agents["up"] + `","ready":true,"status":"ready"}],"entry":{"agent":"up"},"events":false}`},
		{name: "a bad since", base: unreachable, path: "/console/api/events?since=yesterday", status: 400, want: "want a duration"},
		{name: "NATS out of reach", base: unreachable, path: "/console/api/events", status: 502},
		{name: "no NATS, no feed", base: open, path: "/console/api/events", status: 404, want: "no NATS server"},
		{name: "gated: no key", base: gated, path: "/console/api/topology", status: 401, want: "ConsoleTopology"},
		{name: "gated: a wrong key", base: gated, path: "/console/api/topology", headers: map[string]string{"X-API-Key": "wrong-key-0123456789abc"}, status: 401},
		{name: "gated: the key", base: gated, path: "/console/api/topology", headers: map[string]string{"X-API-Key": apiKey}, status: 200, want: `"events":true`},
		{name: "gated: the feed without a key", base: gated, path: "/console/api/events", status: 401, want: "ConsoleEvents"},
		{name: "gated: pages need no key", base: gated, path: "/console/", status: 200, want: "a2amesh console"},
		{name: "open gate: topology to anyone", base: anonymousGate, path: "/console/api/topology", status: 200},
		{name: "open gate: the feed to no anonymous caller", base: anonymousGate, path: "/console/api/events", status: 401, want: "names themselves"},
		{name: "a rebound host", base: open, path: "/console/api/topology", headers: map[string]string{"Host": "evil.example"}, status: 403, want: "evil.example"},
		{name: "a page elsewhere", base: open, path: "/console/api/topology", headers: map[string]string{"Origin": "http://evil.example"}, status: 403, want: "evil.example"},
		{name: "a listed host", base: named, path: "/console/api/topology", headers: map[string]string{"Host": "MESH.example:8080"}, status: 200},
		{name: "an unlisted one", base: named, path: "/console/api/topology", status: 403},
	}
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, tt.base+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.headers {
				if k == "Host" {
					req.Host = v
				}
				req.Header.Set(k, v)
			}
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.status || !strings.Contains(string(body), tt.want) {
				t.Fatalf("%s: %s\n%s\nwant %d with %q", tt.path, res.Status, body, tt.status, tt.want)
			}
			if tt.header[0] != "" && !strings.Contains(res.Header.Get(tt.header[0]), tt.header[1]) {
				t.Errorf("%s: %q, want it to hold %q", tt.header[0], res.Header.Get(tt.header[0]), tt.header[1])
			}
		})
	}
}

func TestRedirect(t *testing.T) {
	base := serveConsole(t, console.Config{})
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	res, err := hc.Get(base + "/console")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusFound || res.Header.Get("Location") != "/console/" {
		t.Fatalf("/console: %s to %q, want 302 to /console/", res.Status, res.Header.Get("Location"))
	}
}

func TestHostsOf(t *testing.T) {
	tcp := func(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }
	tests := []struct {
		public string
		addr   net.Addr
		want   []string
	}{
		{"", tcp("127.0.0.1:9100"), []string{"localhost:9100", "127.0.0.1:9100", "[::1]:9100"}},
		{"https://mesh.example/", tcp("10.0.0.5:9100"), []string{"mesh.example", "mesh.example:443", "10.0.0.5:9100"}},
		{"http://mesh.example:8080/", tcp("0.0.0.0:9100"), []string{"*"}},
	}
	for _, tt := range tests {
		if got := console.HostsOf(tt.public, tt.addr); strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("HostsOf(%q, %v) = %q, want %q", tt.public, tt.addr, got, tt.want)
		}
	}
}
