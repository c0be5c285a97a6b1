package jsonrpcserver_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a/jsonrpcserver"
)

// TestAgentCard checks the card endpoint: caching headers, conditional
// requests, HEAD, and a body both 1.0 and 0.3 clients read.
func TestAgentCard(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{CardMaxAge: 90 * time.Second})
	r := w.do(http.MethodGet, jsonrpcserver.CardPath, nil, nil)
	if r.status != http.StatusOK {
		t.Fatalf("HTTP %d", r.status)
	}
	checkContentType(t, r.header, "application/json")
	etag := r.header.Get("ETag")
	if len(etag) < 3 || !strings.HasPrefix(etag, `"`) || !strings.HasSuffix(etag, `"`) {
		t.Errorf("ETag %q, want a quoted entity tag", etag)
	}
	if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "max-age=90") {
		t.Errorf("Cache-Control %q, want max-age=90", cc)
	}
	card := r.body
	if n := len(arr(t, path(t, card, "supportedInterfaces"))); n != 2 {
		t.Errorf("%d supportedInterfaces, want 2", n)
	}
	for p, want := range map[string]string{
		"name":                                  "echo",
		"url":                                   "http://placeholder/",
		"preferredTransport":                    "JSONRPC",
		"protocolVersion":                       "0.3",
		"supportedInterfaces.0.protocolVersion": "1.0",
		"supportedInterfaces.0.protocolBinding": "JSONRPC",
		"supportedInterfaces.1.protocolVersion": "0.3",
	} {
		if got := str(t, card, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}

	t.Run("If-None-Match", func(t *testing.T) {
		for _, match := range []string{etag, "W/" + etag, `"other", ` + etag} {
			r := w.on(t).do(http.MethodGet, jsonrpcserver.CardPath, nil, hdr("If-None-Match", match))
			if r.status != http.StatusNotModified {
				t.Errorf("If-None-Match %s: HTTP %d, want 304", match, r.status)
			}
			if len(r.body) != 0 {
				t.Errorf("If-None-Match %s: 304 with a body: %q", match, r.body)
			}
			if r.header.Get("ETag") != etag {
				t.Errorf("If-None-Match %s: ETag %q on the 304", match, r.header.Get("ETag"))
			}
		}
		r := w.on(t).do(http.MethodGet, jsonrpcserver.CardPath, nil, hdr("If-None-Match", `"stale"`))
		if r.status != http.StatusOK || string(r.body) != string(card) {
			t.Errorf("stale ETag: HTTP %d, body changed: %v", r.status, string(r.body) != string(card))
		}
	})

	// Last-Modified (a MAY of specification 8.6.1) is when the server
	// encoded the card; If-Modified-Since counts only without If-None-Match,
	// as RFC 9110 13.2.2 orders them.
	t.Run("Last-Modified", func(t *testing.T) {
		lm, err := http.ParseTime(r.header.Get("Last-Modified"))
		if err != nil {
			t.Fatalf("Last-Modified %q: %v", r.header.Get("Last-Modified"), err)
		}
		if lm.After(time.Now()) {
			t.Errorf("Last-Modified %v is in the future", lm)
		}
		since := lm.Format(http.TimeFormat)
		for _, c := range []struct {
			name string
			h    map[string]string
			want int
		}{
			{"same time", hdr("If-Modified-Since", since), http.StatusNotModified},
			{"later", hdr("If-Modified-Since", lm.Add(time.Hour).Format(http.TimeFormat)), http.StatusNotModified},
			{"earlier", hdr("If-Modified-Since", lm.Add(-time.Second).Format(http.TimeFormat)), http.StatusOK},
			{"not a date", hdr("If-Modified-Since", "yesterday"), http.StatusOK},
			{"stale ETag wins", hdr("If-Modified-Since", since, "If-None-Match", `"stale"`), http.StatusOK},
		} {
			r := w.on(t).do(http.MethodGet, jsonrpcserver.CardPath, nil, c.h)
			if r.status != c.want {
				t.Errorf("%s: HTTP %d, want %d", c.name, r.status, c.want)
			}
			if r.header.Get("Last-Modified") != since {
				t.Errorf("%s: Last-Modified %q, want %q", c.name, r.header.Get("Last-Modified"), since)
			}
		}
	})

	t.Run("HEAD", func(t *testing.T) {
		r := w.on(t).do(http.MethodHead, jsonrpcserver.CardPath, nil, nil)
		if r.status != http.StatusOK {
			t.Fatalf("HTTP %d", r.status)
		}
		if len(r.body) != 0 {
			t.Errorf("HEAD with a body")
		}
		if r.header.Get("ETag") != etag {
			t.Errorf("ETag %q, want %q", r.header.Get("ETag"), etag)
		}
		checkContentType(t, r.header, "application/json")
	})

	t.Run("default max-age", func(t *testing.T) {
		r := serveEcho(t, jsonrpcserver.Config{}).do(http.MethodGet, jsonrpcserver.CardPath, nil, nil)
		if cc := r.header.Get("Cache-Control"); !strings.Contains(cc, "max-age=300") {
			t.Errorf("Cache-Control %q, want max-age=300", cc)
		}
	})
}

// TestAgentCard10 checks the card a client saying A2A-Version: 1.0 gets:
// the 1.0 members alone, so that the 1.0 JSON schema (which admits no
// other member) validates it, with an ETag of its own; a request without
// the header is a 0.3 client's and keeps the union card.
func TestAgentCard10(t *testing.T) {
	w := serveEcho(t, jsonrpcserver.Config{})
	union := w.do(http.MethodGet, jsonrpcserver.CardPath, nil, nil)
	// The members of the 1.0 AgentCard (specification 4.4.1).
	allowed := map[string]bool{}
	for _, k := range []string{"name", "description", "supportedInterfaces", "provider", "version",
		"documentationUrl", "capabilities", "securitySchemes", "securityRequirements",
		"defaultInputModes", "defaultOutputModes", "skills", "signatures", "iconUrl"} {
		allowed[k] = true
	}
	for _, c := range []struct {
		name, path string
		h          map[string]string
	}{
		{"header", jsonrpcserver.CardPath, hdr("A2A-Version", "1.0")},
		{"header 1.0.1", jsonrpcserver.CardPath, hdr("A2A-Version", "1.0.1")},
		{"query", jsonrpcserver.CardPath + "?A2A-Version=1.0", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := w.on(t).do(http.MethodGet, c.path, nil, c.h)
			if r.status != http.StatusOK {
				t.Fatalf("HTTP %d", r.status)
			}
			checkContentType(t, r.header, "application/json")
			for k := range obj(t, r.body) {
				if !allowed[k] {
					t.Errorf("member %q is not in the 1.0 AgentCard", k)
				}
			}
			if got := str(t, r.body, "supportedInterfaces.0.protocolVersion"); got != "1.0" {
				t.Errorf("supportedInterfaces.0.protocolVersion = %q, want 1.0", got)
			}
			if r.header.Get("Vary") != "A2A-Version" || union.header.Get("Vary") != "A2A-Version" {
				t.Errorf("Vary %q and %q, want A2A-Version on both", r.header.Get("Vary"), union.header.Get("Vary"))
			}
			etag := r.header.Get("ETag")
			if etag == "" || etag == union.header.Get("ETag") {
				t.Errorf("ETag %q, the union card's is %q: want one of its own", etag, union.header.Get("ETag"))
			}
			h := map[string]string{"If-None-Match": etag}
			for k, v := range c.h {
				h[k] = v
			}
			if r := w.on(t).do(http.MethodGet, c.path, nil, h); r.status != http.StatusNotModified {
				t.Errorf("If-None-Match its ETag: HTTP %d, want 304", r.status)
			}
		})
	}
	if got := str(t, union.body, "preferredTransport"); got != "JSONRPC" {
		t.Errorf("without A2A-Version: preferredTransport %q, want the union card", got)
	}
}
