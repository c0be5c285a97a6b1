package client_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/services/echo"
)

// cardServer serves a fixed agent card (or any body) from a net/http
// server on 127.0.0.1, counting its open connections.
type cardServer struct {
	*httptest.Server
	open atomic.Int32
	gets atomic.Int32
}

func newCardServer(t *testing.T, status int, body []byte) *cardServer {
	cs := &cardServer{}
	cs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.gets.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	cs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			cs.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			cs.open.Add(-1)
		}
	}
	cs.Start()
	t.Cleanup(cs.Close)
	return cs
}

// allClosed waits, within a bound, until no client connection is open.
func (cs *cardServer) allClosed() bool {
	for range 100 {
		if cs.open.Load() == 0 {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

func cardJSON(t *testing.T, card *a2a.AgentCard) []byte {
	b, err := a2av03.CardJSON(card)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestResolve(t *testing.T) {
	s := startEcho(t, serverOpts{})
	cases := []struct {
		name string
		url  string
	}{
		{"base URL with trailing slash", s.URL},
		{"base URL without trailing slash", strings.TrimSuffix(s.URL, "/")},
		{"card URL", s.URL + ".well-known/agent-card.json"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hc := newHTTPClient()
			t.Cleanup(hc.CloseIdleConnections)
			card, err := client.Resolve(context.Background(), tc.url, client.Config{HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			if card.Name != "echo" || !card.Capabilities.Streaming || len(card.SupportedInterfaces) != 2 {
				t.Fatalf("card = %+v", card)
			}
			for i, want := range []string{a2a.Version, a2a.Version03} {
				if iface := card.SupportedInterfaces[i]; iface.URL != s.URL || iface.ProtocolVersion != want || iface.ProtocolBinding != a2a.BindingJSONRPC {
					t.Errorf("interface %d = %+v", i, iface)
				}
			}

			c, err := client.New(context.Background(), tc.url, client.Config{HTTPClient: newHTTPClient()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			if c.ProtocolVersion() != a2a.Version || c.URL() != s.URL || c.Card() == nil || c.Card().Name != "echo" {
				t.Fatalf("client speaks %s at %s, card %v", c.ProtocolVersion(), c.URL(), c.Card())
			}
			if got := artifactText(completedTask(t, c, "resolved")); got != "resolved" {
				t.Errorf("echo = %q", got)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	s := startEcho(t, serverOpts{})
	notJSON := newCardServer(t, http.StatusOK, []byte("<html>not a card</html>"))
	gone := newCardServer(t, http.StatusNotFound, []byte(`{"error":"no card here"}`))
	cases := []struct {
		name, url, want string
	}{
		{"not http", "ftp://127.0.0.1/agent", "want an http(s) URL"},
		{"no host", "http:///agent", "want an http(s) URL"},
		{"no card at the path", s.URL + "elsewhere/", "404"},
		{"HTTP error", gone.URL, "404"},
		{"not a card", notJSON.URL, notJSON.URL[len("http://"):]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hc := newHTTPClient()
			t.Cleanup(hc.CloseIdleConnections)
			card, err := client.Resolve(context.Background(), tc.url, client.Config{HTTPClient: hc})
			if err == nil {
				t.Fatalf("Resolve(%s) = %+v, want an error", tc.url, card)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if c, err := client.New(context.Background(), tc.url, client.Config{HTTPClient: hc}); err == nil {
				t.Errorf("New(%s) = %v, want an error", tc.url, c.URL())
			}
		})
	}
}

// TestNewPicksLegacyCard resolves a card in the 0.3 form, which offers only
// 0.3: the client speaks 0.3 to the real server.
func TestNewPicksLegacyCard(t *testing.T) {
	s := startEcho(t, serverOpts{})
	legacy := newCardServer(t, http.StatusOK, []byte(`{
		"name": "legacy echo",
		"description": "an agent from before 1.0",
		"protocolVersion": "0.3",
		"url": "`+s.URL+`",
		"preferredTransport": "JSONRPC",
		"version": "0.1.0",
		"capabilities": {"streaming": true},
		"defaultInputModes": ["text/plain"],
		"defaultOutputModes": ["text/plain"],
		"skills": []
	}`))
	rec := newRecorder()
	// The card names the echo server, another origin.
	c, err := client.New(context.Background(), legacy.URL, client.Config{HTTPClient: rec.client(), AllowedOrigins: []string{s.URL}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	if c.ProtocolVersion() != a2a.Version03 || c.URL() != s.URL || c.Card().Name != "legacy echo" {
		t.Fatalf("client speaks %s at %s (card %q), want 0.3 at %s", c.ProtocolVersion(), c.URL(), c.Card().Name, s.URL)
	}
	if got := artifactText(completedTask(t, c, "old times")); got != "old times" {
		t.Errorf("echo = %q", got)
	}
	evs, err := collect(c.SendStreamingMessage(context.Background(), sendReq("old stream")))
	if err != nil || echoText(evs) != "old stream" {
		t.Fatalf("stream: %q, %v", echoText(evs), err)
	}
	var methods []string
	for _, r := range rec.requests() {
		if r.Method != "" {
			methods = append(methods, r.Method)
			if got := r.Header.Get("A2A-Version"); got != a2a.Version03 {
				t.Errorf("%s sent A2A-Version %q", r.Method, got)
			}
		}
	}
	if strings.Join(methods, " ") != "message/send message/stream" {
		t.Errorf("methods = %v, want the 0.3 ones", methods)
	}

	if c, err := client.New(context.Background(), legacy.URL, client.Config{HTTPClient: rec.client(), ProtocolVersion: a2a.Version}); err == nil {
		t.Errorf("New asking for 1.0 of a 0.3-only card = client at %s, want an error", c.URL())
	} else if !strings.Contains(err.Error(), "JSONRPC 1.0") {
		t.Errorf("error %q does not say what was asked for", err)
	}
}

func TestNewFromCard(t *testing.T) {
	const url = "http://127.0.0.1:1/a2a"
	iface := func(binding, version, url string) a2a.AgentInterface {
		return a2a.AgentInterface{URL: url, ProtocolBinding: binding, ProtocolVersion: version}
	}
	cases := []struct {
		name        string
		ifaces      []a2a.AgentInterface
		cfg         client.Config
		wantVersion string
		wantURL     string
		wantBinding string   // empty: JSONRPC
		wantErr     []string // what the error mentions
	}{
		{
			name:        "echo card: 1.0",
			ifaces:      echo.Card(url).SupportedInterfaces,
			wantVersion: a2a.Version, wantURL: url,
		},
		{
			name:        "echo card, asking for 0.3",
			ifaces:      echo.Card(url).SupportedInterfaces,
			cfg:         client.Config{ProtocolVersion: a2a.Version03},
			wantVersion: a2a.Version03, wantURL: url,
		},
		{
			name:        "0.3 listed first: 1.0 still preferred",
			ifaces:      []a2a.AgentInterface{iface(a2a.BindingJSONRPC, a2a.Version03, url+"/v03"), iface(a2a.BindingJSONRPC, a2a.Version, url+"/v1")},
			wantVersion: a2a.Version, wantURL: url + "/v1",
		},
		{
			name:        "JSONRPC among other bindings",
			ifaces:      []a2a.AgentInterface{iface(a2a.BindingGRPC, a2a.Version, "grpc://127.0.0.1:1"), iface(a2a.BindingJSONRPC, a2a.Version03, url)},
			wantVersion: a2a.Version03, wantURL: url,
		},
		{
			name:        "no JSONRPC interface: HTTP+JSON",
			ifaces:      []a2a.AgentInterface{iface(a2a.BindingGRPC, a2a.Version, "127.0.0.1:1"), iface(a2a.BindingHTTPJSON, a2a.Version, url)},
			wantVersion: a2a.Version, wantURL: url, wantBinding: a2a.BindingHTTPJSON,
		},
		{
			name:        "HTTP+JSON preferred",
			ifaces:      []a2a.AgentInterface{iface(a2a.BindingJSONRPC, a2a.Version, url+"/rpc"), iface(a2a.BindingHTTPJSON, a2a.Version, url)},
			cfg:         client.Config{Bindings: []client.Binding{client.HTTPJSON, client.JSONRPC}},
			wantVersion: a2a.Version, wantURL: url, wantBinding: a2a.BindingHTTPJSON,
		},
		{
			name:    "no interface of the bindings asked for",
			ifaces:  []a2a.AgentInterface{iface(a2a.BindingGRPC, a2a.Version, "127.0.0.1:1"), iface(a2a.BindingHTTPJSON, a2a.Version, url)},
			cfg:     client.Config{Bindings: []client.Binding{client.JSONRPC}},
			wantErr: []string{`"test agent"`, "offers no JSONRPC 1.0 or 0.3 interface", "GRPC 1.0 at 127.0.0.1:1", "HTTP+JSON 1.0 at " + url},
		},
		{
			name:    "no interfaces",
			wantErr: []string{"offers no JSONRPC 1.0 or 0.3, HTTP+JSON 1.0 interface"},
		},
		{
			name:    "unknown JSONRPC version only",
			ifaces:  []a2a.AgentInterface{iface(a2a.BindingJSONRPC, "2.0", url)},
			wantErr: []string{"offers no JSONRPC 1.0 or 0.3, HTTP+JSON 1.0 interface", "JSONRPC 2.0 at " + url},
		},
		{
			name:    "asking for a version not offered",
			ifaces:  echo.Card(url).SupportedInterfaces,
			cfg:     client.Config{ProtocolVersion: "2.0"},
			wantErr: []string{"offers no JSONRPC 2.0, HTTP+JSON 2.0 interface"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			card := &a2a.AgentCard{Name: "test agent", SupportedInterfaces: tc.ifaces}
			c, err := client.NewFromCard(card, tc.cfg)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("NewFromCard = client for %s at %s, want an error", c.ProtocolVersion(), c.URL())
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(c.CloseIdleConnections)
			wantBinding := cmp.Or(tc.wantBinding, a2a.BindingJSONRPC)
			if c.ProtocolVersion() != tc.wantVersion || c.URL() != tc.wantURL || c.Binding() != wantBinding || c.Card() != card {
				t.Errorf("client speaks %s %s at %s, want %s %s at %s", c.Binding(), c.ProtocolVersion(), c.URL(), wantBinding, tc.wantVersion, tc.wantURL)
			}
		})
	}
}

func TestNewFromURL(t *testing.T) {
	s := startEcho(t, serverOpts{})
	for _, tc := range []struct{ version, want string }{{"", a2a.Version}, {a2a.Version, a2a.Version}, {a2a.Version03, a2a.Version03}} {
		t.Run("version "+tc.version, func(t *testing.T) {
			c := fromURL(t, s.URL, client.Config{ProtocolVersion: tc.version})
			t.Cleanup(c.CloseIdleConnections)
			if c.ProtocolVersion() != tc.want || c.URL() != s.URL || c.Card() != nil {
				t.Fatalf("client speaks %s at %s, card %v", c.ProtocolVersion(), c.URL(), c.Card())
			}
			if got := artifactText(completedTask(t, c, "direct")); got != "direct" {
				t.Errorf("echo = %q", got)
			}
		})
	}
}

// TestNewFromCardPrefersFirstInterface: the card lists its interfaces
// preferred first, so of several of the same version NewFromCard takes the
// first.
func TestNewFromCardPrefersFirstInterface(t *testing.T) {
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			card := &a2a.AgentCard{Name: "two endpoints", SupportedInterfaces: []a2a.AgentInterface{
				{URL: "http://127.0.0.1:1/preferred", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: v},
				{URL: "http://127.0.0.1:1/fallback", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: v},
			}}
			for _, cfg := range []client.Config{{}, {ProtocolVersion: v}} {
				c, err := client.NewFromCard(card, cfg)
				if err != nil {
					t.Fatal(err)
				}
				c.CloseIdleConnections()
				if c.URL() != card.SupportedInterfaces[0].URL {
					t.Errorf("NewFromCard chose %s, want the preferred %s", c.URL(), card.SupportedInterfaces[0].URL)
				}
			}
		})
	}
}

// TestResolveLeavesNoConnectionOpen: Resolve without Config.HTTPClient closes
// the connection of the client it made, and New hands the card fetch's
// client to the Client it returns, whose CloseIdleConnections closes it.
func TestResolveLeavesNoConnectionOpen(t *testing.T) {
	s := startEcho(t, serverOpts{})
	cases := []struct {
		name string
		run  func(t *testing.T, cardURL string)
	}{
		{"Resolve", func(t *testing.T, cardURL string) {
			if _, err := client.Resolve(context.Background(), cardURL, client.Config{}); err != nil {
				t.Fatal(err)
			}
		}},
		{"New then CloseIdleConnections", func(t *testing.T, cardURL string) {
			c, err := client.New(context.Background(), cardURL, client.Config{AllowedOrigins: []string{s.URL}})
			if err != nil {
				t.Fatal(err)
			}
			c.CloseIdleConnections()
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cs := newCardServer(t, http.StatusOK, cardJSON(t, echo.Card(s.URL)))
			tc.run(t, cs.URL)
			if cs.gets.Load() != 1 {
				t.Fatalf("%d card fetches", cs.gets.Load())
			}
			if !cs.allClosed() {
				t.Errorf("the card fetch's connection is still open after the call")
				// Close it from the server's side, so that the leak check
				// of the package does not fail as well.
				cs.CloseClientConnections()
			}
		})
	}
}

// The card fetch names the client's version, as a 1.0 client names it on
// every request; a client held to 0.3 sends no version, as 0.3 clients.
func TestResolveSendsVersion(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("A2A-Version")
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(echo.Card("http://" + r.Host + "/"))
	}))
	defer srv.Close()
	for _, tc := range []struct{ version, want string }{{"", a2a.Version}, {a2a.Version, a2a.Version}, {a2a.Version03, ""}} {
		if _, err := client.Resolve(context.Background(), srv.URL, client.Config{ProtocolVersion: tc.version}); err != nil {
			t.Fatal(err)
		}
		if v := <-got; v != tc.want {
			t.Errorf("ProtocolVersion %q: the card fetch sent A2A-Version %q, want %q", tc.version, v, tc.want)
		}
	}
}
