// Package netguard keeps outbound connections whose destination someone
// else chose (a client's webhook URL, the interfaces an agent card lists)
// out of the server's own network: Guard refuses URLs and connections that
// point at loopback, private, link-local and similar addresses (server-side
// request forgery) unless an operator allowlists them.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"syscall"
)

// Guard refuses URLs that point into the server's own network:
// loopback, private (RFC 1918, fc00::/7), link-local (169.254/16 incl. cloud
// metadata, fe80::/10), unspecified (0.0.0.0/8, ::), multicast, CGNAT
// 100.64/10, and IPv4-mapped IPv6 forms of those — unless an allowlist entry
// admits them. A client chooses the URL and the server makes the request,
// so without the guard any client could make the server call its own
// admin endpoints or the cloud metadata service. The zero Guard refuses all
// of those.
//
// Allow is read once, on first use; changing it afterwards has no effect.
// A Guard must not be copied after first use.
type Guard struct {
	// Allow admits destinations otherwise refused: CIDR prefixes
	// ("127.0.0.0/8"), single IPs, or host names ("localhost",
	// "hooks.internal"); a host name entry also admits whatever that exact
	// name resolves to, since its owner trusts that name's DNS.
	Allow []string

	once  sync.Once
	allow allowlist
	err   error
}

type allowlist struct {
	prefixes []netip.Prefix
	hosts    map[string]bool // normalized by hostKey
}

// ErrRefused matches, with errors.Is, every error DialContext returns for a
// refused destination or a bad allowlist: nothing a retry can fix.
var ErrRefused = errors.New("netguard: destination refused")

// guardError is a refusal or a bad allowlist.
type guardError struct{ msg string }

func (e *guardError) Error() string        { return e.msg }
func (e *guardError) Is(target error) bool { return target == ErrRefused }

var (
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8") // RFC 1122 "this host on this network"
	metadata    = netip.MustParseAddr("169.254.169.254")
)

// refusedKind names why a is refused, or returns "" when it is not.
func refusedKind(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified() || thisNetwork.Contains(a):
		return "an unspecified address"
	case a.IsPrivate():
		return "a private address"
	case a == metadata:
		return "the cloud metadata address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case cgnat.Contains(a):
		return "a carrier-grade NAT address"
	}
	return ""
}

func (g *Guard) list() (*allowlist, error) {
	g.once.Do(func() { g.allow, g.err = parseAllow(g.Allow) })
	return &g.allow, g.err
}

func parseAllow(entries []string) (allowlist, error) {
	var al allowlist
	for _, e := range entries {
		s := strings.TrimSpace(e)
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return al, badEntry(e)
			}
			// An IPv4-mapped prefix means the IPv4 range: addresses are
			// unmapped before they are matched.
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			al.prefixes = append(al.prefixes, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			a = a.Unmap().WithZone("")
			al.prefixes = append(al.prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		h := hostKey(s)
		if !validHostName(h) {
			return al, badEntry(e)
		}
		if al.hosts == nil {
			al.hosts = make(map[string]bool)
		}
		al.hosts[h] = true
	}
	return al, nil
}

func badEntry(e string) error {
	return &guardError{fmt.Sprintf("netguard: invalid allowlist entry %q: want a CIDR prefix (10.0.0.0/8), an IP address (10.1.2.3) or an exact host name (hooks.internal)", e)}
}

// hostKey normalizes a host name for comparison: DNS names are case
// insensitive and "name." is the same name as "name".
func hostKey(h string) string { return strings.TrimSuffix(strings.ToLower(h), ".") }

// validHostName reports whether h (normalized) is a DNS host name.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 || numericHost(h) {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// numericHost reports whether h's last label is a number (decimal, or hex
// or octal as inet_aton reads them). No top-level domain is numeric, so
// such a host is an IPv4 address in a shorthand form ("127.1", "2130706433",
// "0x7f.0.0.1") that some resolvers accept and netip does not.
func numericHost(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		last = last[2:]
		return strings.Trim(last, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

func (al *allowlist) admitsAddr(a netip.Addr) bool {
	a = a.Unmap().WithZone("")
	for _, p := range al.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

func (al *allowlist) admitsHost(host string) bool { return al.hosts[hostKey(host)] }

// isLocalhost reports whether the host name always means this machine
// (RFC 6761: "localhost" and names under it).
func isLocalhost(h string) bool {
	h = hostKey(h)
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

var (
	loopback4 = netip.MustParseAddr("127.0.0.1")
	loopback6 = netip.IPv6Loopback()
)

// CheckURL validates a URL before it is accepted (a webhook when its config is registered): scheme http
// or https, a host, no userinfo; a literal IP host or "localhost" in a
// refused range fails unless allowed. It does not resolve host names: what
// a name resolves to can change before delivery, so DialContext checks the
// address actually connected to. Errors are plain, human-actionable
// sentences naming the URL and saying how to allow it (the server wraps
// them as invalid-params errors).
func (g *Guard) CheckURL(raw string) error {
	al, err := g.list()
	if err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("URL %q is not a valid URL: %v", raw, err)
	}
	if u.User != nil {
		// Do not echo the password back.
		return fmt.Errorf("URL %q must not contain a user name or password: pass credentials another way (a webhook config has an authentication field)", u.Redacted())
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("URL %q must be an absolute http:// or https:// URL", raw)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("URL %q has no host", raw)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if kind := refusedKind(a); kind != "" && !al.admitsAddr(a) {
			return fmt.Errorf("URL %q points to %s, %s, which this server does not call because it may reach the server's own network; use a public address, or have the server operator add %q to the allowlist", raw, host, kind, a.WithZone("").String())
		}
		return nil
	}
	if numericHost(hostKey(host)) {
		return fmt.Errorf("URL %q has host %q, which reads as an IPv4 address in shorthand form; write the address as four decimal numbers (a.b.c.d) or use a host name", raw, host)
	}
	if isLocalhost(host) && !al.admitsHost(host) && !al.admitsAddr(loopback4) && !al.admitsAddr(loopback6) {
		return fmt.Errorf("URL %q points to %s, a loopback address, which this server does not call because it is the server itself; have the server operator add %q to the allowlist if this is intended", raw, host, hostKey(host))
	}
	return nil
}

// DialContext dials like net.Dialer but checks the address actually
// connected to (after DNS resolution), so a host name that resolves into a
// refused range (DNS rebinding) is refused too, unless the host name itself
// is allowlisted. When a name resolves to several addresses, refused ones
// are skipped and the others tried, as a failed connection would be.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	al, err := g.list()
	if err != nil {
		return nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	if !al.admitsHost(host) {
		d.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			return al.checkDial(host, address)
		}
	}
	return d.DialContext(ctx, network, addr)
}

// checkDial is called with the resolved address just before connecting.
func (al *allowlist) checkDial(host, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &guardError{fmt.Sprintf("netguard: refusing to connect to %s: not an IP address and port", address)}
	}
	a := ap.Addr()
	kind := refusedKind(a)
	if kind == "" || al.admitsAddr(a) {
		return nil
	}
	ip := a.Unmap().WithZone("").String()
	if _, err := netip.ParseAddr(host); err == nil {
		return &guardError{fmt.Sprintf("netguard: refusing to connect to %s, %s, which may reach the server's own network; add %q to the allowlist if this is intended", address, kind, ip)}
	}
	return &guardError{fmt.Sprintf("netguard: refusing to connect to %s for host %q: it is %s, which may reach the server's own network; add %q or %q to the allowlist if this is intended", address, host, kind, hostKey(host), ip)}
}
