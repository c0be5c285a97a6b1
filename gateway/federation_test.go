package gateway

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/serve"
	"github.com/a2amesh/a2amesh/services/echo"
)

func newKey(t *testing.T) crypto.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// serveSigned serves the echo agent with its card signed by key until the
// test ends, and returns its URL.
func serveSigned(t *testing.T, key crypto.Signer, kid string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := serve.NewExecutor(ctx, new(echo.Executor), echo.Card(""), serve.Config{SigningKey: key, SigningKeyID: kid, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s.URL()
}

// TestImports: a topology imports another team's agent by its URL; the
// gateway uses it when its card verifies against the team's keys (pinned
// in a file, or their JWKS URL), and refuses it, naming it, when the card
// is signed by another key, unless the import only warns.
func TestImports(t *testing.T) {
	teamKey, otherKey := newKey(t), newKey(t)
	// The forger even names the team's key id.
	genuine, forged := serveSigned(t, teamKey, "team-a"), serveSigned(t, otherKey, "team-a")
	jwks, err := cardsign.PublicJWKS(cardsign.PublicKey{ID: "team-a", Key: teamKey.Public()})
	if err != nil {
		t.Fatal(err)
	}
	keysFile := filepath.Join(t.TempDir(), "team-a.jwks.json")
	if err := os.WriteFile(keysFile, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	build := func(imp *Import) (adk.Agent, error) {
		top := &Topology{Version: 1, Imports: map[string]*Import{"research": imp},
			Federation: Federation{AllowHosts: []string{"127.0.0.1"}}, Entry: &Node{Agent: "research"}}
		return top.Build(context.Background(), Config{Remote: bridge.RemoteConfig{HTTPClient: hc}, Serve: serve.Config{Logger: slog.New(slog.DiscardHandler)}})
	}
	tests := []struct {
		name    string
		imp     *Import
		refused bool
	}{
		{"pinned keys", &Import{URL: genuine, KeysFile: keysFile}, false},
		{"the team's JWKS", &Import{URL: genuine, JWKSURL: strings.TrimSuffix(genuine, "/") + serve.JWKSPath}, false},
		{"signed by another key", &Import{URL: forged, KeysFile: keysFile}, true},
		{"the forger's own JWKS is not the team's", &Import{URL: forged, JWKSURL: strings.TrimSuffix(genuine, "/") + serve.JWKSPath}, true},
		{"signed by another key, warn only", &Import{URL: forged, KeysFile: keysFile, Signature: "warn"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := build(tt.imp)
			if tt.refused {
				if !errors.Is(err, bridge.ErrCardRefused) || !strings.Contains(err.Error(), "echo") {
					t.Fatalf("Build = %v, want the card refused, naming the agent", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Name(context.Background()) != "echo" {
				t.Fatalf("imported %s", a.Name(context.Background()))
			}
		})
	}
}

// TestImportRateLimit: past an import's rate limit a run fails at once
// with a retryable error naming the agent.
func TestImportRateLimit(t *testing.T) {
	url := serveSigned(t, newKey(t), "")
	top := &Topology{Version: 1, Imports: map[string]*Import{"research": {URL: url, Signature: "warn", RateLimit: &RateLimit{PerSecond: 0.001, Burst: 1}}},
		Federation: Federation{AllowHosts: []string{"127.0.0.1"}}, Entry: &Node{Agent: "research"}}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	defer hc.CloseIdleConnections()
	ctx := context.Background()
	a, err := top.Build(ctx, Config{Remote: bridge.RemoteConfig{HTTPClient: hc}, Serve: serve.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		t.Fatal(err)
	}
	run := func() error {
		it := a.Run(ctx, &adk.AgentInput{Messages: nil})
		var last error
		for ev, ok := it.Next(); ok; ev, ok = it.Next() {
			if ev.Err != nil {
				last = ev.Err
			}
		}
		return last
	}
	if err := run(); err != nil {
		t.Fatalf("the first run: %v", err)
	}
	err = run()
	if e := a2a.AsError(err); err == nil || e.RetryAfter <= 0 || !strings.Contains(err.Error(), "echo") || !strings.Contains(err.Error(), "rate limit") {
		t.Fatalf("the second run: %v, want a retryable refusal naming the agent", err)
	}
}

func TestImportChecks(t *testing.T) {
	base := func() *Topology {
		return &Topology{Version: 1, Agents: map[string]string{"local": "http://127.0.0.1:1/"},
			Imports:    map[string]*Import{"research": {URL: "https://agents.team-a.example/research/", JWKSURL: "https://agents.team-a.example/.well-known/jwks.json"}},
			Federation: Federation{AllowHosts: []string{"*.team-a.example"}}, Entry: &Node{Agent: "research"}}
	}
	if err := base().Check(); err != nil {
		t.Fatalf("the valid import: %v", err)
	}
	for name, tt := range map[string]struct {
		change func(*Topology)
		want   string
	}{
		"a host not allowed":         {func(t *Topology) { t.Imports["research"].URL = "https://evil.example/" }, "not among federation.allowHosts"},
		"keys on a host not allowed": {func(t *Topology) { t.Imports["research"].JWKSURL = "https://evil.example/jwks" }, "jwksUrl: host evil.example"},
		"no allowlist":               {func(t *Topology) { t.Federation.AllowHosts = nil }, "allowHosts"},
		"a suffix is not a domain":   {func(t *Topology) { t.Imports["research"].URL = "https://eviltea-team-a.example/" }, "not among"},
		"no keys to require":         {func(t *Topology) { t.Imports["research"].JWKSURL = "" }, "needs the team's keys"},
		"an unknown signature mode":  {func(t *Topology) { t.Imports["research"].Signature = "maybe" }, "not require or warn"},
		"a key of both":              {func(t *Topology) { t.Agents["research"] = "http://127.0.0.1:2/" }, "also an agent's key"},
		"a bad timeout":              {func(t *Topology) { t.Imports["research"].Timeout = "soon" }, "timeout"},
		"a bad rate":                 {func(t *Topology) { t.Imports["research"].RateLimit = &RateLimit{} }, "perSecond must be positive"},
		"not http":                   {func(t *Topology) { t.Imports["research"].URL = "file:///etc/passwd" }, "not an http(s) URL"},
	} {
		top := base()
		tt.change(top)
		if err := top.Check(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tt.want)
		}
	}
	// The same from a file.
	top, err := ParseTopology([]byte(`
version: 1
imports:
  research: {url: 'https://agents.team-a.example/r/', jwksUrl: 'https://agents.team-a.example/jwks.json', timeout: 5s, rateLimit: {perSecond: 2}}
federation: {allowHosts: [agents.team-a.example]}
entry: {agent: research}
`))
	if err != nil || top.Imports["research"].RateLimit.PerSecond != 2 {
		t.Fatalf("ParseTopology: %+v, %v", top, err)
	}
}
