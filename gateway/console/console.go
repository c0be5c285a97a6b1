// Package console serves a gateway's web console: static pages embedded
// in the binary (no build step) under Path, and two JSON endpoints they
// read besides the gateway's own A2A JSON-RPC endpoint (where they ask,
// answer INPUT_REQUIRED, cancel and list tasks):
//
//   - Path+"api/topology": the mesh's agents, their URLs and whether each
//     answers its /readyz, with the topology's entry for the graph;
//   - Path+"api/events": the mesh's task events as they happen, from
//     every agent (the NATS events stream), as Server-Sent Events.
//
// Where the gateway has a gate, the JSON endpoints admit each request
// through it as the methods "ConsoleTopology" and "ConsoleEvents" (a
// policy rule may name them), and the events feed, which shows every
// caller's tasks, further refuses anonymous callers even when the gate
// admits them. The pages carry no data of their own and are served to
// anyone.
package console

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
	"github.com/cloudwego/hertz/pkg/route"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/natsstore"
)

// Path is where the console is served.
const Path = "/console/"

// probeTimeout bounds each agent's /readyz probe.
const probeTimeout = 2 * time.Second

// natsTimeout bounds how long the events feed tries to reach NATS before
// it answers 502.
const natsTimeout = 5 * time.Second

//go:embed static
var static embed.FS

// Config configures a Console. The zero value serves the pages, an empty
// topology and no events feed, to anyone.
type Config struct {
	// Name is the gateway's name, the graph's root.
	Name string
	// Agents are the mesh's agents by topology key: their A2A URLs, whose
	// /readyz is probed for their health.
	Agents map[string]string
	// Entry is the topology's entry (a gateway.Node as JSON), which the
	// graph draws; nil: none.
	Entry json.RawMessage
	// Gate, when set, admits the JSON endpoints' requests (see the
	// package doc): give it the gateway's.
	Gate *auth.Gate
	// Hosts are the host[:port] names requests to the JSON endpoints may
	// name in Host, and in Origin when a browser sends one; "*" for any;
	// empty: any. A web page elsewhere whose name an attacker makes
	// resolve to the gateway (DNS rebinding) is then refused the mesh's
	// tasks; give the names the gateway's A2A endpoint accepts (see
	// HostsOf).
	Hosts []string
	// NATS is the mesh's NATS server, whose events stream the feed
	// follows; empty: the feed answers 404.
	NATS string
	// NATSAuth is who the feed is to NATS, as the gateway is
	// (serve.NATS.Auth).
	NATSAuth natsstore.Auth
	// Logger receives the console's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Console serves the console's pages and endpoints.
type Console struct {
	cfg   Config
	hosts map[string]bool // nil: any
	pages fs.FS
	probe *http.Client
}

// New returns the console of cfg.
func New(cfg Config) *Console {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	pages, _ := fs.Sub(static, "static") // a directory embedded above
	var hosts map[string]bool
	if len(cfg.Hosts) > 0 && !slices.Contains(cfg.Hosts, "*") {
		hosts = map[string]bool{}
		for _, h := range cfg.Hosts {
			hosts[hostKey(h)] = true
		}
	}
	return &Console{cfg: cfg, hosts: hosts, pages: pages,
		// No idle connections: a probe every few seconds per open page,
		// and nothing left open once the gateway stops.
		probe: &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}}
}

// Register adds the console's routes to r (serve.Config.Routes); the
// events feeds end when ctx does.
func (c *Console) Register(ctx context.Context, r route.IRoutes) {
	redirect := func(_ context.Context, rc *app.RequestContext) { rc.Redirect(http.StatusFound, []byte(Path)) }
	r.GET(strings.TrimSuffix(Path, "/"), redirect)
	r.GET(Path+"api/topology", c.topology)
	r.GET(Path+"api/events", func(rctx context.Context, rc *app.RequestContext) { c.events(ctx, rctx, rc) })
	r.GET(Path+"*file", c.page)
	r.HEAD(Path+"*file", c.page)
}

// page serves an embedded file, index.html for the directory.
func (c *Console) page(_ context.Context, rc *app.RequestContext) {
	name := strings.TrimPrefix(rc.Param("file"), "/")
	if name == "" {
		name = "index.html"
	}
	b, err := fs.ReadFile(c.pages, path.Clean(name))
	if err != nil {
		rc.Data(http.StatusNotFound, "text/plain; charset=utf-8", []byte("not found\n"))
		return
	}
	h := &rc.Response.Header
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	// The pages run only their own scripts and talk only to the gateway.
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
	rc.Data(http.StatusOK, cmp.Or(mime.TypeByExtension(path.Ext(name)), "application/octet-stream"), b)
}

// admit passes a request for method through the gate; it answers the
// refusal and returns false when the gate refuses. named refuses an
// anonymous caller even where the gate admits them.
func (c *Console) admit(ctx context.Context, rc *app.RequestContext, method string, named bool) bool {
	if why := c.checkHost(rc); why != "" {
		writeJSON(rc, http.StatusForbidden, map[string]string{"error": why})
		return false
	}
	if c.cfg.Gate == nil {
		return true
	}
	creds := auth.Credentials{Header: func(name string) string { return string(rc.Request.Header.Peek(name)) }, Remote: rc.RemoteAddr()}
	if t, ok := rc.GetConn().(network.ConnTLSer); ok {
		if st := t.ConnectionState(); len(st.VerifiedChains) > 0 {
			creds.PeerCertificates = st.PeerCertificates
		}
	}
	actx, err := c.cfg.Gate.Admit(ctx, method, creds)
	if err == nil && named && auth.FromContext(actx) == nil {
		err = a2a.Errorf(a2a.CodeUnauthenticated, "%s: the events of every task need a caller who names themselves", method)
	}
	if err == nil {
		return true
	}
	status := http.StatusForbidden
	var e *a2a.Error
	if errors.As(err, &e) {
		switch e.Code {
		case a2a.CodeUnauthenticated:
			status = http.StatusUnauthorized
			if e.Challenge != "" {
				rc.Response.Header.Set("WWW-Authenticate", e.Challenge)
			}
		case a2a.CodePermissionDenied:
		default:
			status = http.StatusServiceUnavailable
		}
	}
	writeJSON(rc, status, map[string]string{"error": err.Error()})
	return false
}

// checkHost says why the request's Host or Origin is not one of
// Config.Hosts, "" when it is.
func (c *Console) checkHost(rc *app.RequestContext) string {
	if c.hosts == nil {
		return ""
	}
	if host := string(rc.Request.Host()); !c.hosts[hostKey(host)] {
		return fmt.Sprintf("Host %q is not a name the gateway is served at", host)
	}
	origin := rc.Request.Header.Peek("Origin")
	if len(origin) == 0 {
		return ""
	}
	if u, err := url.Parse(string(origin)); err != nil || !c.hosts[hostKey(u.Host)] {
		return fmt.Sprintf("requests from web pages at %q are not served", origin)
	}
	return ""
}

// HostsOf returns the names a server at addr, presented at publicURL
// (empty: none), is reached by: publicURL's host, and addr's loopback
// names on its port for a loopback address, addr itself for another;
// "*" for an unspecified address (0.0.0.0), whose names no one has said.
func HostsOf(publicURL string, addr net.Addr) []string {
	var out []string
	if u, err := url.Parse(publicURL); err == nil && u.Host != "" {
		out = append(out, u.Host)
		if def := map[string]string{"http": "80", "https": "443"}[u.Scheme]; u.Port() == "" && def != "" {
			out = append(out, net.JoinHostPort(u.Hostname(), def)) // browsers may name the default port
		}
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return out
	}
	port := strconv.Itoa(tcp.Port)
	switch ip, _ := netip.AddrFromSlice(tcp.IP); {
	case ip.Unmap().IsUnspecified():
		return []string{"*"}
	case ip.Unmap().IsLoopback():
		for _, n := range []string{"localhost", "127.0.0.1", "::1"} {
			out = append(out, net.JoinHostPort(n, port))
		}
	default:
		out = append(out, net.JoinHostPort(ip.Unmap().String(), port))
	}
	return out
}

// hostKey normalizes a host[:port]: case, a trailing dot on the name,
// brackets on a bare IPv6 address.
func hostKey(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		return net.JoinHostPort(strings.TrimSuffix(host, "."), port)
	}
	return strings.TrimSuffix(h, ".")
}

func writeJSON(rc *app.RequestContext, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		rc.Data(http.StatusInternalServerError, "text/plain; charset=utf-8", []byte(err.Error()))
		return
	}
	rc.Response.Header.Set("Cache-Control", "no-store")
	rc.Data(status, "application/json", b)
}

// Agent is one agent of the topology, as the console shows it.
type Agent struct {
	Key   string `json:"key"`
	URL   string `json:"url"`
	Ready bool   `json:"ready"`
	// Status is /readyz's answer, or why it could not be read.
	Status string `json:"status"`
}

// Topology is what the topology endpoint answers.
type Topology struct {
	Name   string          `json:"name"`
	Agents []Agent         `json:"agents"`
	Entry  json.RawMessage `json:"entry,omitempty"`
	// Events says whether the events feed is served.
	Events bool `json:"events"`
}

func (c *Console) topology(ctx context.Context, rc *app.RequestContext) {
	if !c.admit(ctx, rc, "ConsoleTopology", false) {
		return
	}
	writeJSON(rc, http.StatusOK, c.Topology(ctx))
}

// Topology returns the mesh's agents with their health, probed at once.
func (c *Console) Topology(ctx context.Context) Topology {
	keys := slices.Sorted(maps.Keys(c.cfg.Agents))
	agents := make([]Agent, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		agents[i] = Agent{Key: k, URL: c.cfg.Agents[k]}
		wg.Go(func() { agents[i].Ready, agents[i].Status = c.ready(ctx, agents[i].URL) })
	}
	wg.Wait()
	return Topology{Name: c.cfg.Name, Agents: agents, Entry: c.cfg.Entry, Events: c.cfg.NATS != ""}
}

// ready probes an agent's /readyz.
func (c *Console) ready(ctx context.Context, agentURL string) (bool, string) {
	u := strings.TrimSuffix(agentURL, "/") + "/readyz"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err.Error()
	}
	res, err := c.probe.Do(req)
	if err != nil {
		return false, "unreachable: " + err.Error()
	}
	defer res.Body.Close()
	var buf [256]byte
	n, _ := res.Body.Read(buf[:])
	return res.StatusCode == http.StatusOK, strings.TrimSpace(string(buf[:n]))
}

// Event is one event of the feed: what natsstore.WatchedEvent holds, its
// event as A2A 1.0 writes a stream's (a StreamResponse).
type Event struct {
	Agent     string             `json:"agent"`
	TaskID    string             `json:"taskId"`
	ContextID string             `json:"contextId"`
	Seq       uint64             `json:"seq"`
	Stored    time.Time          `json:"stored"`
	Event     a2a.StreamResponse `json:"event"`
}

// events streams the mesh's events as they are published (with
// ?since=<duration>, those of that long ago first; with ?task=<id>, only
// that task's) until the client goes, life ends or the connection to NATS
// does.
func (c *Console) events(life, ctx context.Context, rc *app.RequestContext) {
	if c.cfg.NATS == "" {
		writeJSON(rc, http.StatusNotFound, map[string]string{"error": "the gateway has no NATS server: no events feed"})
		return
	}
	if !c.admit(ctx, rc, "ConsoleEvents", true) {
		return
	}
	var from time.Time
	if s := string(rc.Query("since")); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			writeJSON(rc, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("since=%q: want a duration such as 5m", s)})
			return
		}
		from = time.Now().Add(-d)
	}
	task := string(rc.Query("task"))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer context.AfterFunc(life, stop)()
	cctx, cancel := context.WithTimeout(ctx, natsTimeout)
	nc, js, err := natsstore.Connect(cctx, c.cfg.NATS, natsstore.ConnConfig{Name: "a2amesh console", Auth: c.cfg.NATSAuth, Logger: c.cfg.Logger})
	cancel()
	if err != nil {
		writeJSON(rc, http.StatusBadGateway, map[string]string{"error": err.Error()})
		return
	}
	defer nc.Close()
	ctx, stopNATS := nc.Context(ctx)
	defer stopNATS()

	h := &rc.Response.Header
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.SetContentType("text/event-stream; charset=utf-8")
	w := resp.NewChunkedBodyWriter(&rc.Response, rc.GetWriter())
	rc.Response.HijackWriter(w)
	// A comment first, so that the client sees the stream open at once.
	if _, err := w.Write([]byte(": watching\n\n")); err != nil || w.Flush() != nil {
		return
	}
	// A keep-alive now and then ends a stream whose client is gone even
	// when no event comes.
	alive := time.NewTicker(15 * time.Second)
	defer alive.Stop()
	watched := make(chan []byte)
	done := make(chan struct{})
	defer func() { stop(); <-done }()
	go func() {
		defer close(done)
		for we, err := range natsstore.Watch(ctx, js, from) {
			if err != nil {
				c.cfg.Logger.Warn("console: events feed", "err", err)
				continue
			}
			if task != "" && we.TaskID != task {
				continue
			}
			b, err := json.Marshal(Event{Agent: we.Agent, TaskID: we.TaskID, ContextID: we.ContextID, Seq: we.Seq, Stored: we.Stored, Event: a2a.Wrap(we.Event)})
			if err != nil {
				c.cfg.Logger.Warn("console: events feed", "err", err)
				continue
			}
			select {
			case watched <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		var out []byte
		select {
		case <-ctx.Done():
			return
		case <-alive.C:
			out = []byte(": alive\n\n")
		case b := <-watched:
			out = append(append([]byte("data: "), b...), "\n\n"...)
		}
		if _, err := w.Write(out); err != nil {
			return
		}
		if err := w.Flush(); err != nil {
			return
		}
	}
}
