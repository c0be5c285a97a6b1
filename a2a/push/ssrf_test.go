package push

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/netguard"
)

// loopbackNames returns host names that resolve, on this machine, only to
// loopback addresses: "localhost", and the machine's own name when its
// hosts file maps it to loopback (as container runtimes do). The second
// kind is the sharper proof: CheckURL passes it, since it does not look
// local, so only the check at connect time stands in the way.
func loopbackNames(t *testing.T) []string {
	t.Helper()
	names := []string{"localhost"}
	h, err := os.Hostname()
	if err != nil || h == "" || strings.EqualFold(h, "localhost") {
		return names
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil || len(addrs) == 0 {
		t.Logf("host name %q does not resolve (%v); testing localhost only", h, err)
		return names
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			t.Logf("host name %q resolves to %v, not only loopback; testing localhost only", h, addrs)
			return names
		}
	}
	return append(names, h)
}

func TestNotifyRefusesNamesResolvingToBlockedAddresses(t *testing.T) {
	h := newHook(t, statuses(http.StatusOK))
	_, port, err := net.SplitHostPort(h.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range loopbackNames(t) {
		raw := "http://" + net.JoinHostPort(name, port) + "/hook"
		t.Run(name+" refused", func(t *testing.T) {
			s := newSender(t)
			s.Guard = netguard.Guard{} // refuses loopback, whatever its name
			before := h.calls.Load()
			err := s.Notify(context.Background(), hookConfig(raw), statusEvent(a2a.TaskStateWorking), nil)
			if !errors.Is(err, netguard.ErrRefused) || !strings.Contains(err.Error(), "loopback") ||
				!strings.Contains(err.Error(), "1 attempt(s)") {
				t.Fatalf("Notify to %s = %v, want a loopback refusal after 1 attempt", raw, err)
			}
			if got := h.calls.Load() - before; got != 0 {
				t.Fatalf("webhook got %d requests, want none", got)
			}
		})
		for _, allow := range []string{name, net.JoinHostPort(name, port), "127.0.0.1:" + port} {
			t.Run(name+" allowed by "+allow, func(t *testing.T) {
				s := newSender(t)
				s.Guard = netguard.Guard{Allow: []string{allow}}
				before := h.calls.Load()
				if err := s.Notify(context.Background(), hookConfig(raw), statusEvent(a2a.TaskStateWorking), nil); err != nil {
					t.Fatalf("Notify to %s with %q allowed = %v", raw, allow, err)
				}
				if got := h.calls.Load() - before; got != 1 {
					t.Fatalf("webhook got %d requests, want 1", got)
				}
			})
		}
	}
	// The check at registration cannot know what a name resolves to, so a
	// name that does not look local passes it: the dial-time check above is
	// what refuses it.
	var g netguard.Guard
	for _, name := range loopbackNames(t)[1:] {
		if err := g.CheckURL("http://" + name + "/hook"); err != nil {
			t.Errorf("CheckURL(%q) = %v; the test meant to show a name only the dial refuses", name, err)
		}
	}
}

func TestNotifyDoesNotFollowRedirects(t *testing.T) {
	// internal stands for a service in the server's own network: on
	// 127.0.0.1 like the webhook, but on a port the allowlist does not
	// admit.
	internal := newHook(t, statuses(http.StatusOK))
	targets := []struct {
		name, location, want string
	}{
		{"loopback", internal.srv.URL + "/admin", internal.srv.URL + "/admin"},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", "http://169.254.169.254/latest/meta-data/"},
		{"private", "http://10.0.0.1/internal", "http://10.0.0.1/internal"},
		{"private IPv6", "http://[fd00::1]:8080/x", "http://[fd00::1]:8080/x"},
		{"credentials redacted", "http://user:pw-secret@10.0.0.1/", "http://user:xxxxx@10.0.0.1/"},
		{"relative", "/elsewhere", "/elsewhere"},
	}
	codes := []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect}
	clients := []struct {
		name string
		// custom is a caller's client that would follow redirects: the
		// sender must not let it.
		custom bool
	}{{"default client", false}, {"caller's client", true}}
	for _, cl := range clients {
		for _, tg := range targets {
			for _, code := range codes {
				t.Run(cl.name+"/"+tg.name+"/"+http.StatusText(code), func(t *testing.T) {
					h := newHook(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
						w.Header().Set("Location", tg.location)
						w.WriteHeader(code)
					})
					u, err := url.Parse(h.srv.URL)
					if err != nil {
						t.Fatal(err)
					}
					s := newSender(t)
					s.Guard = netguard.Guard{Allow: []string{u.Host}} // the webhook's port only
					if cl.custom {
						s.Client = &http.Client{Timeout: 2 * time.Second}
						t.Cleanup(s.Client.CloseIdleConnections)
					}
					c := hookConfig(h.url())
					c.Token = "tok-secret"
					err = s.Notify(context.Background(), c, statusEvent(a2a.TaskStateWorking), nil)
					if err == nil {
						t.Fatal("Notify succeeded, want the redirect reported as a failure")
					}
					want := tg.want
					if strings.HasPrefix(want, "/") {
						want = h.srv.URL + want
					}
					for _, part := range []string{http.StatusText(code), "redirect to \"" + want + "\"", "not followed", "1 attempt(s)", "not retried"} {
						if !strings.Contains(err.Error(), part) {
							t.Errorf("Notify = %v, want it to say %q", err, part)
						}
					}
					if strings.Contains(err.Error(), "pw-secret") {
						t.Errorf("Notify = %v: the redirect's password leaked", err)
					}
					if got := h.calls.Load(); got != 1 {
						t.Errorf("webhook got %d requests, want 1", got)
					}
					for _, r := range h.requests() {
						if r.path != "/hook" {
							t.Errorf("webhook got a request for %s: the redirect was followed", r.path)
						}
					}
					if got := internal.calls.Load(); got != 0 {
						t.Fatalf("internal service got %d requests: the redirect was followed", got)
					}
				})
			}
		}
	}
}
