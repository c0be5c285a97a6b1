// Package serve runs an agent as a complete A2A server: the agent card at
// /.well-known/agent-card.json, JSON-RPC (A2A 1.0 and 0.3) and HTTP+JSON
// with SSE streaming on Hertz, gRPC on Kitex when Config.GRPCAddr asks for it
// (every binding the card lists, over one core: a task made over one is
// served over the others), push notifications behind an SSRF guard, tasks,
// events and checkpoints in memory or on NATS JetStream, the health
// endpoints /healthz and /readyz beside the A2A routes, and a drain when
// the context ends (not ready at once, new messages refused with a
// retryable error, running tasks given time to finish, open streams ended
// for their clients to resume at another replica).
//
// Any adk.Agent is served with New (or Agent, which also serves it); an
// A2A executor written against a2a/server directly is served with
// NewExecutor. Both take the same Config, whose zero value serves in
// memory on a free port of 127.0.0.1.
//
// The package changes no process-wide state: it neither sets GOGC nor
// Hertz's global logger, which a command may do (cmd/a2amesh does both).
package serve

import (
	"cmp"
	"context"
	"crypto"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"github.com/a2amesh/a2amesh/telemetry"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	hzserver "github.com/cloudwego/hertz/pkg/app/server"
	"github.com/cloudwego/hertz/pkg/route"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/a2a/grpcserver"
	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/a2a/push"
	"github.com/a2amesh/a2amesh/a2a/restserver"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/adk"
	"github.com/a2amesh/a2amesh/bridge"
	"github.com/a2amesh/a2amesh/natsstore"
)

// Server is one agent served over A2A. Make it with New or NewExecutor,
// then call Serve once; a Server that is never served must be closed.
type Server struct {
	url     string
	card    *a2a.AgentCard
	log     *slog.Logger
	ln      net.Listener
	st      *state
	handler *server.Handler
	gate    *auth.Gate                           // nil: an open server
	jwks    []byte                               // the published keys; nil without a signing key
	tls     *tls.Config                          // the HTTP bindings' TLS (gRPC's is its server's); nil: plain TCP
	routes  func(context.Context, route.IRoutes) // Config.Routes
	rpc     *jsonrpcserver.Server
	// rest serves HTTP+JSON, and JSON-RPC and the card beside it.
	rest *restserver.Server
	// grpcLn and grpc serve the gRPC binding; nil without it.
	grpcLn net.Listener
	tel    *telemetry.Telemetry
	grpc   *grpcserver.Server
	grace  time.Duration
	// drainDelay and drainTimeout are Config's, with defaults; draining
	// is set when Serve's context ends (see Serve).
	drainDelay, drainTimeout time.Duration
	draining                 atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// Agent serves agent as New configures it until ctx ends.
func Agent(ctx context.Context, agent adk.Agent, cfg Config) error {
	s, err := New(ctx, agent, cfg)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// New listens and opens the stores for serving agent: the card comes from
// the agent (its name, description and skills; see bridge.Card), its runs
// are checkpointed so that an interrupted task resumes, and a second task
// in the same context sees the earlier turns. ctx bounds opening the
// stores; Serve takes the context that ends serving.
func New(ctx context.Context, agent adk.Agent, cfg Config) (*Server, error) {
	if agent == nil {
		return nil, &ConfigError{Field: "agent", Needs: "an agent to serve"}
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return newServer(ctx, cfg, agent.Name(ctx), func(url string, st *state, log *slog.Logger) (*a2a.AgentCard, server.AgentExecutor, error) {
		exec, err := bridge.NewExecutor(ctx, bridge.ExecutorConfig{Agent: agent, CheckPointStore: st.checkpoints,
			Tasks: st.tasks, Conversations: &bridge.MemoryConversations{MaxAge: cfg.retention()}, Logger: log})
		if err != nil {
			return nil, nil, err
		}
		return bridge.Card(ctx, agent, url), exec, nil
	})
}

// NewExecutor is New for an A2A executor: card describes it, and its
// supported interfaces are set to the server's (see New).
func NewExecutor(ctx context.Context, exec server.AgentExecutor, card *a2a.AgentCard, cfg Config) (*Server, error) {
	if exec == nil || card == nil {
		return nil, &ConfigError{Field: "executor", Needs: "an executor and its card"}
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	return newServer(ctx, cfg, card.Name, func(string, *state, *slog.Logger) (*a2a.AgentCard, server.AgentExecutor, error) {
		c := *card
		return &c, exec, nil
	})
}

type makeFunc func(url string, st *state, log *slog.Logger) (*a2a.AgentCard, server.AgentExecutor, error)

func newServer(ctx context.Context, cfg Config, name string, make makeFunc) (_ *Server, err error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	// Records logged with a context name its trace and task.
	log = slog.New(telemetry.LogHandler(log.Handler()))
	sender, err := cfg.pushSender(log)
	if err != nil {
		return nil, err
	}
	ln := cfg.Listener
	if ln == nil {
		addr := cfg.Addr
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	s := &Server{ln: ln, log: log, grace: cfg.ShutdownGrace, grpcLn: cfg.GRPCListener,
		drainDelay: cfg.DrainDelay, drainTimeout: max(cmp.Or(cfg.DrainTimeout, DefaultDrainTimeout), 0)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if cfg.GRPCAddr != "" {
		if s.grpcLn, err = net.Listen("tcp", cfg.GRPCAddr); err != nil {
			return nil, fmt.Errorf("serve: gRPC: %w", err)
		}
	}
	if s.grace <= 0 {
		s.grace = 2 * time.Second
	}
	s.url = cfg.PublicURL
	if s.url == "" {
		scheme := "http://"
		if cfg.TLS != nil {
			scheme = "https://"
		}
		s.url = scheme + ln.Addr().String() + "/"
	}
	cardName := name
	if cfg.Name != "" {
		cardName = cfg.Name
	}
	service := cfg.Service
	if service == "" {
		service = name
	}
	if s.st, err = openState(ctx, &cfg, service, cardName, log); err != nil {
		return nil, err
	}
	card, exec, err := make(s.url, s.st, log)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	present(card, cfg.Name, cfg.Description)
	declareGenerations(card)
	card.SupportedInterfaces = s.interfaces(cfg.GRPCPublicAddr)
	s.tls = cfg.TLS
	s.routes = cfg.Routes
	if s.gate = cfg.Gate; s.gate != nil {
		s.gate.Describe(card)
	}
	if cfg.SigningKey != nil {
		if card, err = s.sign(card, cfg.SigningKey, cfg.SigningKeyID, sender); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	s.card = card
	if s.tel = cfg.Telemetry; s.tel == nil {
		if s.tel, err = telemetry.New(telemetry.Config{}); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	sender.Telemetry = s.tel
	hc := server.Config{Card: card, Executor: exec, Tasks: s.st.tasks, Events: s.st.events, PushConfigs: s.st.push,
		PushSender: sender, Retention: s.st.retention, CommitDelay: cfg.commitDelay(), Limits: cfg.Limits, Gate: cfg.Gate,
		Telemetry: s.tel, Logger: log}
	if s.st.maxTaskBytes > 0 {
		hc.Limits.MaxTaskBytes = s.st.maxTaskBytes
	}
	if s.st.replicas != nil {
		hc.Replicas = s.st.replicas
	}
	if s.handler, err = server.New(hc); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if s.rpc, err = jsonrpcserver.New(s.handler, jsonrpcserver.Config{AllowedHosts: cfg.AllowedHosts, Logger: log}); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if s.rest, err = restserver.New(s.handler, restserver.Config{AllowedHosts: cfg.AllowedHosts, JSONRPC: s.rpc, Logger: log}); err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if s.grpcLn != nil {
		if s.grpc, err = grpcserver.New(s.handler, grpcserver.Config{Grace: s.grace, TLS: cfg.TLS, Logger: log}); err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
	}
	return s, nil
}

// interfaces lists what the server serves, preferred first: JSON-RPC in
// A2A 1.0, HTTP+JSON (at the same URL: its routes are beside the JSON-RPC
// endpoint), gRPC (when served), and JSON-RPC in 0.3 for the clients of
// that version. gRPC's URL is a bare host:port, as gRPC targets are.
func (s *Server) interfaces(grpcPublic string) []a2a.AgentInterface {
	out := []a2a.AgentInterface{
		{URL: s.url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version},
		{URL: s.url, ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: a2a.Version},
	}
	if s.grpcLn != nil {
		addr := grpcPublic
		if addr == "" {
			addr = s.grpcLn.Addr().String()
		}
		out = append(out, a2a.AgentInterface{URL: addr, ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: a2a.Version})
	}
	return append(out, a2a.AgentInterface{URL: s.url, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: a2a.Version03})
}

// present renames a card's agent: a card of one skill named after the
// agent (bridge.Card's default) has that skill renamed too.
func present(card *a2a.AgentCard, name, desc string) {
	if name == "" && desc == "" {
		return
	}
	solo := len(card.Skills) == 1 && card.Skills[0].ID == card.Name
	if name != "" {
		if solo {
			card.Skills[0].ID, card.Skills[0].Name = name, name
		}
		card.Name = name
	}
	if desc != "" {
		if solo {
			card.Skills[0].Description = desc
		}
		card.Description = desc
	}
}

// declareGenerations lists on the card the generation extension
// (a2a.GenerationExtension), which the server's Handler serves on every
// binding to the calls that activate it; a card that lists it already is
// left alone.
func declareGenerations(card *a2a.AgentCard) {
	exts := card.Capabilities.Extensions
	if slices.ContainsFunc(exts, func(e a2a.AgentExtension) bool { return e.URI == a2a.GenerationExtension }) {
		return
	}
	// A copy: the card may share its slice with the caller's.
	card.Capabilities.Extensions = append(slices.Clip(exts), a2a.AgentExtension{URI: a2a.GenerationExtension,
		Description: "Task generations (the A2A 1.1 draft's generation, ifGenerationMatch and currentGeneration) for calls that activate it in A2A-Extensions"})
}

// URL is the agent's URL as its card names it.
func (s *Server) URL() string { return s.url }

// Card is the agent card the server serves. Callers must not modify it.
func (s *Server) Card() *a2a.AgentCard { return s.card }

// Handler is the protocol handler, for mounting the agent on a server of
// one's own.
func (s *Server) Handler() *server.Handler { return s.handler }

// Serve serves requests until ctx ends, then drains: /readyz answers 503
// at once; after Config.DrainDelay new messages are refused with a
// retryable error (another replica takes them) while the runs going on
// have up to Config.DrainTimeout to end (runs still going then are
// canceled); then open streams end, for their clients to resume at
// another replica, open requests get Config.ShutdownGrace to finish, and
// the stores and the listeners close. It returns nil after a shutdown ctx
// asked for; it returns an error wrapping natsstore.ErrClosed when serving
// stopped because the connection to NATS closed for good (every request
// needs it with the state on NATS, so a process should exit and be
// restarted; there is no drain then, since nothing can be stored).
func (s *Server) Serve(ctx context.Context) error {
	defer s.Close()
	// life is the server's: it outlasts ctx by the drain.
	life, endLife := context.WithCancel(context.WithoutCancel(ctx))
	defer endLife()
	if s.st.conn != nil {
		var stop context.CancelFunc
		life, stop = s.st.conn.Context(life)
		defer stop()
	}
	if s.st.replicas != nil {
		// The heartbeat goes on while draining, or the other replicas
		// would fail the runs this one is finishing.
		defer s.st.replicas.Start(life, s.handler)()
	}
	served := make(chan error, 1)
	go func() { served <- s.serve(life) }()
	var serveErr error
	select {
	case <-ctx.Done():
		s.drain(life)
	case <-life.Done():
	case serveErr = <-served:
		served = nil
	}
	s.draining.Store(true)
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	// Runs still going are canceled, and streams end (Close ends them).
	if err := s.handler.Close(closeCtx); err != nil {
		s.log.Warn("closing the agent", "err", err)
	}
	endLife()
	if served != nil {
		serveErr = <-served
	}
	if err := context.Cause(life); errors.Is(err, natsstore.ErrClosed) {
		s.log.Error("stopped serving: the connection to NATS closed for good and every request needs it; start the service again", "err", err)
		return fmt.Errorf("serve: %w", err)
	}
	return serveErr
}

// drain readies the server to stop (see Serve), until its runs have ended
// or the drain timeout, or life ends.
func (s *Server) drain(life context.Context) {
	start := time.Now()
	s.draining.Store(true)
	s.log.Info("draining: not ready; new messages are refused after the delay, running tasks may finish",
		"delay", s.drainDelay, "timeout", s.drainTimeout)
	if s.drainDelay > 0 {
		t := time.NewTimer(s.drainDelay)
		select {
		case <-t.C:
		case <-life.Done():
			t.Stop()
			return
		}
	}
	idle := s.handler.Drain()
	t := time.NewTimer(s.drainTimeout)
	defer t.Stop()
	select {
	case <-idle:
		s.log.Info("drained: no task is running", "took", time.Since(start).Round(time.Millisecond))
	case <-t.C:
		s.log.Warn("drain timeout: canceling the tasks still running", "took", time.Since(start).Round(time.Millisecond))
	case <-life.Done():
	}
}

// loopbackOnly reports whether every listener of s is on a loopback
// address, so that only this machine reaches it.
func (s *Server) loopbackOnly() bool {
	for _, ln := range []net.Listener{s.ln, s.grpcLn} {
		if ln == nil {
			continue
		}
		a, ok := ln.Addr().(*net.TCPAddr)
		if !ok || !a.IP.IsLoopback() {
			return false
		}
	}
	return true
}

// serve runs the bindings until ctx ends or one of them fails, which
// stops the others.
func (s *Server) serve(ctx context.Context) error {
	if s.gate == nil {
		// Open on loopback alone is the local mesh of make run, which
		// says so once (a2amesh up); reachable beyond, it is a warning.
		level := slog.LevelWarn
		if s.loopbackOnly() {
			level = slog.LevelInfo
		}
		s.log.Log(ctx, level, "serving without authentication: every caller is anonymous and shares the anonymous caller's tasks; give the server a gate (--auth-config) before it is reachable beyond this machine", "loopback", level == slog.LevelInfo)
	} else if s.gate.Open() {
		s.log.Warn("serving anonymous callers too (the gate allows anonymous): they share the anonymous caller's tasks")
	}
	if s.grpc == nil {
		s.log.Info("serving", "agent", s.card.Name, "url", s.url, "state", s.st.kind)
		return s.serveHTTP(ctx)
	}
	s.log.Info("serving", "agent", s.card.Name, "url", s.url, "grpc", s.grpcLn.Addr().String(), "state", s.st.kind)
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	grpcErr := make(chan error, 1)
	go func() {
		defer stop()
		grpcErr <- s.grpc.Serve(ctx, s.grpcLn)
	}()
	err := s.serveHTTP(ctx)
	stop()
	return errors.Join(err, <-grpcErr)
}

// serveHTTP serves the JSON bindings, the card and the health endpoints on
// Hertz until ctx ends, then shuts Hertz down within the grace.
func (s *Server) serveHTTP(ctx context.Context) error {
	s.rest.Listening(s.ln.Addr())
	opts := append(s.rest.HertzOptions(), hzserver.WithListener(s.ln), hzserver.WithExitWaitTime(s.grace))
	if s.tls != nil {
		opts = append(opts, hzserver.WithTLS(s.tls))
	}
	h := hzserver.New(opts...)
	h.Use(s.closeWhileDraining)
	s.registerHealth(h)
	if s.jwks != nil {
		jwks := func(_ context.Context, c *app.RequestContext) {
			c.Response.Header.Set("Cache-Control", "public, max-age=300")
			c.Data(200, "application/jwk-set+json", s.jwks)
		}
		h.GET(JWKSPath, jwks)
		h.HEAD(JWKSPath, jwks)
	}
	if s.routes != nil {
		s.routes(ctx, h)
	}
	s.rest.Register(h)
	ran := make(chan error, 1)
	go func() { ran <- h.Run() }()
	select {
	case err := <-ran:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.grace+time.Second)
	defer cancel()
	err := h.Shutdown(sctx)
	if rerr := <-ran; err == nil && rerr != nil && !errors.Is(rerr, net.ErrClosed) {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("serve: shutdown: %w", err)
	}
	return nil
}

// Close releases what New opened: the listeners and the stores. Serve
// calls it; call it only for a Server that is not served.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = err
		}
		if s.grpcLn != nil {
			if err := s.grpcLn.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				s.closeErr = errors.Join(s.closeErr, err)
			}
		}
		if s.st != nil {
			s.st.close()
		}
	})
	return s.closeErr
}

func (c *Config) retention() time.Duration {
	if c.Retention == 0 {
		return DefaultRetention
	}
	return c.Retention
}

func (c *Config) commitDelay() time.Duration {
	switch {
	case c.CommitDelay < 0:
		return 0
	case c.CommitDelay == 0 && c.state() == StateNATS:
		return natsstore.CommitDelay
	}
	return c.CommitDelay
}

// pushSender returns the push notification sender the config gives.
func (c *Config) pushSender(log *slog.Logger) (*push.Sender, error) {
	s := &push.Sender{Guard: netguard.Guard{Allow: c.PushAllow}, Logger: log}
	if err := s.Guard.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// JWKSPath is where a server with a signing key publishes its public key,
// as a JWK set: the jku of its card's signature and of its push
// notifications' signatures.
const JWKSPath = "/.well-known/jwks.json"

// sign signs card with key, publishes the key's public half, and has
// sender sign notifications with it.
func (s *Server) sign(card *a2a.AgentCard, key crypto.Signer, kid string, sender *push.Sender) (*a2a.AgentCard, error) {
	if kid == "" {
		tp, err := (&jose.JSONWebKey{Key: key.Public()}).Thumbprint(crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("signing key: %w", err)
		}
		kid = base64.RawURLEncoding.EncodeToString(tp)
	}
	jwksURL := strings.TrimSuffix(s.url, "/") + JWKSPath
	signed, err := cardsign.SignCard(card, key, kid, cardsign.SignOptions{JWKSURL: jwksURL})
	if err != nil {
		return nil, fmt.Errorf("sign the agent card: %w", err)
	}
	if s.jwks, err = cardsign.PublicJWKS(cardsign.PublicKey{ID: kid, Key: key.Public()}); err != nil {
		return nil, fmt.Errorf("publish the signing key: %w", err)
	}
	sender.Signing = &push.Signing{Key: key, KeyID: kid, Issuer: s.url, JWKSURL: jwksURL}
	return signed, nil
}
