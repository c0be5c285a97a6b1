// Package client is the A2A client SDK: resolve an agent's card, then call
// every A2A operation over the binding the card offers that the client
// prefers (JSON-RPC, HTTP+JSON, or gRPC with package grpcclient), speaking
// A2A 1.0 or, to servers whose card offers only 0.3, A2A 0.3 over JSON-RPC.
// Streams are iterators that resume a cut connection from the last event
// they delivered.
//
// A binding is a Transport behind one interface: this package holds the
// JSON-RPC wire (jsonrpc10.go, jsonrpc03.go, one file per protocol
// version) and the HTTP+JSON wire (rest.go); the Client adds what they
// share: the card, the tenant, timeouts and stream resumption. A call
// made in a context with an OpenTelemetry span carries the span's W3C
// trace context (traceparent; metadata on gRPC), so that the agent's spans
// join the caller's trace; the propagator is that of the
// telemetry.Telemetry the context carries, if any.
//
//	c, err := client.New(ctx, "http://127.0.0.1:9001", client.Config{})
//	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")})
//	for ev, err := range c.SendStreamingMessage(ctx, req) { ... }
package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/netguard"
)

// Client calls one agent. It is safe for concurrent use.
type Client struct {
	t           Transport
	url         string
	binding     string
	version     string
	tenant      string
	card        *a2a.AgentCard
	hc          *http.Client
	ownHC       bool
	calls       []CallOption
	creds       Credentials
	resumes     int
	idle        time.Duration
	respTimeout time.Duration
}

// Config configures a Client. The zero value of every field is its
// default, so Config{} makes a client that bounds its calls and streams and
// resumes cut streams; where a field says so, a negative value removes the
// bound. Variations for one call are CallOptions, passed to the call.
type Config struct {
	// HTTPClient sends the requests; nil means a client of its own with
	// http.DefaultTransport's settings (whose idle connections New closes
	// when it fails, and Resolve when it returns).
	HTTPClient *http.Client
	// ProtocolVersion is the A2A version the client speaks, "1.0" or
	// "0.3". Empty means the newest the card offers (New, NewFromCard),
	// or 1.0 for NewFromURL, which has no card.
	ProtocolVersion string
	// Bindings are the protocol bindings the client may use, the one it
	// prefers first: New and NewFromCard take the card's interfaces in
	// this order, the first binding the card offers (in the newest
	// version both speak) winning; NewFromURL uses the first. Empty means
	// JSONRPC, then HTTPJSON. Add gRPC with grpcclient.Binding.
	Bindings []Binding
	// CallOptions apply to every call, before the call's own.
	CallOptions []CallOption
	// Credentials, when set, authenticate every call the client makes to
	// the agent (not the card fetch, see Credentials): the client asks
	// them for their headers on every unary call and on every stream
	// and resumption of a stream, so that a token that expires or an
	// identity that differs per call is always current. On gRPC the
	// headers are sent as metadata.
	Credentials Credentials
	// ResumeAttempts is how many times in a row a cut stream is resumed
	// (with SubscribeToTask after the last event received) before its
	// error is returned; a resumption that delivers an event earns the
	// attempts back, and one the server refuses with retry guidance (a
	// replica shutting down) is tried again after the wait it asks for.
	// 0 means DefaultResumeAttempts (3); negative turns resumption off.
	ResumeAttempts int
	// StreamIdleTimeout treats a stream that receives nothing (no response
	// headers, no event, no keep-alive) for this long as cut, counting
	// from when its request is sent: a server that accepts the connection
	// and never answers is cut as surely as one that stops mid-stream. A
	// cut stream is resumed (ResumeAttempts), and its resumptions must
	// hear from the server within StreamIdleTimeout of the cut, so a
	// stream to a server that hangs fails within about twice
	// StreamIdleTimeout. The time the consumer spends on an event does
	// not count. 0 means DefaultStreamIdleTimeout (20 s); negative: no
	// bound. Against a server that sends no keep-alives and may be silent
	// longer (waiting on a slow model), raise it.
	StreamIdleTimeout time.Duration
	// ResponseTimeout bounds how long a unary call and the card fetch
	// wait for their whole response, from sending the request. 0 means
	// DefaultResponseTimeout (30 s); negative: no bound. A SendMessage
	// that waits for the task to settle (without
	// SendMessageConfiguration.ReturnImmediately) is exempt: it lasts as
	// long as the task, so bound it with Timeout or its context, or
	// stream the task instead, which StreamIdleTimeout bounds.
	ResponseTimeout time.Duration
	// MaxEventBytes bounds the size of one streamed event, and of one
	// unary response. 0 (or less) means DefaultMaxEventBytes (16 MiB).
	MaxEventBytes int
	// AllowedOrigins let New use an interface that the card names on one
	// of these origins ("https://agents.example.com",
	// "http://10.0.0.7:9101"), besides the origin the card was fetched
	// from. Entries are scheme://host[:port], without a path; New refuses
	// another form with an error matching ErrOriginRefused.
	AllowedOrigins []string
	// Guard, when set, makes every connection the client makes (the card
	// fetch included) dial through it, which refuses addresses in the
	// local network unless Guard.Allow admits them (see netguard.Guard);
	// such refusals match netguard.ErrRefused. The client's transport then
	// ignores proxy environment variables, since a proxy would be the
	// address the guard checks. With HTTPClient, that client's
	// *http.Transport (nil: the default one) is copied with the guard's
	// dialer; a client with another kind of Transport cannot be guarded,
	// and every call fails saying so.
	Guard *netguard.Guard
}

// The defaults of the zero Config. The timeouts make a peer that hangs (a
// stopped process whose kernel still accepts connections, a stuck proxy)
// an error within seconds rather than a wait as long as the caller's.
const (
	// DefaultStreamIdleTimeout is Config.StreamIdleTimeout's default:
	// longer than the 15 s between an a2amesh server's keep-alives.
	DefaultStreamIdleTimeout = 20 * time.Second
	// DefaultResponseTimeout is Config.ResponseTimeout's default. A
	// CancelTask may wait up to 10 s on an a2amesh server for the run to
	// stop.
	DefaultResponseTimeout = 30 * time.Second
	// DefaultResumeAttempts is Config.ResumeAttempts's default.
	DefaultResumeAttempts = 3
	// DefaultMaxEventBytes is Config.MaxEventBytes's default.
	DefaultMaxEventBytes = 16 << 20
)

// settings is a Config with its defaults applied.
type settings struct {
	hc          *http.Client
	ownHC       bool // hc was made here, so closing its connections is ours to do
	dial        func(ctx context.Context, network, addr string) (net.Conn, error)
	version     string
	bindings    []Binding
	calls       []CallOption
	creds       Credentials
	resumes     int // <= 0: no resumption
	maxEvent    int
	idle        time.Duration // <= 0: no bound
	respTimeout time.Duration // <= 0: no bound
	origins     []string
}

func (cfg Config) settings() *settings {
	s := &settings{
		hc: cfg.HTTPClient, version: cfg.ProtocolVersion, calls: slices.Clone(cfg.CallOptions), creds: cfg.Credentials,
		resumes: cfg.ResumeAttempts, maxEvent: cfg.MaxEventBytes, bindings: slices.Clone(cfg.Bindings),
		idle: cfg.StreamIdleTimeout, respTimeout: cfg.ResponseTimeout, origins: cfg.AllowedOrigins,
	}
	if len(s.bindings) == 0 {
		s.bindings = []Binding{JSONRPC, HTTPJSON}
	}
	if s.resumes == 0 {
		s.resumes = DefaultResumeAttempts
	}
	if s.maxEvent <= 0 {
		s.maxEvent = DefaultMaxEventBytes
	}
	if s.idle == 0 {
		s.idle = DefaultStreamIdleTimeout
	}
	if s.respTimeout == 0 {
		s.respTimeout = DefaultResponseTimeout
	}
	switch {
	case cfg.Guard != nil:
		s.hc, s.ownHC = guarded(s.hc, cfg.Guard), true
		s.dial = cfg.Guard.DialContext
	case s.hc == nil:
		s.hc = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		s.ownHC = true
	}
	return s
}

// guarded returns a copy of hc (nil: a default client) whose transport
// dials through g.
func guarded(hc *http.Client, g *netguard.Guard) *http.Client {
	out := &http.Client{}
	if hc != nil {
		*out = *hc
	}
	base, ok := out.Transport.(*http.Transport)
	switch {
	case out.Transport == nil:
		base = http.DefaultTransport.(*http.Transport)
	case !ok:
		out.Transport = failingTransport{fmt.Errorf("a2a client: Config.Guard needs Config.HTTPClient's Transport to be an *http.Transport (or nil), not %T: guard its dialer yourself, or drop Config.Guard", hc.Transport)}
		return out
	}
	t := base.Clone()
	t.Proxy = nil
	t.DialContext = g.DialContext
	t.DialTLSContext = nil // it would bypass DialContext
	out.Transport = t
	return out
}

// failingTransport fails every request with err.
type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// CallOption configures one call, or every call through Config.CallOptions.
type CallOption func(*callConfig)

type callConfig struct {
	header  http.Header
	timeout time.Duration
	// untilSettled marks a call that lasts as long as the task (a
	// blocking SendMessage), which the response timeout does not bound.
	untilSettled bool
	// longPoll marks a GetTask that waits for the task to pass a
	// generation, which the server may hold up to
	// a2a.GenerationWaitMax: the response timeout counts from then.
	longPoll bool
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

// Generations activates a2amesh's generation extension
// (a2a.GenerationExtension) for the call, adding it to the A2A-Extensions
// header: with an agent whose card declares it, the tasks and events the
// call returns carry their generation (a2a.Task.Generation, and the update
// events'), on every binding. A call whose request sets
// SendMessageConfiguration.IfGenerationMatch or
// GetTaskRequest.CurrentGeneration activates it by itself, since an agent
// ignores those fields otherwise. Extensions, which sets the whole header,
// must come before it.
func Generations() CallOption {
	return func(c *callConfig) {
		cur := c.header.Get("A2A-Extensions")
		for u := range strings.SplitSeq(cur, ",") {
			if strings.TrimSpace(u) == a2a.GenerationExtension {
				return
			}
		}
		if cur != "" {
			cur += ","
		}
		c.header.Set("A2A-Extensions", cur+a2a.GenerationExtension)
	}
}

// withGenerations returns opts with Generations last, without touching
// the caller's slice, when the request uses the extension's fields.
func withGenerations(opts []CallOption, uses bool) []CallOption {
	if !uses {
		return opts
	}
	return append(opts[:len(opts):len(opts)], Generations())
}

// Timeout bounds a unary call (not a stream), on top of Config.ResponseTimeout.
// Without it, a blocking SendMessage, which lasts as long as the task, is
// bounded by ctx alone.
func Timeout(d time.Duration) CallOption { return func(c *callConfig) { c.timeout = d } }

// Resolve fetches and decodes an agent card. agentURL is the agent's base
// URL (the card is at /.well-known/agent-card.json under it) or the card's
// own URL. Cards in the 1.0 form, the 0.3 form, or both are read. Of cfg,
// the fetch uses HTTPClient, Guard, CallOptions and ResponseTimeout.
func Resolve(ctx context.Context, agentURL string, cfg Config) (*a2a.AgentCard, error) {
	s := cfg.settings()
	if s.ownHC {
		defer s.hc.CloseIdleConnections()
	}
	cardURL, err := cardLocation(agentURL)
	if err != nil {
		return nil, err
	}
	return resolve(ctx, cardURL, s)
}

func resolve(ctx context.Context, cardURL *url.URL, cfg *settings) (*a2a.AgentCard, error) {
	if cfg.respTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.respTimeout, &timeoutError{msg: fmt.Sprintf("no response within %s", cfg.respTimeout)})
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("a2a client: resolve card: %w", err)
	}
	cc := applyCalls(cfg.calls, nil)
	for k, v := range cc.header {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/json")
	// A 1.0 client names its version on every request, the card fetch
	// included (specification 3.6.1); a server that serves 0.3 too may
	// then answer with the 1.0 card alone. A client held to 0.3 sends
	// nothing, as 0.3 clients do.
	if cfg.version != a2a.Version03 {
		req.Header.Set("A2A-Version", a2a.Version)
	}
	resp, err := cfg.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("a2a client: resolve card at %s: %w", cardURL, timeoutCause(ctx, err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, fmt.Errorf("a2a client: resolve card at %s: %w", cardURL, timeoutCause(ctx, err))
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

func cardLocation(agentURL string) (*url.URL, error) {
	u, err := url.Parse(agentURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("a2a client: agent URL %q: want an http(s) URL", agentURL)
	}
	if !strings.HasSuffix(u.Path, ".json") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/.well-known/agent-card.json"
		u.RawPath = ""
	}
	return u, nil
}

// New resolves the agent's card and returns a client for its interface
// (chosen as NewFromCard chooses). The URL the card was fetched from is
// what the caller trusts: an interface on another origin (scheme, host and
// port; the path may differ) is refused with an error matching
// ErrOriginRefused, unless cfg.AllowedOrigins admits it, since whoever
// serves the card could otherwise send the client's requests, and their
// credentials, anywhere. A relative interface URL is resolved against the
// card's URL. An interface whose URL is a bare host:port or
// grpc://host:port (gRPC's) is trusted on the card's host, whatever its
// port, since one server cannot serve gRPC and HTTP/1.1 on one port; elsewhere it needs AllowedOrigins
// to name it as http://host:port (or https://). To trust a card wholly,
// pass it to NewFromCard.
func New(ctx context.Context, agentURL string, cfg Config) (*Client, error) {
	s := cfg.settings()
	c, err := newFromAgentURL(ctx, agentURL, s)
	if err != nil && s.ownHC {
		s.hc.CloseIdleConnections()
	}
	return c, err
}

func newFromAgentURL(ctx context.Context, agentURL string, cfg *settings) (*Client, error) {
	allowed, err := parseOrigins(cfg.origins)
	if err != nil {
		return nil, err
	}
	cardURL, err := cardLocation(agentURL)
	if err != nil {
		return nil, err
	}
	card, err := resolve(ctx, cardURL, cfg)
	if err != nil {
		return nil, err
	}
	iface, b, err := chooseInterface(card, cfg.version, cfg.bindings)
	if err != nil {
		return nil, err
	}
	endpoint, err := interfaceURL(cardURL, iface, allowed)
	if err != nil {
		return nil, err
	}
	chosen := *iface
	chosen.URL = endpoint
	// The client reuses the HTTP client (and connection) of the card fetch.
	return newClient(card, &chosen, b, cfg)
}

// ErrOriginRefused matches, with errors.Is, New's error for a card whose
// interface is on an origin the client does not trust, and for a bad
// Config.AllowedOrigins entry: nothing a retry can fix.
var ErrOriginRefused = errors.New("a2a client: interface origin refused")

// originError is a refused origin or a bad allowed origin.
type originError struct{ msg string }

func (e *originError) Error() string        { return e.msg }
func (e *originError) Is(target error) bool { return target == ErrOriginRefused }

// origin returns u's origin in a comparable form: lower-case scheme and
// host, explicit port.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if strings.EqualFold(u.Scheme, "https") {
			port = "443"
		}
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

func parseOrigins(entries []string) (map[string]bool, error) {
	allowed := make(map[string]bool, len(entries))
	for _, e := range entries {
		u, err := url.Parse(strings.TrimSpace(e))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
			return nil, &originError{fmt.Sprintf("a2a client: allowed origin %q: want scheme://host[:port], such as https://agents.example.com", e)}
		}
		allowed[origin(u)] = true
	}
	return allowed, nil
}

// interfaceURL returns the endpoint of the card's chosen interface: its
// URL resolved against the card's, if its origin is the card's or
// allowed; a bare host:port or grpc://host:port (gRPC) as it is, if its
// host is the card's or its origin allowed.
func interfaceURL(cardURL *url.URL, iface *a2a.AgentInterface, allowed map[string]bool) (string, error) {
	if host, port, ok := grpcHostPort(iface.URL); ok {
		h := strings.TrimSuffix(strings.ToLower(host), ".")
		if h == strings.TrimSuffix(strings.ToLower(cardURL.Hostname()), ".") ||
			allowed["http://"+net.JoinHostPort(h, port)] || allowed["https://"+net.JoinHostPort(h, port)] {
			return iface.URL, nil
		}
		return "", &originError{fmt.Sprintf("a2a client: the card at %s names its %s %s interface at %s, on another host than the card's: "+
			"refused, since a card could otherwise send this client's requests anywhere; allow http://%s explicitly (Config.AllowedOrigins)",
			cardURL, iface.ProtocolBinding, iface.ProtocolVersion, iface.URL, net.JoinHostPort(h, port))}
	}
	u, err := cardURL.Parse(iface.URL)
	if err != nil || iface.URL == "" || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("a2a client: the card at %s names its %s %s interface at %q, which is not an http(s) URL", cardURL, iface.ProtocolBinding, iface.ProtocolVersion, iface.URL)
	}
	if o := origin(u); o != origin(cardURL) && !allowed[o] {
		return "", &originError{fmt.Sprintf("a2a client: the card at %s names its %s %s interface at %s, on another origin than the card's: "+
			"refused, since a card could otherwise send this client's requests anywhere; fetch the card from the interface's origin, "+
			"or allow %s explicitly (Config.AllowedOrigins)", cardURL, iface.ProtocolBinding, iface.ProtocolVersion, u.Redacted(), o)}
	}
	return u.String(), nil
}

// grpcHostPort splits an interface URL of the forms gRPC interfaces take:
// host:port, grpc://host:port.
func grpcHostPort(u string) (host, port string, ok bool) {
	hp := strings.TrimSuffix(strings.TrimPrefix(u, "grpc://"), "/")
	if strings.ContainsAny(hp, "/?#@") {
		return "", "", false
	}
	host, port, err := net.SplitHostPort(hp)
	return host, port, err == nil
}

// NewFromCard returns a client for one of the card's interfaces: of the
// bindings in cfg.Bindings, the first the card offers, in A2A 1.0 if the
// card offers the binding in 1.0, else in 0.3 (or in the version
// cfg.ProtocolVersion asks for); of several such interfaces, the first
// listed (cards list them preferred first). It trusts the card: the
// interface may be anywhere (New checks it against the card's origin), and
// cfg.AllowedOrigins does not apply.
func NewFromCard(card *a2a.AgentCard, cfg Config) (*Client, error) {
	s := cfg.settings()
	iface, b, err := chooseInterface(card, s.version, s.bindings)
	if err != nil {
		return nil, err
	}
	return newClient(card, iface, b, s)
}

func chooseInterface(card *a2a.AgentCard, version string, bindings []Binding) (*a2a.AgentInterface, Binding, error) {
	for _, b := range bindings {
		var chosen *a2a.AgentInterface
		for i := range card.SupportedInterfaces {
			iface := &card.SupportedInterfaces[i]
			v := iface.ProtocolVersion
			switch {
			case !strings.EqualFold(iface.ProtocolBinding, b.Name()) || !b.Speaks(v):
			case version != "" && v != version:
			case v == a2a.Version && (chosen == nil || chosen.ProtocolVersion != a2a.Version):
				chosen = iface
			case v == a2a.Version03 && chosen == nil:
				chosen = iface
			}
		}
		if chosen != nil {
			return chosen, b, nil
		}
	}
	var offered, wanted []string
	for _, iface := range card.SupportedInterfaces {
		offered = append(offered, iface.ProtocolBinding+" "+iface.ProtocolVersion+" at "+iface.URL)
	}
	for _, b := range bindings {
		var vs []string
		for _, v := range []string{a2a.Version, a2a.Version03} {
			if b.Speaks(v) && (version == "" || v == version) {
				vs = append(vs, v)
			}
		}
		if version != "" && len(vs) == 0 {
			vs = append(vs, version)
		}
		wanted = append(wanted, b.Name()+" "+strings.Join(vs, " or "))
	}
	want := strings.Join(wanted, ", ")
	return nil, nil, fmt.Errorf("a2a client: agent %q offers no %s interface (it offers: %s)", card.Name, want, strings.Join(offered, "; "))
}

// NewFromURL returns a client for an endpoint of the first of
// cfg.Bindings (JSON-RPC unless set), without fetching a card: it speaks
// cfg.ProtocolVersion (empty: 1.0), and cfg.AllowedOrigins does not apply.
func NewFromURL(endpoint string, cfg Config) (*Client, error) {
	s := cfg.settings()
	version := s.version
	if version == "" {
		version = a2a.Version
	}
	return newClient(nil, &a2a.AgentInterface{URL: endpoint, ProtocolBinding: s.bindings[0].Name(), ProtocolVersion: version}, s.bindings[0], s)
}

func newClient(card *a2a.AgentCard, iface *a2a.AgentInterface, b Binding, cfg *settings) (*Client, error) {
	t, err := b.Transport(iface, &TransportConfig{HTTPClient: cfg.hc, Dial: cfg.dial, MaxEventBytes: cfg.maxEvent, StreamIdleTimeout: cfg.idle})
	if err != nil {
		return nil, fmt.Errorf("a2a client: %s interface at %s: %w", b.Name(), iface.URL, err)
	}
	return &Client{
		t: t, url: iface.URL, binding: b.Name(), version: iface.ProtocolVersion, tenant: iface.Tenant, card: card,
		hc: cfg.hc, ownHC: cfg.ownHC, calls: cfg.calls, creds: cfg.creds, resumes: cfg.resumes, idle: cfg.idle, respTimeout: cfg.respTimeout,
	}, nil
}

// Close releases the client's idle connections (its transport's, and the
// HTTP client's when the client made it). Calls in progress go on.
func (c *Client) Close() error {
	err := c.t.Close()
	if c.ownHC {
		c.hc.CloseIdleConnections()
	}
	return err
}

// CloseIdleConnections closes the client's idle connections; it is Close.
func (c *Client) CloseIdleConnections() { _ = c.Close() }

// Card returns the agent's card (nil for NewFromURL clients).
func (c *Client) Card() *a2a.AgentCard { return c.card }

// ProtocolVersion returns the A2A version the client speaks.
func (c *Client) ProtocolVersion() string { return c.version }

// Binding returns the protocol binding the client speaks, as cards name
// it (a2a.BindingJSONRPC, ...).
func (c *Client) Binding() string { return c.binding }

// URL returns the endpoint of the interface the client calls.
func (c *Client) URL() string { return c.url }

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

// unary runs one unary call through the transport, bounded by the call's
// Timeout and, unless it lasts until the task settles, the response
// timeout.
func unary[T any](ctx context.Context, c *Client, op string, opts []CallOption, untilSettled bool, call func(context.Context, http.Header) (T, error)) (T, error) {
	cc := applyCalls(c.calls, opts)
	if cc.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cc.timeout)
		defer cancel()
	}
	if bound := c.respTimeout; bound > 0 && !untilSettled {
		if cc.longPoll {
			bound += a2a.GenerationWaitMax
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, bound, &timeoutError{msg: fmt.Sprintf("no response within %s", bound)})
		defer cancel()
	}
	h, err := c.authenticate(ctx, op, cc.header)
	if err != nil {
		var zero T
		return zero, err
	}
	out, err := call(ctx, h)
	if err != nil {
		var zero T
		var te *timeoutError
		if cause := context.Cause(ctx); ctx.Err() != nil && errors.As(cause, &te) {
			return zero, fmt.Errorf("a2a client: %s %s: %w", op, c.url, te)
		}
		return zero, err
	}
	return out, nil
}

func snippet(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(b))
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// ErrTimeout matches, with errors.Is, the errors of calls and streams that
// the client's own timeouts ended (Config.ResponseTimeout,
// Config.StreamIdleTimeout): the server did not answer in time, which a
// server that hangs never does.
var ErrTimeout = errors.New("a2a client: timed out")

// timeoutError says which of the client's timeouts ran out.
type timeoutError struct {
	msg  string
	idle bool // a stream's idle timeout, which cuts the stream (to be resumed)
}

func (e *timeoutError) Error() string        { return e.msg }
func (e *timeoutError) Is(target error) bool { return target == ErrTimeout }

// timeoutCause returns the client's timeout when it is what ended a
// request on ctx, else err.
func timeoutCause(ctx context.Context, err error) error {
	var te *timeoutError
	if cause := context.Cause(ctx); ctx.Err() != nil && errors.As(cause, &te) {
		return te
	}
	return err
}
