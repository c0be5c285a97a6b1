package netguard

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	loopback := []string{"127.0.0.0/8"}
	tests := []struct {
		name  string
		allow []string
		url   string
		// want is "" for success, else a substring of the error.
		want string
	}{
		{"file scheme", nil, "file:///etc/passwd", "http:// or https://"},
		{"ftp scheme", nil, "ftp://example.com/hook", "http:// or https://"},
		{"no scheme", nil, "example.com/hook", "http:// or https://"},
		{"empty", nil, "", "http:// or https://"},
		{"no host", nil, "http:///hook", "no host"},
		{"port only", nil, "http://:8080/hook", "no host"},
		{"unparsable", nil, "http://exa mple.com/", "not a valid URL"},
		{"userinfo", nil, "https://user:hunter2@example.com/hook", "user name or password"},
		{"loopback", nil, "http://127.0.0.1:8080/hook", "loopback"},
		{"loopback range", nil, "http://127.9.9.9/hook", "loopback"},
		{"ipv6 loopback", nil, "http://[::1]:8080/hook", "loopback"},
		{"10/8", nil, "http://10.1.2.3/hook", "private"},
		{"172.16/12", nil, "http://172.16.0.1/hook", "private"},
		{"192.168/16", nil, "https://192.168.1.1/hook", "private"},
		{"unique local", nil, "http://[fd00::1]/hook", "private"},
		{"cloud metadata", nil, "http://169.254.169.254/latest/meta-data/", "metadata"},
		{"link-local", nil, "http://169.254.1.1/", "link-local"},
		{"ipv6 link-local", nil, "http://[fe80::1]/hook", "link-local"},
		{"ipv6 link-local with zone", nil, "http://[fe80::1%25eth0]/hook", "link-local"},
		{"unspecified", nil, "http://0.0.0.0:8080/hook", "unspecified"},
		{"ipv6 unspecified", nil, "http://[::]:8080/hook", "unspecified"},
		{"this network", nil, "http://0.1.2.3/hook", "unspecified"},
		{"multicast", nil, "http://224.0.0.1/hook", "multicast"},
		{"ipv6 multicast", nil, "http://[ff02::1]/hook", "multicast"},
		{"cgnat", nil, "http://100.64.0.1/hook", "carrier-grade NAT"},
		{"ipv4-mapped loopback", nil, "http://[::ffff:127.0.0.1]/hook", "loopback"},
		{"ipv4-mapped private", nil, "http://[::ffff:10.0.0.1]/hook", "private"},
		{"localhost", nil, "http://localhost:8080/hook", "loopback"},
		{"LOCALHOST.", nil, "http://LOCALHOST.:8080/hook", "loopback"},
		{"under localhost", nil, "http://api.localhost/hook", "loopback"},
		{"decimal shorthand", nil, "http://2130706433/hook", "shorthand"},
		{"dotted shorthand", nil, "http://127.1/hook", "shorthand"},
		{"hex shorthand", nil, "http://0x7f.0.0.1/hook", "shorthand"},

		{"public ip", nil, "http://93.184.216.34/hook", ""},
		{"public ipv6", nil, "https://[2606:2800:220:1:248:1893:25c8:1946]/hook", ""},
		{"public name", nil, "https://example.com/hook", ""},
		{"upper-case scheme", nil, "HTTPS://example.com/hook", ""},
		{"name with digits", nil, "https://123.example.com/hook", ""},
		{"allowlisted ip", loopback, "http://127.0.0.1:8080/hook", ""},
		{"allowlisted single ip", []string{"10.1.2.3"}, "http://10.1.2.3/hook", ""},
		{"single ip admits only itself", []string{"10.1.2.3"}, "http://10.1.2.4/hook", "private"},
		{"allowlisted mapped", loopback, "http://[::ffff:127.0.0.1]/hook", ""},
		{"allowlisted via mapped prefix", []string{"::ffff:10.0.0.0/104"}, "http://10.9.9.9/hook", ""},
		{"ipv4 allowlist does not admit ::1", loopback, "http://[::1]/hook", "loopback"},
		{"allowlisted host name", []string{"localhost"}, "http://LOCALHOST./hook", ""},
		{"allowlisted loopback admits localhost", loopback, "http://localhost:8080/hook", ""},
		{"allowlisted name is exact", []string{"localhost"}, "http://api.localhost/hook", "loopback"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Guard{Allow: tt.allow}
			err := g.CheckURL(tt.url)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckURL(%q) = %v, want nil", tt.url, err)
			case tt.want == "":
				return
			case err == nil:
				t.Fatalf("CheckURL(%q) = nil, want an error about %s", tt.url, tt.want)
			case !strings.Contains(err.Error(), tt.want):
				t.Fatalf("CheckURL(%q) = %v, want it to mention %q", tt.url, err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error repeats the password: %v", err)
			}
			if strings.Contains(tt.url, "hunter2") {
				return
			}
			if !strings.Contains(err.Error(), tt.url) {
				t.Fatalf("error does not name the URL %q: %v", tt.url, err)
			}
			if refusal := !strings.Contains(err.Error(), "http:// or https://") &&
				!strings.Contains(err.Error(), "no host") && !strings.Contains(err.Error(), "valid URL") &&
				!strings.Contains(err.Error(), "shorthand"); refusal && !strings.Contains(err.Error(), "allowlist") {
				t.Fatalf("refusal does not say how to allow the URL: %v", err)
			}
		})
	}
}

func TestInvalidAllowEntry(t *testing.T) {
	ln := listen(t)
	for _, entry := range []string{
		"10.0.0.0/33", "", "http://hooks.internal", "*.example.com", "127.1", "bad host", "-bad.example",
		"10.0.0.0/8:80", "hooks.internal:0", "hooks.internal:65536", "hooks.internal:http", "127.0.0.1:0", "[::1]", "127.1:80",
	} {
		t.Run(entry, func(t *testing.T) {
			g := &Guard{Allow: []string{"10.0.0.0/8", entry}}
			if err := g.Validate(); err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), `"`+entry+`"`) {
				t.Fatalf("Validate with allowlist entry %q = %v, want an error naming the entry", entry, err)
			}
			err := g.CheckURL("https://example.com/hook")
			if err == nil || !strings.Contains(err.Error(), `"`+entry+`"`) {
				t.Fatalf("CheckURL with allowlist entry %q = %v, want an error naming the entry", entry, err)
			}
			conn, err := g.DialContext(context.Background(), "tcp", ln.Addr().String())
			if err == nil {
				conn.Close()
				t.Fatalf("DialContext with allowlist entry %q succeeded, want an error", entry)
			}
			if !strings.Contains(err.Error(), `"`+entry+`"`) {
				t.Fatalf("DialContext with allowlist entry %q = %v, want an error naming the entry", entry, err)
			}
		})
	}
}

func TestValidAllowEntries(t *testing.T) {
	g := &Guard{Allow: []string{" 10.0.0.0/8 ", "fd00::/8", "192.168.1.1", "fe80::1%eth0", "Hooks.Internal.", "under_score.example",
		"10.9.9.9:8443", "[fd00::1]:8443", "hooks.internal:8443", "[fe80::2%eth0]:80"}}
	if err := g.Validate(); err != nil {
		t.Fatalf("Validate = %v, want nil", err)
	}
	if err := new(Guard).Validate(); err != nil {
		t.Fatalf("Validate of the zero Guard = %v, want nil", err)
	}
	for _, u := range []string{"http://10.2.3.4/", "http://[fd12::1]/", "http://192.168.1.1/", "http://[fe80::1]/", "http://hooks.internal/"} {
		if err := g.CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		}
	}
	if err := g.CheckURL("http://192.168.1.2/"); err == nil {
		t.Error("single-IP entry admitted its neighbour")
	}
}

// listen returns a TCP listener on 127.0.0.1. Dials complete in the
// kernel's backlog, so nothing needs to accept.
func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln
}

func TestDialContext(t *testing.T) {
	ln := listen(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	tests := []struct {
		name  string
		allow []string
		addr  string
		ok    bool
	}{
		{"zero guard refuses loopback", nil, "127.0.0.1:" + port, false},
		{"zero guard refuses mapped loopback", nil, "[::ffff:127.0.0.1]:" + port, false},
		// A name that resolves into a refused range is what DNS rebinding
		// looks like: the name passed CheckURL, the address does not pass.
		{"zero guard refuses a name resolving to loopback", nil, "localhost:" + port, false},
		{"allowlisted range", []string{"127.0.0.0/8"}, "127.0.0.1:" + port, true},
		{"allowlisted ip", []string{"127.0.0.1"}, "127.0.0.1:" + port, true},
		{"allowlisted name", []string{"localhost"}, "localhost:" + port, true},
		{"allowlisted address of a name", []string{"127.0.0.1"}, "localhost:" + port, true},
		{"other range allowlisted", []string{"10.0.0.0/8"}, "127.0.0.1:" + port, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Guard{Allow: tt.allow}
			conn, err := g.DialContext(context.Background(), "tcp", tt.addr)
			if conn != nil {
				conn.Close()
			}
			switch {
			case tt.ok && err != nil:
				t.Fatalf("DialContext(%s) = %v, want a connection", tt.addr, err)
			case !tt.ok && err == nil:
				t.Fatalf("DialContext(%s) connected, want a refusal", tt.addr)
			case !tt.ok && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "allowlist")):
				t.Fatalf("DialContext(%s) = %v, want a guard refusal saying how to allow it", tt.addr, err)
			}
		})
	}
}

// TestSpecialPurposeRanges covers the non-global ranges of IANA's
// special-purpose registries and the addresses that embed an IPv4 address.
func TestSpecialPurposeRanges(t *testing.T) {
	tests := []struct {
		host string
		want string // "" when the address is global and accepted
	}{
		{"198.18.0.1", "benchmarking"},
		{"198.19.255.255", "benchmarking"},
		{"240.0.0.1", "reserved"},
		{"255.255.255.254", "reserved"},
		{"255.255.255.255", "broadcast"},
		{"192.0.0.1", "IETF protocol assignment"},
		{"192.0.0.170", "IETF protocol assignment"},
		{"192.0.2.1", "documentation"},
		{"198.51.100.7", "documentation"},
		{"203.0.113.9", "documentation"},
		{"192.88.99.1", "6to4 relay"},
		{"[::ffff:198.18.0.1]", "benchmarking"},
		{"[64:ff9b::a9fe:a9fe]", "NAT64 address for 169.254.169.254, the cloud metadata address"},
		{"[64:ff9b::127.0.0.1]", "NAT64 address for 127.0.0.1, a loopback address"},
		{"[64:ff9b::a00:1]", "NAT64 address for 10.0.0.1, a private address"},
		{"[64:ff9b:1::808:808]", "local-use NAT64"},
		{"[2002:7f00:1::1]", "6to4 address for 127.0.0.1, a loopback address"},
		{"[2002:a9fe:a9fe::]", "6to4 address for 169.254.169.254, the cloud metadata address"},
		{"[2002:c612::1]", "6to4 address for 198.18.0.0, a benchmarking address"},
		{"[::127.0.0.1]", "IPv4-compatible"},
		{"[::8.8.8.8]", "IPv4-compatible"},
		{"[100::1]", "discard-only"},
		{"[100:0:0:1::1]", "dummy"},
		{"[2001::1]", "IETF protocol assignment"},   // Teredo
		{"[2001:2::1]", "IETF protocol assignment"}, // benchmarking
		{"[2001:db8::1]", "documentation"},
		{"[3fff::1]", "documentation"},
		{"[5f00::1]", "SRv6"},
		{"[fec0::1]", "site-local"},
		{"[fd00:ec2::254]", "cloud metadata"},

		{"8.8.8.8", ""},
		{"192.0.3.1", ""},
		{"198.20.0.1", ""},
		{"223.255.255.255", ""},
		{"[64:ff9b::808:808]", ""},
		{"[2002:808:808::1]", ""},
		{"[2001:200::1]", ""},
		{"[2606:4700::1111]", ""},
	}
	var g Guard
	for _, tt := range tests {
		u := "http://" + tt.host + "/hook"
		err := g.CheckURL(u)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v, want nil", u, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("CheckURL(%q) = %v, want a refusal mentioning %q", u, err, tt.want)
		}
	}
}

func TestAllowPorts(t *testing.T) {
	tests := []struct {
		allow []string
		url   string
		ok    bool
	}{
		{[]string{"127.0.0.1:8080"}, "http://127.0.0.1:8080/hook", true},
		{[]string{"127.0.0.1:8080"}, "http://127.0.0.1:8081/hook", false},
		{[]string{"127.0.0.1:8080"}, "http://127.0.0.1/hook", false},
		{[]string{"127.0.0.1:80"}, "http://127.0.0.1/hook", true},
		{[]string{"127.0.0.1:443"}, "https://127.0.0.1/hook", true},
		{[]string{"127.0.0.1:443"}, "http://127.0.0.1/hook", false},
		{[]string{"[::1]:8443"}, "https://[::1]:8443/hook", true},
		{[]string{"[::1]:8443"}, "https://[::1]/hook", false},
		{[]string{"localhost:8080"}, "http://localhost:8080/hook", true},
		{[]string{"localhost:8080"}, "http://localhost:9090/hook", false},
		{[]string{"127.0.0.1:8080"}, "http://localhost:8080/hook", true},
		{[]string{"localhost:8080", "localhost:9090"}, "http://localhost:9090/hook", true},
		// An entry admits the NAT64 and 6to4 forms of what it admits.
		{[]string{"10.0.0.0/8"}, "http://[64:ff9b::a00:1]/hook", true},
		{[]string{"169.254.169.254:80"}, "http://[64:ff9b::a9fe:a9fe]/hook", true},
		{[]string{"169.254.169.254:80"}, "http://[64:ff9b::a9fe:a9fe]:81/hook", false},
		{[]string{"127.0.0.0/8"}, "http://127.0.0.1:0/hook", false},
	}
	for _, tt := range tests {
		g := &Guard{Allow: tt.allow}
		if err := g.CheckURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("allow %q: CheckURL(%q) = %v, want ok=%v", tt.allow, tt.url, err, tt.ok)
		}
	}

	ln := listen(t)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, tt := range []struct {
		allow []string
		addr  string
		ok    bool
	}{
		{[]string{"127.0.0.1:" + port}, "127.0.0.1:" + port, true},
		{[]string{"127.0.0.1:1"}, "127.0.0.1:" + port, false},
		{[]string{"localhost:" + port}, "localhost:" + port, true},
		{[]string{"localhost:1"}, "localhost:" + port, false},
		{[]string{"127.0.0.1:" + port}, "localhost:" + port, true},
	} {
		g := &Guard{Allow: tt.allow}
		conn, err := g.DialContext(context.Background(), "tcp", tt.addr)
		if conn != nil {
			conn.Close()
		}
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrRefused) {
			t.Errorf("allow %q: DialContext(%s) = %v, want ok=%v", tt.allow, tt.addr, err, tt.ok)
		}
	}
}
