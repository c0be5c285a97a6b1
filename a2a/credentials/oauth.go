package credentials

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

// ClientCredentialsConfig configures ClientCredentials. TokenURL,
// ClientID and ClientSecret are required.
type ClientCredentialsConfig struct {
	// TokenURL is the authorization server's token endpoint.
	TokenURL string
	// ClientID and ClientSecret authenticate the agent at the token
	// endpoint (HTTP Basic, RFC 6749 section 2.3.1).
	ClientID     string
	ClientSecret Secret
	// Scopes are asked for (the scope parameter), none by default.
	Scopes []string
	// Audience names the agent called (the audience parameter many
	// servers take, RFC 8693's name for it), and Resource its URI (RFC
	// 8707): what the token's aud will say. Most servers need one.
	Audience string
	Resource string
	// HTTPClient sends the token requests; nil means a client with a 10 s
	// timeout. A request takes 10 s at most whatever its timeout.
	HTTPClient *http.Client
}

// ClientCredentials presents a token of the agent's own, which it gets
// from an OAuth 2.0 token endpoint with the client-credentials grant (RFC
// 6749 section 4.4): the agent called sees the calling agent (a service
// principal), not the end user. The token is kept and sent on every call
// until shortly before it expires (30 s, or half its lifetime if that is
// shorter; a grant without expires_in is kept a minute), then renewed by
// the first call that needs it while the others wait for that one
// request. It is safe for concurrent use.
type ClientCredentials struct {
	ep    *endpoint
	form  url.Values
	cache *cache
}

// NewClientCredentials returns the ClientCredentials of cfg, or an error
// naming the field that cannot be used. It asks for no token yet.
func NewClientCredentials(cfg ClientCredentialsConfig) (*ClientCredentials, error) {
	ep, err := newEndpoint(cfg.TokenURL, cfg.ClientID, cfg.ClientSecret, cfg.HTTPClient,
		func(f string) string { return "ClientCredentialsConfig." + f })
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	addTarget(form, cfg.Audience, cfg.Resource, cfg.Scopes)
	return &ClientCredentials{ep: ep, form: form, cache: newCache(1)}, nil
}

// addTarget adds the parameters naming what a token is for.
func addTarget(form url.Values, audience, resource string, scopes []string) {
	if audience != "" {
		form.Set("audience", audience)
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
}

// Header implements client.Credentials: "Authorization: Bearer" with the
// agent's token, fetched when none is kept. The error of a fetch names
// the token endpoint and what it answered.
func (c *ClientCredentials) Header(ctx context.Context) (http.Header, error) {
	token, err := c.cache.get(ctx, "", func(ctx context.Context) (string, time.Time, error) {
		asked := c.cache.now()
		g, err := c.ep.request(ctx, c.form)
		if err != nil {
			return "", time.Time{}, err
		}
		return g.token, renewAt(asked, g.lifetime), nil
	})
	if err != nil {
		return nil, fmt.Errorf("credentials: client credentials of %s: %w", c.ep.clientID, err)
	}
	return bearerHeader(token), nil
}

// ExchangeConfig configures Exchange. TokenURL, ClientID and ClientSecret
// are required, and so is Audience or Resource.
type ExchangeConfig struct {
	// TokenURL is the authorization server's token endpoint.
	TokenURL string
	// ClientID and ClientSecret authenticate the exchanging agent (the
	// actor) at the token endpoint.
	ClientID     string
	ClientSecret Secret
	// Audience (the logical name of the agent called) and Resource (its
	// URI, RFC 8707) say whom the new token is for.
	Audience string
	Resource string
	// Scopes are asked for, none by default (the server decides).
	Scopes []string
	// SubjectTokenType says what the caller's token is:
	// TokenTypeAccessToken (the default) or TokenTypeJWT.
	SubjectTokenType string
	// CacheSize bounds how many exchanged tokens are kept, one per
	// caller's token: 1024 by default; the least recently used go first.
	CacheSize int
	// HTTPClient sends the token requests; nil means a client with a 10 s
	// timeout. A request takes 10 s at most whatever its timeout.
	HTTPClient *http.Client
}

// Exchange presents a token that stands for the caller, which it gets by
// trading the caller's own bearer token at an OAuth 2.0 token endpoint
// (RFC 8693 token exchange): the agent called sees the end user as the
// subject of a token meant for it (its audience), which the authorization
// server issues to this agent as the actor. Exchanged tokens are kept per
// caller's token until shortly before they expire, and never past the
// caller's own token's expiry; concurrent calls for one caller share one
// exchange. A call made for no caller with a bearer token fails with an
// error wrapping ErrNoCallerToken. It is safe for concurrent use.
type Exchange struct {
	ep          *endpoint
	form        url.Values
	subjectType string
	cache       *cache
}

// NewExchange returns the Exchange of cfg, or an error naming the field
// that cannot be used.
func NewExchange(cfg ExchangeConfig) (*Exchange, error) {
	field := func(f string) string { return "ExchangeConfig." + f }
	ep, err := newEndpoint(cfg.TokenURL, cfg.ClientID, cfg.ClientSecret, cfg.HTTPClient, field)
	if err != nil {
		return nil, err
	}
	switch {
	case cfg.Audience == "" && cfg.Resource == "":
		return nil, fmt.Errorf("credentials: %s or %s is required: the token is for the agent called", field("Audience"), field("Resource"))
	case cfg.SubjectTokenType != "" && cfg.SubjectTokenType != TokenTypeAccessToken && cfg.SubjectTokenType != TokenTypeJWT:
		return nil, fmt.Errorf("credentials: %s %q: want %s or %s", field("SubjectTokenType"), cfg.SubjectTokenType, TokenTypeAccessToken, TokenTypeJWT)
	case cfg.CacheSize < 0:
		return nil, fmt.Errorf("credentials: %s must not be negative", field("CacheSize"))
	}
	form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"requested_token_type": {TokenTypeAccessToken}}
	addTarget(form, cfg.Audience, cfg.Resource, cfg.Scopes)
	x := &Exchange{ep: ep, form: form, subjectType: cfg.SubjectTokenType, cache: newCache(cfg.CacheSize)}
	if x.subjectType == "" {
		x.subjectType = TokenTypeAccessToken
	}
	if x.cache.max == 0 {
		x.cache.max = 1024
	}
	return x, nil
}

// Header implements client.Credentials: "Authorization: Bearer" with a
// token exchanged for the caller's.
func (x *Exchange) Header(ctx context.Context) (http.Header, error) {
	subject, err := callerToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("credentials: token exchange: %w", err)
	}
	// Keyed by a digest: the cache keeps no caller's token.
	key := sha256.Sum256([]byte(subject))
	token, err := x.cache.get(ctx, string(key[:]), func(ctx context.Context) (string, time.Time, error) {
		asked := x.cache.now()
		form := make(url.Values, len(x.form)+2)
		for k, v := range x.form {
			form[k] = v
		}
		form.Set("subject_token", subject)
		form.Set("subject_token_type", x.subjectType)
		g, err := x.ep.request(ctx, form)
		if err != nil {
			return "", time.Time{}, err
		}
		if g.issuedType != "" && g.issuedType != TokenTypeAccessToken && g.issuedType != TokenTypeJWT {
			return "", time.Time{}, fmt.Errorf("token endpoint %s: issued_token_type %q: want an access token or a JWT", x.ep.url, printable(g.issuedType, 80))
		}
		renew := renewAt(asked, g.lifetime)
		if exp, ok := expiry(auth.FromContext(ctx)); ok && exp.Before(renew) {
			renew = exp
		}
		return g.token, renew, nil
	})
	if err != nil {
		return nil, fmt.Errorf("credentials: token exchange for %s: %w", auth.FromContext(ctx), err)
	}
	return bearerHeader(token), nil
}

// expiry is when the caller's token expires, when its claims say.
func expiry(p *auth.Principal) (time.Time, bool) {
	if p == nil {
		return time.Time{}, false
	}
	switch exp := p.Claims["exp"].(type) {
	case float64:
		return time.Unix(int64(exp), 0), true
	case int64:
		return time.Unix(exp, 0), true
	}
	return time.Time{}, false
}
