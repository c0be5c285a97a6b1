package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/internal/userfile"
)

// Import is another team's agent in the composition: used by its key like
// an agent of Topology.Agents, but reached only on a host the federation
// allows, its card checked against that team's signing keys, its calls
// bounded in time and rate.
type Import struct {
	// URL is the agent's base URL, where its card is served.
	URL string `json:"url"`
	// Signature is what a card whose signature does not verify (or that
	// has none) does: "require" (the default) refuses the agent, naming
	// it; "warn" logs the failure and uses the agent all the same.
	Signature string `json:"signature,omitempty"`
	// KeysFile (a JWKS file, pinned keys) and JWKSURL (the team's
	// published keys, fetched and refreshed) are the keys its card may be
	// signed with; at least one is required unless Signature is "warn".
	KeysFile string `json:"keysFile,omitempty"`
	JWKSURL  string `json:"jwksUrl,omitempty"`
	// Timeout bounds the card fetch and each unary call ("10s"); empty:
	// 10 s.
	Timeout string `json:"timeout,omitempty"`
	// RateLimit bounds the calls this gateway makes to the agent.
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
}

// RateLimit is a sustained number of calls per second with a burst.
type RateLimit struct {
	PerSecond float64 `json:"perSecond"`
	Burst     int     `json:"burst,omitempty"`
}

// Federation bounds what imports may reach.
type Federation struct {
	// AllowHosts are the hosts imports may name (the URL's and its
	// JWKSURL's): a name, or "*.example.com" for the names under it.
	// Required with imports: an import elsewhere is refused.
	AllowHosts []string `json:"allowHosts"`
}

// allows reports whether host is one the federation allows.
func (f *Federation) allows(host string) bool {
	host = strings.ToLower(host)
	for _, h := range f.AllowHosts {
		h = strings.ToLower(h)
		if h == host || strings.HasPrefix(h, "*.") && strings.HasSuffix(host, h[1:]) {
			return true
		}
	}
	return false
}

// checkImport checks import key of t.
func (t *Topology) checkImport(key string, imp *Import) error {
	where := "imports." + key
	if imp == nil {
		return fmt.Errorf("%s: empty", where)
	}
	if _, dup := t.Agents[key]; dup {
		return fmt.Errorf("%s: %q is also an agent's key", where, key)
	}
	for field, raw := range map[string]string{"url": imp.URL, "jwksUrl": imp.JWKSURL} {
		if raw == "" && field == "jwksUrl" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%s.%s: %q is not an http(s) URL", where, field, raw)
		}
		if !t.Federation.allows(u.Hostname()) {
			return fmt.Errorf("%s.%s: host %s is not among federation.allowHosts (%s)", where, field, u.Hostname(), strings.Join(t.Federation.AllowHosts, ", "))
		}
	}
	switch imp.Signature {
	case "", "require":
		if imp.KeysFile == "" && imp.JWKSURL == "" {
			return fmt.Errorf("%s: a required signature needs the team's keys: keysFile or jwksUrl", where)
		}
	case "warn":
	default:
		return fmt.Errorf("%s.signature: %q is not require or warn", where, imp.Signature)
	}
	if imp.Timeout != "" {
		if d, err := time.ParseDuration(imp.Timeout); err != nil || d <= 0 {
			return fmt.Errorf("%s.timeout: %q is not a positive duration", where, imp.Timeout)
		}
	}
	if r := imp.RateLimit; r != nil && (r.PerSecond <= 0 || r.Burst < 0) {
		return fmt.Errorf("%s.rateLimit: perSecond must be positive and burst not negative", where)
	}
	return nil
}

// configureImport sets rc up for import imp (key names it): its URL, the
// check of its card, its timeout and rate limit.
func configureImport(rc bridge.RemoteConfig, key string, imp *Import, log *slog.Logger) bridge.RemoteConfig {
	rc.URL = imp.URL
	rc.ResponseTimeout = 10 * time.Second
	if imp.Timeout != "" {
		rc.ResponseTimeout, _ = time.ParseDuration(imp.Timeout) // checked
	}
	if r := imp.RateLimit; r != nil {
		rc.Limit = &bridge.Rate{PerSecond: r.PerSecond, Burst: r.Burst}
	}
	var v *cardsign.Verifier
	verr := errors.New("no keys are configured to check its signature with")
	if imp.KeysFile != "" || imp.JWKSURL != "" {
		v, verr = importVerifier(imp, rc)
	}
	rc.VerifyCard = func(ctx context.Context, card *a2a.AgentCard) error {
		err := verr
		if v != nil {
			err = v.Verify(ctx, card)
		}
		if err != nil && imp.Signature == "warn" {
			log.Warn("using an imported agent whose card signature does not verify (signature: warn)", "import", key, "url", imp.URL, "err", err)
			return nil
		}
		return err
	}
	return rc
}

// importVerifier makes the verifier of imp's card signatures.
func importVerifier(imp *Import, rc bridge.RemoteConfig) (*cardsign.Verifier, error) {
	cfg := cardsign.VerifierConfig{JWKSURL: imp.JWKSURL, HTTPClient: rc.HTTPClient}
	if imp.KeysFile != "" {
		b, err := userfile.Read(imp.KeysFile)
		if err != nil {
			return nil, fmt.Errorf("keysFile: %w", err)
		}
		cfg.Keys = new(jose.JSONWebKeySet)
		if err := json.Unmarshal(b, cfg.Keys); err != nil {
			return nil, fmt.Errorf("keysFile %s is not a JWKS: %w", imp.KeysFile, err)
		}
	}
	return cardsign.NewVerifier(cfg)
}
