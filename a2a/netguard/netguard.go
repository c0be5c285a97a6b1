// Package netguard keeps outbound connections whose destination someone
// else chose (a client's webhook URL, the interfaces an agent card lists)
// out of the server's own network: Guard refuses URLs and connections that
// point at addresses that are not globally reachable — loopback, private,
// link-local, cloud metadata and IANA's other special-purpose ranges —
// (server-side request forgery) unless an operator allowlists them.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Guard refuses URLs and connections whose address is not globally
// reachable: the non-global ranges of IANA's IPv4 and IPv6 special-purpose
// address registries (loopback, private, link-local including the cloud
// metadata addresses, unspecified, CGNAT, benchmarking, documentation,
// IETF protocol assignments, discard-only, reserved 240/4 and the broadcast
// address), site-local and multicast — unless an allowlist entry admits
// them. Addresses that carry an IPv4 address are judged by it: IPv4-mapped
// (::ffff:0:0/96) addresses are unmapped first, and NAT64 (64:ff9b::/96)
// and 6to4 (2002::/16) addresses are refused when the IPv4 address they
// embed is, since a translator or relay would connect to it. The local-use
// NAT64 prefix (64:ff9b:1::/48) and the deprecated IPv4-compatible ::/96
// are refused whole. A client chooses the URL and the server makes the
// request, so without the guard any client could make the server call its
// own admin endpoints or the cloud metadata service. The zero Guard refuses
// all of those.
//
// Allow is read once, on first use; changing it afterwards has no effect.
// Call Validate at start to learn of a bad entry then rather than at the
// first request. A Guard must not be copied after first use.
type Guard struct {
	// Allow admits destinations otherwise refused: CIDR prefixes
	// ("127.0.0.0/8"), single IPs ("10.1.2.3", "fd00::1"), or host names
	// ("localhost", "hooks.internal"); a host name entry also admits
	// whatever that exact name resolves to, since its owner trusts that
	// name's DNS. An IP or host name may name a port ("10.1.2.3:8443",
	// "[fd00::1]:8443", "hooks.internal:8443"): such an entry admits that
	// port only, an entry without one every port. An entry admits a NAT64
	// or 6to4 address whose embedded IPv4 address it admits.
	Allow []string

	once  sync.Once
	allow allowlist
	err   error
}

// allowlist is a parsed Guard.Allow. A port of 0 admits every port.
type allowlist struct {
	prefixes []allowedPrefix
	hosts    map[string][]uint16 // keys normalized by hostKey
}

type allowedPrefix struct {
	prefix netip.Prefix
	port   uint16
}

// ErrRefused matches, with errors.Is, every error DialContext returns for a
// refused destination or a bad allowlist: nothing a retry can fix.
var ErrRefused = errors.New("netguard: destination refused")

// guardError is a refusal or a bad allowlist.
type guardError struct{ msg string }

func (e *guardError) Error() string        { return e.msg }
func (e *guardError) Is(target error) bool { return target == ErrRefused }

// specialRange is a refused range and what its addresses are, for errors.
type specialRange struct {
	prefix netip.Prefix
	kind   string
}

// special lists the refused ranges, the most specific first.
var special = func() []specialRange {
	var out []specialRange
	add := func(kind string, prefixes ...string) {
		for _, p := range prefixes {
			out = append(out, specialRange{netip.MustParsePrefix(p), kind})
		}
	}
	// IPv4 (RFC 6890 and its updates).
	add("the cloud metadata address", "169.254.169.254/32")
	add("an unspecified address", "0.0.0.0/8") // "this network"
	add("a private address", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
	add("a carrier-grade NAT address", "100.64.0.0/10")
	add("a loopback address", "127.0.0.0/8")
	add("a link-local address", "169.254.0.0/16")
	add("an IETF protocol assignment address", "192.0.0.0/24")
	add("a documentation address", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
	add("a 6to4 relay anycast address", "192.88.99.0/24")
	add("a benchmarking address", "198.18.0.0/15")
	add("a multicast address", "224.0.0.0/4")
	add("the broadcast address", "255.255.255.255/32")
	add("a reserved address", "240.0.0.0/4")
	// IPv6 (RFC 6890 and its updates). NAT64 and 6to4 addresses are
	// judged by the IPv4 address they embed before this table is read.
	add("an unspecified address", "::/128")
	add("a loopback address", "::1/128")
	add("an IPv4-compatible address (deprecated)", "::/96")
	add("a local-use NAT64 address", "64:ff9b:1::/48")
	add("a discard-only address", "100::/64")
	add("a dummy address", "100:0:0:1::/64")
	add("an IETF protocol assignment address", "2001::/23")
	add("a documentation address", "2001:db8::/32", "3fff::/20")
	add("an SRv6 segment identifier", "5f00::/16")
	add("the cloud metadata address", "fd00:ec2::254/128")
	add("a private address", "fc00::/7")
	add("a link-local address", "fe80::/10")
	add("a site-local address (deprecated)", "fec0::/10")
	add("a multicast address", "ff00::/8")
	return out
}()

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embedded returns the IPv4 address a NAT64 or 6to4 address carries, and
// what kind of address a is.
func embedded(a netip.Addr) (v4 netip.Addr, how string, ok bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), "a NAT64 address", true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), "a 6to4 address", true
	}
	return netip.Addr{}, "", false
}

// canon strips what does not change where an address leads: IPv4 mapping
// and an IPv6 zone.
func canon(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

// refusedKind names why a is refused, or returns "" when it is not.
func refusedKind(a netip.Addr) string {
	a = canon(a)
	if v4, how, ok := embedded(a); ok {
		if kind := refusedKind(v4); kind != "" {
			return fmt.Sprintf("%s for %s, %s", how, v4, kind)
		}
		return ""
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.kind
		}
	}
	return ""
}

// Validate reports a bad Allow entry, naming it; the error matches
// ErrRefused. A Guard with a bad entry refuses everything, so a server
// calls Validate before serving and stops on an error.
func (g *Guard) Validate() error {
	_, err := g.list()
	return err
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
			al.prefixes = append(al.prefixes, allowedPrefix{prefix: p.Masked()})
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil {
			a = canon(a)
			al.prefixes = append(al.prefixes, allowedPrefix{prefix: netip.PrefixFrom(a, a.BitLen())})
			continue
		}
		if ap, err := netip.ParseAddrPort(s); err == nil {
			if ap.Port() == 0 {
				return al, badEntry(e)
			}
			a := canon(ap.Addr())
			al.prefixes = append(al.prefixes, allowedPrefix{prefix: netip.PrefixFrom(a, a.BitLen()), port: ap.Port()})
			continue
		}
		host, port := s, uint16(0)
		if h, p, err := net.SplitHostPort(s); err == nil {
			n, err := strconv.ParseUint(p, 10, 16)
			if err != nil || n == 0 {
				return al, badEntry(e)
			}
			host, port = h, uint16(n)
		}
		h := hostKey(host)
		if !validHostName(h) {
			return al, badEntry(e)
		}
		if al.hosts == nil {
			al.hosts = make(map[string][]uint16)
		}
		al.hosts[h] = append(al.hosts[h], port)
	}
	return al, nil
}

func badEntry(e string) error {
	return &guardError{fmt.Sprintf("netguard: invalid allowlist entry %q: want a CIDR prefix (10.0.0.0/8), an IP address (10.1.2.3), an exact host name (hooks.internal), or an IP address or host name with a port (10.1.2.3:8443, [fd00::1]:8443, hooks.internal:8443)", e)}
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

func portAdmits(entry, port uint16) bool { return entry == 0 || entry == port }

// admitsAddr reports whether an entry admits a on port, or admits the IPv4
// address a NAT64 or 6to4 address embeds.
func (al *allowlist) admitsAddr(a netip.Addr, port uint16) bool {
	a = canon(a)
	v4, _, hasV4 := embedded(a)
	for _, p := range al.prefixes {
		if portAdmits(p.port, port) && (p.prefix.Contains(a) || hasV4 && p.prefix.Contains(v4)) {
			return true
		}
	}
	return false
}

func (al *allowlist) admitsHost(host string, port uint16) bool {
	for _, p := range al.hosts[hostKey(host)] {
		if portAdmits(p, port) {
			return true
		}
	}
	return false
}

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

// CheckURL validates a URL before it is accepted (a webhook when its
// config is registered): scheme http or https, a host, no userinfo; a
// literal IP host or "localhost" in a refused range fails unless allowed.
// It does not resolve host names: what a name resolves to can change before
// delivery, so DialContext checks the address actually connected to.
// Errors are plain, human-actionable sentences naming the URL and saying
// how to allow it (the server wraps them as invalid-params errors).
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
	if u.Scheme != "http" && u.Scheme != "https" { // Parse lowercases it
		return fmt.Errorf("URL %q must be an absolute http:// or https:// URL", raw)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("URL %q has no host", raw)
	}
	port, err := urlPort(u)
	if err != nil {
		return fmt.Errorf("URL %q has %v", raw, err)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if kind := refusedKind(a); kind != "" && !al.admitsAddr(a, port) {
			return fmt.Errorf("URL %q points to %s, %s, which this server does not call because it may reach the server's own network; use a public address, or have the server operator add %q to the allowlist", raw, host, kind, canon(a).String())
		}
		return nil
	}
	if numericHost(hostKey(host)) {
		return fmt.Errorf("URL %q has host %q, which reads as an IPv4 address in shorthand form; write the address as four decimal numbers (a.b.c.d) or use a host name", raw, host)
	}
	if isLocalhost(host) && !al.admitsHost(host, port) && !al.admitsAddr(loopback4, port) && !al.admitsAddr(loopback6, port) {
		return fmt.Errorf("URL %q points to %s, a loopback address, which this server does not call because it is the server itself; have the server operator add %q to the allowlist if this is intended", raw, host, hostKey(host))
	}
	return nil
}

// urlPort returns the port a URL connects to.
func urlPort(u *url.URL) (uint16, error) {
	p := u.Port()
	if p == "" {
		if u.Scheme == "https" {
			return 443, nil
		}
		return 80, nil
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q, which is not a port number (1-65535)", p)
	}
	return uint16(n), nil
}

// DialContext dials like net.Dialer but checks the address actually
// connected to (after DNS resolution), so a host name that resolves into a
// refused range (DNS rebinding) is refused too, unless the host name itself
// is allowlisted for the port. When a name resolves to several addresses,
// refused ones are skipped and the others tried, as a failed connection
// would be.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	al, err := g.list()
	if err != nil {
		return nil, err
	}
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, &guardError{fmt.Sprintf("netguard: refusing to connect to %s: port %q is not a port number", addr, p)}
	}
	var d net.Dialer
	if !al.admitsHost(host, uint16(port)) {
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
	if kind == "" || al.admitsAddr(a, ap.Port()) {
		return nil
	}
	ip := canon(a).String()
	if _, err := netip.ParseAddr(host); err == nil {
		return &guardError{fmt.Sprintf("netguard: refusing to connect to %s, %s, which may reach the server's own network; add %q to the allowlist if this is intended", address, kind, ip)}
	}
	return &guardError{fmt.Sprintf("netguard: refusing to connect to %s for host %q: it is %s, which may reach the server's own network; add %q or %q to the allowlist if this is intended", address, host, kind, hostKey(host), ip)}
}
