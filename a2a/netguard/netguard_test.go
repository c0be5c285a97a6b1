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
	for _, entry := range []string{"10.0.0.0/33", "", "http://hooks.internal", "hooks.internal:8080", "*.example.com", "127.1", "bad host", "-bad.example"} {
		t.Run(entry, func(t *testing.T) {
			g := &Guard{Allow: []string{"10.0.0.0/8", entry}}
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
	g := &Guard{Allow: []string{" 10.0.0.0/8 ", "fd00::/8", "192.168.1.1", "fe80::1%eth0", "Hooks.Internal.", "under_score.example"}}
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
