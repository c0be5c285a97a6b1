package httpbind

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/a2a/server"
)

// The service parameters of A2A as HTTP headers (specification 3.2.6).
const (
	VersionHeader    = "A2A-Version"
	ExtensionsHeader = "A2A-Extensions"
)

// Version returns the A2A-Version the request names: its header, or the
// query parameter of the same name, which the specification allows
// clients to send instead; "" for neither.
func Version(x Exchange) string {
	if v := x.Header(VersionHeader); len(v) > 0 {
		return string(v)
	}
	return string(x.Query(VersionHeader))
}

// MajorMinor reduces a version to Major.Minor; patch numbers do not count.
func MajorMinor(v string) string {
	v = strings.TrimSpace(v)
	major, rest, ok := strings.Cut(v, ".")
	if !ok {
		return v
	}
	minor, _, _ := strings.Cut(rest, ".")
	return major + "." + minor
}

// SplitList splits a comma-separated header value (A2A-Extensions) into
// its non-empty, trimmed elements.
func SplitList(h []byte) []string {
	if len(h) == 0 {
		return nil
	}
	var out []string
	for _, f := range strings.Split(string(h), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// SetExtensions lists in the answer's A2A-Extensions header the
// extensions the Handler activates for the call of ctx, as the
// specification's extension activation asks; none, no header.
func SetExtensions(ctx context.Context, x Exchange, h *server.Handler) {
	if exts := h.ActiveExtensions(ctx); len(exts) > 0 {
		x.SetHeader(ExtensionsHeader, strings.Join(exts, ","))
	}
}

// SetErrorHeaders sets the headers an error's answer carries: a retryable
// error's guidance as Retry-After, in whole seconds (at least 1), for HTTP
// clients and proxies that read it, and an authentication error's
// challenge as WWW-Authenticate.
func SetErrorHeaders(x Exchange, e *a2a.Error) {
	if e.RetryAfter > 0 {
		x.SetHeader("Retry-After", strconv.Itoa(int(max(time.Second, e.RetryAfter+time.Second-1)/time.Second)))
	}
	if e.Challenge != "" {
		x.SetHeader("WWW-Authenticate", e.Challenge)
	}
}

// Admit passes the request for method through the Handler's gate (see
// server.Handler.Admit), and returns the context to serve it with.
func Admit(ctx context.Context, h *server.Handler, method string, x Exchange) (context.Context, *a2a.Error) {
	if !h.Gated() {
		return ctx, nil
	}
	ctx, err := h.Admit(ctx, method, Credentials(x))
	if err != nil {
		return ctx, a2a.AsError(err)
	}
	return ctx, nil
}

// Credentials returns what the request presents to authenticate: its
// headers and, over TLS, the client certificates the handshake verified.
func Credentials(x Exchange) auth.Credentials {
	c := auth.Credentials{Header: func(name string) string { return string(x.Header(name)) }, Remote: x.RemoteAddr()}
	if st := x.TLS(); st != nil && len(st.VerifiedChains) > 0 {
		c.PeerCertificates = st.PeerCertificates
	}
	return c
}
