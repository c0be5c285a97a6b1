package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/services/echo"
)

// selfCardServer serves a card that it makes from its own base URL
// ("http://127.0.0.1:port/"), and counts the requests it gets.
type selfCardServer struct {
	*httptest.Server
	requests atomic.Int32
	mu       sync.Mutex
	card     []byte
}

func newSelfCardServer(t *testing.T, card func(self string) *a2a.AgentCard) *selfCardServer {
	s := &selfCardServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.mu.Lock()
		body := s.card
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(s.Close)
	s.mu.Lock()
	s.card = cardJSON(t, card(s.URL+"/"))
	s.mu.Unlock()
	return s
}

// countingServer stands for a server a card must not send the client
// to: it counts what reaches it.
func countingServer(t *testing.T) (string, *atomic.Int32) {
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, "not the agent", http.StatusTeapot)
	}))
	t.Cleanup(s.Close)
	return s.URL + "/", &n
}

func jsonrpcCard(url string) *a2a.AgentCard {
	return &a2a.AgentCard{Name: "card", SupportedInterfaces: []a2a.AgentInterface{
		{URL: url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version}}}
}

// TestCardInterfaceOrigin: the URL a card is fetched from is what New
// trusts. An interface on the same origin (any path, relative or not) is
// used; one on another origin is refused with an error naming both URLs,
// unless Config.AllowedOrigins admits that origin.
func TestCardInterfaceOrigin(t *testing.T) {
	other, otherHits := countingServer(t)
	otherOrigin := strings.TrimSuffix(other, "/")
	cases := []struct {
		name    string
		iface   func(self string) string // the interface URL the card names
		allow   []string
		want    func(self string) string // the endpoint the client uses; nil: refused
		wantErr []string                 // more the error must say
	}{
		{name: "same URL", iface: same, want: same},
		{name: "same origin, another path", iface: path("a2a/v1"), want: path("a2a/v1")},
		{name: "same origin, no trailing slash", iface: func(self string) string { return strings.TrimSuffix(self, "/") }, want: func(self string) string { return strings.TrimSuffix(self, "/") }},
		{name: "scheme in capitals", iface: func(self string) string { return "HTTP://" + strings.TrimPrefix(self, "http://") + "rpc" }, want: path("rpc")},
		{name: "relative path", iface: literal("/rpc"), want: path("rpc")},
		{name: "relative to the card", iface: literal("rpc"), want: path(".well-known/rpc")},
		{name: "another port", iface: literal(other)},
		{name: "another host, same machine", iface: func(self string) string { return strings.Replace(self, "127.0.0.1", "localhost", 1) }},
		{name: "another scheme", iface: func(self string) string { return strings.Replace(self, "http:", "https:", 1) }},
		{name: "protocol-relative to another host", iface: literal("//" + strings.TrimPrefix(other, "http://"))},
		{name: "allowed origin", iface: literal(other), allow: []string{otherOrigin}, want: literal(other)},
		{name: "allowed origin with a slash", iface: literal(other + "rpc"), allow: []string{other}, want: literal(other + "rpc")},
		{name: "another origin allowed", iface: literal(other), allow: []string{"http://127.0.0.1:1"}},
		{name: "bad allowed origin", iface: same, allow: []string{"127.0.0.1:9000"}, wantErr: []string{`allowed origin "127.0.0.1:9000"`, "scheme://host[:port]"}},
		{name: "allowed origin with a path", iface: same, allow: []string{otherOrigin + "/agents"}, wantErr: []string{"want scheme://host[:port]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSelfCardServer(t, func(self string) *a2a.AgentCard { return jsonrpcCard(tc.iface(self)) })
			self := s.URL + "/"
			hc := newHTTPClient()
			t.Cleanup(hc.CloseIdleConnections)
			c, err := client.New(context.Background(), self, client.Config{HTTPClient: hc, AllowedOrigins: tc.allow})
			if tc.want != nil {
				if err != nil {
					t.Fatal(err)
				}
				if got := c.URL(); got != tc.want(self) {
					t.Errorf("client at %s, want %s", got, tc.want(self))
				}
				return
			}
			if err == nil {
				t.Fatalf("New = client at %s, want an error", c.URL())
			}
			if !errors.Is(err, client.ErrOriginRefused) {
				t.Errorf("error %v does not match ErrOriginRefused", err)
			}
			want := tc.wantErr
			if want == nil {
				named := tc.iface(self)
				if strings.HasPrefix(named, "//") {
					named = "http:" + named
				}
				want = []string{self + ".well-known/agent-card.json", "interface at " + named + ",", "on another origin than the card's", "Config.AllowedOrigins"}
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("%d requests reached the other origin", n)
	}
}

func same(self string) string { return self }

func path(p string) func(string) string { return func(self string) string { return self + p } }

func literal(url string) func(string) string { return func(string) string { return url } }

// TestSpoofedCardSendsNothingElsewhere: a card at the agent's URL that
// names another server's interface sends no message there; allowing the
// other origin (it is the agent's own, elsewhere) makes the calls go there.
func TestSpoofedCardSendsNothingElsewhere(t *testing.T) {
	target := startEcho(t, serverOpts{})
	spoof := newSelfCardServer(t, func(string) *a2a.AgentCard { return echo.Card(target.URL) })
	rec := newRecorder()
	_, err := client.New(context.Background(), spoof.URL, client.Config{HTTPClient: rec.client()})
	if !errors.Is(err, client.ErrOriginRefused) || !strings.Contains(err.Error(), target.URL) {
		t.Fatalf("New = %v, want the other origin refused", err)
	}
	if reqs := rec.requests(); len(reqs) != 1 || reqs[0].Method != "" {
		t.Fatalf("requests %+v, want the card fetch only", reqs)
	}

	c := dialVia(t, spoof.URL, client.Config{AllowedOrigins: []string{target.URL}})
	if got := artifactText(completedTask(t, c, "allowed")); got != "allowed" {
		t.Errorf("echo = %q", got)
	}
}

// dialVia resolves the card at url with cfg, whose HTTPClient it sets to
// one of the test's own.
func dialVia(t *testing.T, url string, cfg client.Config) *client.Client {
	t.Helper()
	cfg.HTTPClient = newHTTPClient()
	c, err := client.New(context.Background(), url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// TestGuard: Config.Guard makes every connection, the card fetch included,
// dial through the guard: a loopback agent is refused without an
// allowlist entry and reached with one.
func TestGuard(t *testing.T) {
	s := startEcho(t, serverOpts{})
	cardHits := newSelfCardServer(t, func(string) *a2a.AgentCard { return echo.Card(s.URL) })
	ctx := context.Background()
	t.Run("card fetch refused", func(t *testing.T) {
		_, err := client.New(ctx, cardHits.URL, client.Config{Guard: &netguard.Guard{}})
		if !errors.Is(err, netguard.ErrRefused) || !strings.Contains(err.Error(), "loopback") {
			t.Fatalf("New = %v, want a netguard refusal", err)
		}
		if n := cardHits.requests.Load(); n != 0 {
			t.Errorf("%d requests reached the card server", n)
		}
	})
	t.Run("calls refused", func(t *testing.T) {
		for _, hc := range []*http.Client{nil, {}, {Transport: &http.Transport{}}} {
			c := fromURL(t, s.URL, client.Config{Guard: &netguard.Guard{}, HTTPClient: hc})
			_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "t"})
			if !errors.Is(err, netguard.ErrRefused) {
				t.Errorf("GetTask = %v, want a netguard refusal", err)
			}
			_, err = collect(c.SendStreamingMessage(ctx, sendReq("guarded")))
			if !errors.Is(err, netguard.ErrRefused) {
				t.Errorf("SendStreamingMessage = %v, want a netguard refusal", err)
			}
			c.CloseIdleConnections()
			if hc != nil && hc.Transport != nil && hc.Transport.(*http.Transport).DialContext != nil {
				t.Errorf("Config.Guard changed the transport it was given")
			}
		}
	})
	t.Run("allowed", func(t *testing.T) {
		guard := &netguard.Guard{Allow: []string{"127.0.0.0/8"}}
		c := dialVia(t, s.URL, client.Config{Guard: guard})
		if got := artifactText(completedTask(t, c, "guarded")); got != "guarded" {
			t.Errorf("echo = %q", got)
		}
		if _, err := collect(c.SendStreamingMessage(ctx, sendReq("guarded stream"))); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a transport that cannot be guarded", func(t *testing.T) {
		rec := newRecorder()
		_, err := client.New(ctx, s.URL, client.Config{Guard: &netguard.Guard{Allow: []string{"127.0.0.0/8"}}, HTTPClient: rec.client()})
		if err == nil || !strings.Contains(err.Error(), "Config.Guard needs") {
			t.Fatalf("New = %v, want an error saying the transport cannot be guarded", err)
		}
		if n := len(rec.requests()); n != 0 {
			t.Errorf("%d requests went out unguarded", n)
		}
	})
}
