package httpbind

import (
	"strconv"
	"strings"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
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

// SetRetryAfter gives a retryable error's guidance as Retry-After, in
// whole seconds (at least 1), for HTTP clients and proxies that read it.
func SetRetryAfter(x Exchange, e *a2a.Error) {
	if e.RetryAfter > 0 {
		x.SetHeader("Retry-After", strconv.Itoa(int(max(time.Second, e.RetryAfter+time.Second-1)/time.Second)))
	}
}
