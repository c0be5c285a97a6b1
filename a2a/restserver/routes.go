package restserver

import (
	"net/url"
	"strings"

	"github.com/a2amesh/a2amesh/a2a/internal/httpbind"
	"github.com/a2amesh/a2amesh/a2a/jsonrpc"
)

// target is a request's place in the binding: the operation its path and
// method name, and the values the path carries.
type target struct {
	op       jsonrpc.Op
	tenant   string
	id       string // the task's id
	configID string // the push config's id
}

// pathMatch is what a path names before the method is looked at.
type pathMatch struct {
	target
	// ops are the operations served at the path, by method; the method
	// "" is none.
	get, post, del jsonrpc.Op
	card           bool // the agent card's path
}

// allow lists the methods served at the path, for a 405's Allow header.
func (m *pathMatch) allow() string {
	if m.card {
		return "GET, HEAD"
	}
	var ms []string
	if m.get != 0 {
		ms = append(ms, "GET")
	}
	if m.post != 0 {
		ms = append(ms, "POST")
	}
	if m.del != 0 {
		ms = append(ms, "DELETE")
	}
	return strings.Join(ms, ", ")
}

// forMethod returns the operation served at the path for method, or 0.
func (m *pathMatch) forMethod(method string) jsonrpc.Op {
	switch method {
	case "GET":
		return m.get
	case "POST":
		return m.post
	case "DELETE":
		return m.del
	}
	return 0
}

// matchPath finds the route of an escaped path (as it came in the request
// line): the routes of specification 11.3 and their google.api.http
// bindings, each also under /{tenant}/. Runs of slashes count as one, as
// Hertz's router and net/http's ServeMux take them (a client joining a
// base URL that ends in "/" and a path that starts with one sends "//").
// An id that is not a single non-empty path segment names no route;
// escapes within a segment (%2F, %3A) are part of the id. A path that is
// a route without a tenant is that route, so a tenant named like a
// route's first segment ("tasks") cannot be reached under it; the other
// routes are.
func matchPath(rawPath string) (pathMatch, bool) {
	if strings.Contains(rawPath, "//") {
		rawPath = collapseSlashes(rawPath)
	}
	p, ok := strings.CutPrefix(rawPath, "/")
	if !ok {
		return pathMatch{}, false
	}
	if p == httpbind.CardPath[1:] {
		return pathMatch{card: true}, true
	}
	var segs [5]string // the longest route: a tenant and four
	n := 0
	for more := true; more; n++ {
		if n == len(segs) {
			return pathMatch{}, false
		}
		segs[n], p, more = strings.Cut(p, "/")
	}
	if m, ok := matchOps(segs[:n]); ok {
		return m, true
	}
	if n < 2 || segs[0] == "" {
		return pathMatch{}, false
	}
	tenant, ok := unescape(segs[0])
	if !ok {
		return pathMatch{}, false
	}
	m, ok := matchOps(segs[1:n])
	m.tenant = tenant
	return m, ok
}

// matchOps matches the segments of a path without its tenant.
func matchOps(segs []string) (m pathMatch, ok bool) {
	switch {
	case len(segs) == 1:
		switch segs[0] {
		case "message:send":
			m.post = jsonrpc.OpSendMessage
		case "message:stream":
			m.post = jsonrpc.OpSendStreamingMessage
		case "tasks":
			m.get = jsonrpc.OpListTasks
		case "extendedAgentCard":
			m.get = jsonrpc.OpGetExtendedAgentCard
		default:
			return m, false
		}
		return m, true
	case len(segs) < 2 || len(segs) > 4 || segs[0] != "tasks":
		return m, false
	}
	task := segs[1]
	if len(segs) == 2 {
		// A custom verb follows the id's last colon; a colon that is not
		// followed by a verb is the id's own.
		if i := strings.LastIndexByte(task, ':'); i >= 0 {
			switch task[i+1:] {
			case "cancel":
				m.post, task = jsonrpc.OpCancelTask, task[:i]
			case "subscribe":
				// The specification's text says POST, its proto GET.
				m.get, m.post, task = jsonrpc.OpSubscribeToTask, jsonrpc.OpSubscribeToTask, task[:i]
			}
		}
		if m.post == 0 {
			m.get = jsonrpc.OpGetTask
		}
	} else if segs[2] != "pushNotificationConfigs" {
		return m, false
	}
	if m.id, ok = unescape(task); !ok {
		return m, false
	}
	switch len(segs) {
	case 3:
		m.get, m.post = jsonrpc.OpListPushConfigs, jsonrpc.OpCreatePushConfig
	case 4:
		m.get, m.del = jsonrpc.OpGetPushConfig, jsonrpc.OpDeletePushConfig
		if m.configID, ok = unescape(segs[3]); !ok {
			return m, false
		}
	}
	return m, true
}

func collapseSlashes(p string) string {
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '/' && i > 0 && p[i-1] == '/' {
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// unescape decodes a path segment's escapes; an empty segment, or one
// whose escapes are malformed, is no id.
func unescape(seg string) (string, bool) {
	if seg == "" {
		return "", false
	}
	if strings.IndexByte(seg, '%') < 0 {
		return seg, true
	}
	s, err := url.PathUnescape(seg)
	return s, err == nil && s != ""
}
