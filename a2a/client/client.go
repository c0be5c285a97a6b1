// Package client is the A2A client SDK: resolve an agent's card, then call
// every A2A operation over JSON-RPC, speaking A2A 1.0 or, to servers whose
// card offers only 0.3, A2A 0.3. Streams are iterators that resume a cut
// connection from the last event they delivered.
//
//	c, err := client.New(ctx, "http://127.0.0.1:9001")
//	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")})
//	for ev, err := range c.SendStreamingMessage(ctx, req) { ... }
package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// Client calls one agent. It is safe for concurrent use.
type Client struct {
	url     string
	version string
	tenant  string
	card    *a2a.AgentCard
	hc      *http.Client
	calls   []CallOption
	resumes int
	maxEv   int
	idle    time.Duration
	nextID  atomic.Uint64
	// headers are the headers of every request: unary [0], streaming [1].
	headers [2]http.Header
	// sseBuffers keeps the read buffers of finished event streams
	// (*bufio.Reader) for the next ones.
	sseBuffers sync.Pool
}

type config struct {
	hc       *http.Client
	ownHC    bool // hc was made here, so closing its connections is ours to do
	version  string
	calls    []CallOption
	resumes  int
	maxEvent int
	idle     time.Duration
}

// Option configures a Client.
type Option func(*config)

// WithHTTPClient sets the HTTP client; the default is a client of its own
// with http.DefaultTransport's settings.
func WithHTTPClient(hc *http.Client) Option { return func(c *config) { c.hc = hc } }

// WithProtocolVersion makes the client speak "1.0" or "0.3" instead of the
// newest version the card offers.
func WithProtocolVersion(v string) Option { return func(c *config) { c.version = v } }

// WithCallOptions applies call options to every call.
func WithCallOptions(opts ...CallOption) Option {
	return func(c *config) { c.calls = append(c.calls, opts...) }
}

// WithResumeAttempts sets how many times a cut stream is resumed (with
// SubscribeToTask after the last event received) before its error is
// returned; the default is 3, and 0 turns resumption off.
func WithResumeAttempts(n int) Option { return func(c *config) { c.resumes = n } }

// WithStreamIdleTimeout treats a stream that sends nothing (no event and no
// keep-alive) for d as cut; the default is 60 s, and a negative d disables
// it.
func WithStreamIdleTimeout(d time.Duration) Option { return func(c *config) { c.idle = d } }

// WithMaxEventBytes bounds the size of one streamed event; the default is
// 16 MiB.
func WithMaxEventBytes(n int) Option { return func(c *config) { c.maxEvent = n } }

func newConfig(opts []Option) *config {
	c := &config{resumes: 3, maxEvent: 16 << 20, idle: 60 * time.Second}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		c.ownHC = true
	}
	return c
}

// CallOption configures one call, or every call through WithCallOptions.
type CallOption func(*callConfig)

type callConfig struct {
	header  http.Header
	timeout time.Duration
}

// Header adds a request header.
func Header(key, value string) CallOption {
	return func(c *callConfig) { c.header.Add(key, value) }
}

// BearerToken authenticates with "Authorization: Bearer <token>".
func BearerToken(token string) CallOption {
	return func(c *callConfig) { c.header.Set("Authorization", "Bearer "+token) }
}

// APIKey sends an API key in the named header.
func APIKey(header, key string) CallOption {
	return func(c *callConfig) { c.header.Set(header, key) }
}

// Extensions asks the agent to use the extensions (A2A-Extensions).
func Extensions(uris ...string) CallOption {
	return func(c *callConfig) { c.header.Set("A2A-Extensions", strings.Join(uris, ",")) }
}

// Timeout bounds a unary call (not a stream). Without it, ctx alone
// bounds calls: note that a blocking SendMessage lasts as long as the task.
func Timeout(d time.Duration) CallOption { return func(c *callConfig) { c.timeout = d } }

// Resolve fetches and decodes an agent card. agentURL is the agent's base
// URL (the card is at /.well-known/agent-card.json under it) or the card's
// own URL. Cards in the 1.0 form, the 0.3 form, or both are read.
func Resolve(ctx context.Context, agentURL string, opts ...Option) (*a2a.AgentCard, error) {
	cfg := newConfig(opts)
	if cfg.ownHC {
		defer cfg.hc.CloseIdleConnections()
	}
	return resolve(ctx, agentURL, cfg)
}

func resolve(ctx context.Context, agentURL string, cfg *config) (*a2a.AgentCard, error) {
	cardURL, err := cardLocation(agentURL)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, fmt.Errorf("a2a client: resolve card: %w", err)
	}
	cc := applyCalls(cfg.calls, nil)
	for k, v := range cc.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	resp, err := cfg.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("a2a client: resolve card at %s: %w", cardURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("a2a client: resolve card at %s: %w", cardURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("a2a client: resolve card at %s: HTTP %s: %s", cardURL, resp.Status, snippet(body))
	}
	card, err := a2av03.ParseCard(body)
	if err != nil {
		return nil, fmt.Errorf("a2a client: card at %s: %w", cardURL, err)
	}
	return card, nil
}

func cardLocation(agentURL string) (string, error) {
	u, err := url.Parse(agentURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("a2a client: agent URL %q: want an http(s) URL", agentURL)
	}
	if strings.HasSuffix(u.Path, ".json") {
		return u.String(), nil
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/.well-known/agent-card.json"
	return u.String(), nil
}

// New resolves the agent's card and returns a client for it.
func New(ctx context.Context, agentURL string, opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	card, err := resolve(ctx, agentURL, cfg)
	if err != nil {
		if cfg.ownHC {
			cfg.hc.CloseIdleConnections()
		}
		return nil, err
	}
	// The client reuses the HTTP client (and connection) of the card fetch.
	return NewFromCard(card, append(opts, WithHTTPClient(cfg.hc))...)
}

// NewFromCard returns a client for the card's JSON-RPC interface: the first
// listed (cards list them preferred first) that speaks A2A 1.0, else the
// first that speaks 0.3, or the first of the version WithProtocolVersion
// asks for.
func NewFromCard(card *a2a.AgentCard, opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	var chosen *a2a.AgentInterface
	for i := range card.SupportedInterfaces {
		iface := &card.SupportedInterfaces[i]
		if iface.ProtocolBinding != a2a.BindingJSONRPC {
			continue
		}
		v := iface.ProtocolVersion
		switch {
		case cfg.version != "" && v != cfg.version:
		case v == a2a.Version && (chosen == nil || chosen.ProtocolVersion != a2a.Version):
			chosen = iface
		case v == a2a.Version03 && chosen == nil:
			chosen = iface
		}
	}
	if chosen == nil {
		var offered []string
		for _, iface := range card.SupportedInterfaces {
			offered = append(offered, iface.ProtocolBinding+" "+iface.ProtocolVersion+" at "+iface.URL)
		}
		want := "JSONRPC 1.0 or 0.3"
		if cfg.version != "" {
			want = "JSONRPC " + cfg.version
		}
		return nil, fmt.Errorf("a2a client: agent %q offers no %s interface (it offers: %s)", card.Name, want, strings.Join(offered, "; "))
	}
	c := NewFromURL(chosen.URL, chosen.ProtocolVersion, opts...)
	c.card, c.tenant = card, chosen.Tenant
	return c, nil
}

// NewFromURL returns a client for a JSON-RPC endpoint speaking the given
// protocol version, without fetching a card.
func NewFromURL(endpoint, version string, opts ...Option) *Client {
	cfg := newConfig(opts)
	if version == "" {
		version = a2a.Version
	}
	c := &Client{
		url: endpoint, version: version, hc: cfg.hc, calls: cfg.calls,
		resumes: cfg.resumes, maxEv: cfg.maxEvent, idle: cfg.idle,
	}
	for i, accept := range []string{"application/json", "text/event-stream"} {
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("A2A-Version", version)
		h.Set("Accept", accept)
		c.headers[i] = h
	}
	return c
}

// CloseIdleConnections closes the HTTP client's idle connections.
func (c *Client) CloseIdleConnections() { c.hc.CloseIdleConnections() }

// Card returns the agent's card (nil for NewFromURL clients).
func (c *Client) Card() *a2a.AgentCard { return c.card }

// ProtocolVersion returns the A2A version the client speaks.
func (c *Client) ProtocolVersion() string { return c.version }

// URL returns the JSON-RPC endpoint.
func (c *Client) URL() string { return c.url }

func (c *Client) v03() bool { return c.version == a2a.Version03 }

func applyCalls(base, extra []CallOption) *callConfig {
	cc := &callConfig{header: make(http.Header)}
	for _, o := range base {
		o(cc)
	}
	for _, o := range extra {
		o(cc)
	}
	return cc
}

// newRequest builds the HTTP request of a JSON-RPC call.
func (c *Client) newRequest(ctx context.Context, op jsonrpc.Op, params any, cc *callConfig, stream bool) (*http.Request, string, error) {
	id := strconv.FormatUint(c.nextID.Add(1), 10)
	body, err := jsonrpc.AppendRequest(make([]byte, 0, 1024), id, op.Method(c.version), params)
	if err != nil {
		return nil, "", fmt.Errorf("a2a client: %s: encode request: %w", op, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", fmt.Errorf("a2a client: %s: %w", op, err)
	}
	kind := 0
	if stream {
		kind = 1
	}
	req.Header = c.headers[kind].Clone()
	for k, v := range cc.header {
		if _, ours := req.Header[k]; !ours {
			req.Header[k] = v
		}
	}
	if exts := req.Header.Get("A2A-Extensions"); exts != "" && c.v03() {
		req.Header.Set("X-A2A-Extensions", exts) // the 0.3 name of the header
	}
	return req, id, nil
}

// call performs a unary JSON-RPC call and decodes its result into out
// (unless out is nil).
func (c *Client) call(ctx context.Context, op jsonrpc.Op, params any, out any, opts []CallOption) error {
	cc := applyCalls(c.calls, opts)
	if cc.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cc.timeout)
		defer cancel()
	}
	req, id, err := c.newRequest(ctx, op, params, cc, false)
	if err != nil {
		return err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: %w", op, c.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.maxEv)+1))
	if err != nil {
		return fmt.Errorf("a2a client: %s %s: read response: %w", op, c.url, err)
	}
	return c.decodeUnary(op, id, resp.StatusCode, resp.Status, body, out)
}

func (c *Client) decodeUnary(op jsonrpc.Op, id string, status int, statusText string, body []byte, out any) error {
	// A result is required, but a2a-go omits it where it means nothing
	// (deleting a push config); when the caller discards it, let it pass.
	r, err := jsonrpc.DecodeResponse(body)
	if err != nil || (r.Error == nil && r.Result == nil && out != nil) {
		return fmt.Errorf("a2a client: %s %s: HTTP %s: not a JSON-RPC response: %s", op, c.url, statusText, snippet(body))
	}
	if r.Error != nil {
		return fmt.Errorf("a2a client: %s: %w", op, r.Error.Err())
	}
	if status != http.StatusOK {
		return fmt.Errorf("a2a client: %s %s: HTTP %s", op, c.url, statusText)
	}
	if got := strings.Trim(string(r.ID), `"`); got != id {
		return fmt.Errorf("a2a client: %s: response id %s does not match request id %s", op, r.ID, id)
	}
	if out == nil {
		return nil
	}
	if err := a2a.Unmarshal(r.Result, out); err != nil {
		return fmt.Errorf("a2a client: %s: decode result: %w", op, err)
	}
	return nil
}

func snippet(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

var (
	// errStreamCut marks a stream that ended before its task settled.
	errStreamCut = errors.New("stream ended before the task reached a final or interrupted state")
	// errIdle marks a stream that went silent past the idle timeout.
	errIdle = errors.New("stream idle")
)
