package httpbind

import (
	"fmt"
	"mime"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/a2amesh/a2amesh/a2a"
)

// A browser lets any page send a "simple" cross-site POST (a form's
// content types, no custom headers) without asking the server first, and a
// page can make its own host name resolve to this server's address (DNS
// rebinding). An endpoint without authentication, such as a local mesh,
// would then take orders from any web page its user opens. Requiring a
// JSON body makes a browser ask first (a CORS preflight, which this server
// does not grant), and checking Host and Origin against the names the
// server is reached by refuses a rebound name.

// Hosts is the set of host names requests may name, normalized by hostKey.
// It is set up before serving and only read while serving.
type Hosts struct {
	any        bool
	configured bool // the operator listed the hosts
	hosts      map[string]bool
}

// NewHosts makes the set from the configured hosts, or from the card's
// interface URLs when none are configured.
func NewHosts(configured []string, card *a2a.AgentCard) (*Hosts, error) {
	hs := &Hosts{hosts: map[string]bool{}}
	for _, h := range configured {
		h = strings.TrimSpace(h)
		switch {
		case h == "*":
			hs.any = true
		case h == "" || strings.ContainsAny(h, "/ "):
			return nil, fmt.Errorf("allowed host %q: want a host name or address, with its port if it is not 80 or 443", h)
		default:
			hs.hosts[hostKey(h)] = true
		}
	}
	if len(configured) > 0 {
		hs.configured = true
		return hs, nil
	}
	for _, iface := range card.SupportedInterfaces {
		u, err := url.Parse(iface.URL)
		if err != nil || u.Host == "" {
			continue
		}
		host, port := u.Hostname(), u.Port()
		if a, err := netip.ParseAddr(host); err == nil && a.IsUnspecified() {
			// A card naming 0.0.0.0 says nothing of the names clients
			// use: the operator has not said, so every host is served.
			hs.any = true
			continue
		}
		names := []string{host}
		if isLoopback(host) {
			names = []string{"localhost", "127.0.0.1", "::1"}
		}
		for _, n := range names {
			hs.add(n, port, u.Scheme)
		}
	}
	return hs, nil
}

// AddListener allows the address a server listens on, unless the hosts
// were configured: its loopback names when it is a loopback address, any
// host when it is unspecified. Call it before serving.
func (hs *Hosts) AddListener(addr net.Addr) {
	if hs.configured {
		return
	}
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return
	}
	port := fmt.Sprint(tcp.Port)
	switch ip, _ := netip.AddrFromSlice(tcp.IP); {
	case ip.IsUnspecified():
		hs.any = true
	case ip.Unmap().IsLoopback():
		for _, n := range []string{"localhost", "127.0.0.1", "::1"} {
			hs.add(n, port, "http")
		}
	default:
		hs.add(ip.Unmap().String(), port, "http")
	}
}

// add allows host on port, and without a port when it is the scheme's
// default (browsers omit it).
func (hs *Hosts) add(host, port, scheme string) {
	def := map[string]string{"http": "80", "https": "443"}[scheme]
	if port == "" {
		port = def
	}
	hs.hosts[hostKey(net.JoinHostPort(host, port))] = true
	if port == def {
		hs.hosts[hostKey(host)] = true
	}
}

func isLoopback(host string) bool {
	if a, err := netip.ParseAddr(host); err == nil {
		return a.IsLoopback()
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// hostKey normalizes a Host value: case, a trailing dot on the name, and
// brackets on a bare IPv6 address.
func hostKey(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		return net.JoinHostPort(strings.TrimSuffix(host, "."), port)
	}
	h = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), ".")
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}

func (hs *Hosts) allows(host string) bool { return hs.any || hs.hosts[hostKey(host)] }

// IsJSON reports whether a Content-Type names JSON: application/json or
// another application/...+json type (application/a2a+json among them).
func IsJSON(contentType []byte) bool {
	mt, _, err := mime.ParseMediaType(string(contentType))
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// Check refuses, with an error for HTTP status 403, a request that names
// a host this server is not reached by, in Host or, when a browser sends
// one, in Origin.
func (hs *Hosts) Check(x Exchange) *a2a.Error {
	if host := x.Host(); !hs.allows(host) {
		return a2a.Errorf(a2a.CodeInvalidRequest, "Host %q is not a name this agent is served at; use the URL in its agent card (the operator can allow more names)", host)
	}
	origin := x.Header("Origin")
	if len(origin) == 0 {
		return nil
	}
	u, err := url.Parse(string(origin))
	if err != nil || u.Host == "" || !hs.allows(u.Host) {
		return a2a.Errorf(a2a.CodeInvalidRequest, "requests from web pages at %q are not served: that origin is not where this agent is served", origin)
	}
	return nil
}
