package credentials

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Token types of RFC 8693 section 3, for ExchangeConfig.SubjectTokenType.
const (
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT         = "urn:ietf:params:oauth:token-type:jwt"
)

// Lifetimes of granted tokens.
const (
	// defaultLifetime is how long a token granted without expires_in is
	// used: the server did not say, and a short guess bounds how long a
	// token it revoked goes on being sent.
	defaultLifetime = time.Minute
	// maxLifetime caps a granted token's use, whatever its expires_in.
	maxLifetime = 24 * time.Hour
	// maxEarly is the most a token is renewed before it expires; shorter
	// lifetimes are renewed at half of it. Renewing early leaves the call
	// that sends it, and the clocks' skew, time before it expires.
	maxEarly = 30 * time.Second
)

// endpoint is an OAuth 2.0 token endpoint and the client that
// authenticates at it.
type endpoint struct {
	url      string
	clientID string
	secret   Secret
	hc       *http.Client
}

// newEndpoint checks the fields an endpoint is made of; field names the
// config's fields in errors.
func newEndpoint(tokenURL, clientID string, secret Secret, hc *http.Client, field func(string) string) (*endpoint, error) {
	u, err := url.Parse(tokenURL)
	switch {
	case tokenURL == "":
		return nil, fmt.Errorf("credentials: %s is required", field("TokenURL"))
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "":
		return nil, fmt.Errorf("credentials: %s %q: want an http(s) URL without user info", field("TokenURL"), tokenURL)
	case clientID == "":
		return nil, fmt.Errorf("credentials: %s is required", field("ClientID"))
	case secret == nil:
		return nil, fmt.Errorf("credentials: %s is required (FromFile or FromEnv)", field("ClientSecret"))
	}
	if hc == nil {
		hc = &http.Client{Timeout: tokenTimeout}
	}
	return &endpoint{url: tokenURL, clientID: clientID, secret: secret, hc: hc}, nil
}

// grant is a token endpoint's successful answer.
type grant struct {
	token      string
	lifetime   time.Duration // 0: use once
	issuedType string        // issued_token_type, "" without one
}

// request posts a token request and returns the grant. Its errors name
// the endpoint, never the client's secret or a token.
func (e *endpoint) request(ctx context.Context, form url.Values) (grant, error) {
	secret, err := e.secret.Value()
	if err != nil {
		return grant{}, fmt.Errorf("client secret: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, tokenTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(form.Encode()))
	if err != nil {
		return grant{}, fmt.Errorf("token endpoint %s: %w", e.url, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// client_secret_basic, which every server supports (RFC 6749 section
	// 2.3.1), with the id and secret form-encoded first as it says.
	req.SetBasicAuth(url.QueryEscape(e.clientID), url.QueryEscape(secret))
	resp, err := e.hc.Do(req)
	if err != nil {
		return grant{}, fmt.Errorf("token endpoint %s: %w", e.url, unwrapURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil {
		return grant{}, fmt.Errorf("token endpoint %s: read the response: %w", e.url, err)
	}
	if len(body) > maxTokenResponse {
		return grant{}, fmt.Errorf("token endpoint %s: the response is larger than %d bytes", e.url, maxTokenResponse)
	}
	g, err := parseTokenResponse(resp.StatusCode, body)
	if err != nil {
		// A server may echo what it was sent; the secret goes no further.
		msg := strings.ReplaceAll(err.Error(), secret, "[client secret]")
		if t := form.Get("subject_token"); t != "" {
			msg = strings.ReplaceAll(msg, t, "[subject token]")
		}
		return grant{}, fmt.Errorf("token endpoint %s: %s", e.url, msg)
	}
	return g, nil
}

// unwrapURLError drops the *url.Error around a transport's error, whose
// message would repeat the method and URL the caller names already.
func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// tokenResponse is a token endpoint's JSON answer (RFC 6749 sections 5.1
// and 5.2; RFC 8693 section 2.2).
type tokenResponse struct {
	AccessToken      string          `json:"access_token"`
	TokenType        string          `json:"token_type"`
	ExpiresIn        json.RawMessage `json:"expires_in"`
	IssuedTokenType  string          `json:"issued_token_type"`
	Error            string          `json:"error"`
	ErrorDescription string          `json:"error_description"`
}

// maxAccessToken bounds a granted token, which goes in a header of every
// call.
const maxAccessToken = 16 << 10

// parseTokenResponse reads a token endpoint's answer: a grant, or an error
// saying why there is none (the server's OAuth error code and
// description, or what is wrong with the answer). It never repeats the
// access token.
func parseTokenResponse(status int, body []byte) (grant, error) {
	var r tokenResponse
	decodeErr := json.Unmarshal(body, &r)
	if status != http.StatusOK {
		if decodeErr == nil && r.Error != "" {
			msg := fmt.Sprintf("HTTP %d: %s", status, printable(r.Error, 64))
			if r.ErrorDescription != "" {
				msg += ": " + printable(r.ErrorDescription, 200)
			}
			return grant{}, errors.New(msg)
		}
		return grant{}, fmt.Errorf("HTTP %d: %s", status, printable(string(body), 200))
	}
	if decodeErr != nil {
		return grant{}, errors.New("the response is not a JSON token response")
	}
	switch t := r.AccessToken; {
	case t == "":
		return grant{}, errors.New("the response has no access_token")
	case len(t) > maxAccessToken:
		return grant{}, fmt.Errorf("the access_token is longer than %d bytes", maxAccessToken)
	case strings.IndexFunc(t, func(c rune) bool { return c <= ' ' || c > '~' }) >= 0:
		return grant{}, errors.New("the access_token holds characters a bearer token may not (white space, control or non-ASCII)")
	}
	if !strings.EqualFold(r.TokenType, "Bearer") {
		return grant{}, fmt.Errorf("token_type %q: want Bearer", printable(r.TokenType, 32))
	}
	g := grant{token: r.AccessToken, lifetime: defaultLifetime, issuedType: r.IssuedTokenType}
	if len(r.ExpiresIn) > 0 && string(r.ExpiresIn) != "null" {
		// A number, as RFC 6749 says; some servers send it as a string.
		s := strings.Trim(string(r.ExpiresIn), `"`)
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return grant{}, fmt.Errorf("expires_in %s: want a number of seconds", printable(string(r.ExpiresIn), 32))
		}
		g.lifetime = time.Duration(min(n, int64(maxLifetime/time.Second))) * time.Second
	}
	return g, nil
}

// printable is s cut to n bytes with everything but printable ASCII
// replaced, for an error message.
func printable(s string, n int) string {
	cut := len(s) > n
	if cut {
		s = s[:n]
	}
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r > '~' {
			return '?'
		}
		return r
	}, s)
	if cut {
		s += "…"
	}
	return s
}

// renewAt is when a token granted at got for lifetime stops being used:
// shortly before it expires.
func renewAt(got time.Time, lifetime time.Duration) time.Time {
	return got.Add(lifetime - min(lifetime/2, maxEarly))
}

// cache keeps granted tokens by key until they are to be renewed, at most
// max of them (the least recently used go first), and fetches a token for
// a key once however many calls want it at the same time.
type cache struct {
	max int
	now func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element // of cached
	lru     list.List                // most recently used first
	flights map[string]*flight
}

type cached struct {
	key   string
	token string
	renew time.Time
}

// flight is one fetch of a token that several calls may wait for.
type flight struct {
	done  chan struct{}
	token string
	err   error
	// abandoned: the fetch ended because the call that made it went
	// away, not because of the endpoint; waiters fetch again.
	abandoned bool
}

func newCache(max int) *cache {
	return &cache{max: max, now: time.Now, entries: map[string]*list.Element{}, flights: map[string]*flight{}}
}

// get returns the token cached for key, or fetches one: fetch returns the
// token and when to renew it. Errors are not cached: the next call asks
// again.
func (c *cache) get(ctx context.Context, key string, fetch func(ctx context.Context) (string, time.Time, error)) (string, error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[key]; ok {
			e := el.Value.(*cached)
			if c.now().Before(e.renew) {
				c.lru.MoveToFront(el)
				c.mu.Unlock()
				return e.token, nil
			}
			c.lru.Remove(el)
			delete(c.entries, key)
		}
		if f, ok := c.flights[key]; ok {
			c.mu.Unlock()
			select {
			case <-f.done:
			case <-ctx.Done():
				return "", ctx.Err()
			}
			if f.abandoned {
				continue
			}
			return f.token, f.err
		}
		f := &flight{done: make(chan struct{})}
		c.flights[key] = f
		c.mu.Unlock()

		token, renew, err := fetch(ctx)
		f.token, f.err, f.abandoned = token, err, err != nil && ctx.Err() != nil
		c.mu.Lock()
		delete(c.flights, key)
		if err == nil && c.now().Before(renew) {
			c.put(key, token, renew)
		}
		c.mu.Unlock()
		close(f.done)
		return token, err
	}
}

// put caches a token; c.mu is held.
func (c *cache) put(key, token string, renew time.Time) {
	c.entries[key] = c.lru.PushFront(&cached{key: key, token: token, renew: renew})
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.entries, last.Value.(*cached).key)
	}
}
