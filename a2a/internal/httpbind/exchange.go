package httpbind

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	"github.com/cloudwego/hertz/pkg/app"
	"github.com/cloudwego/hertz/pkg/network"
	"github.com/cloudwego/hertz/pkg/protocol/http1/resp"
)

// Exchange is one HTTP request and its answer as a binding sees them,
// whichever server carries them: Hertz (Hertz) or net/http (NetHTTP).
// Its methods are for the goroutine serving the request, except that the
// StreamBody that Stream returns may be written from others, one at a time.
type Exchange interface {
	Method() string
	// Path is the request's path as it came, escaped.
	Path() string
	// RawQuery is the query string as it came, without the "?".
	RawQuery() string
	// Query returns a query parameter's value; nil when absent.
	Query(name string) []byte
	// Header returns a request header's value; nil when absent.
	Header(name string) []byte
	Host() string
	// TLS is the connection's TLS state; nil over plain TCP.
	TLS() *tls.ConnectionState
	// RemoteAddr is the client's address.
	RemoteAddr() net.Addr
	// ContentLength is the body's declared length; -1 when not declared.
	ContentLength() int
	// Body returns the request body, either in memory or as a stream (the
	// other nil).
	Body() ([]byte, io.Reader)

	// SetHeader sets a response header.
	SetHeader(name, value string)
	// Buffer returns an empty buffer to append an answer's body to, which
	// Respond then sends without a copy.
	Buffer() []byte
	// Respond answers with the status, the Content-Type (none when "")
	// and the body, which the Exchange owns from then on.
	Respond(status int, contentType string, body []byte)
	// Stream answers 200 with a body written as it goes: an event stream
	// (Content-Type text/event-stream, not to be cached). Headers set
	// before the body's first write still go out.
	Stream() StreamBody
}

// StreamBody is the body of a streamed answer: Write buffers, Flush sends.
type StreamBody interface {
	io.Writer
	Flush() error
}

// Hertz returns c as an Exchange. It allocates nothing.
func Hertz(c *app.RequestContext) Exchange { return hertzExchange{c} }

type hertzExchange struct{ c *app.RequestContext }

func (x hertzExchange) Method() string            { return methodName(x.c.Method()) }
func (x hertzExchange) Path() string              { return string(x.c.Request.URI().PathOriginal()) }
func (x hertzExchange) RawQuery() string          { return string(x.c.Request.URI().QueryString()) }
func (x hertzExchange) Query(name string) []byte  { return x.c.QueryArgs().Peek(name) }
func (x hertzExchange) Header(name string) []byte { return x.c.Request.Header.Peek(name) }
func (x hertzExchange) Host() string              { return string(x.c.Request.Host()) }
func (x hertzExchange) RemoteAddr() net.Addr      { return x.c.RemoteAddr() }

func (x hertzExchange) TLS() *tls.ConnectionState {
	if t, ok := x.c.GetConn().(network.ConnTLSer); ok {
		st := t.ConnectionState()
		return &st
	}
	return nil
}

func (x hertzExchange) ContentLength() int {
	if n := x.c.Request.Header.ContentLength(); n >= 0 {
		return n
	}
	return -1
}

func (x hertzExchange) Body() ([]byte, io.Reader) {
	if s := x.c.RequestBodyStream(); s != nil {
		return nil, s
	}
	return x.c.Request.Body(), nil
}

func (x hertzExchange) SetHeader(name, value string) { x.c.Response.Header.Set(name, value) }

func (x hertzExchange) Buffer() []byte { return x.c.Response.BodyBuffer().B[:0] }

func (x hertzExchange) Respond(status int, contentType string, body []byte) {
	// The response's pooled buffer takes the body: for one from Buffer,
	// that is the buffer it was.
	x.c.Response.BodyBuffer().B = body
	if contentType != "" {
		x.c.Response.Header.SetContentType(contentType)
	}
	x.c.Response.SetStatusCode(status)
}

func (x hertzExchange) Stream() StreamBody {
	h := &x.c.Response.Header
	h.Set("Cache-Control", "no-cache")
	h.SetContentType("text/event-stream; charset=utf-8")
	b := &hertzStream{w: resp.NewChunkedBodyWriter(&x.c.Response, x.c.GetWriter())}
	// Hertz ends the chunked body when the handler returns.
	x.c.Response.HijackWriter(b)
	return b
}

// hertzStream is a chunked body that Hertz finalizes after the handler:
// the handler's writes and Hertz's Finalize may come from different
// goroutines, one after the other.
type hertzStream struct {
	mu sync.Mutex
	w  network.ExtWriter
}

func (b *hertzStream) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

func (b *hertzStream) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Flush()
}

func (b *hertzStream) Finalize() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Finalize()
}

// methodName returns a request method as a string, without allocating
// for the usual ones.
func methodName(m []byte) string {
	for _, name := range [...]string{"POST", "GET", "DELETE", "HEAD", "PUT", "OPTIONS", "PATCH"} {
		if string(m) == name {
			return name
		}
	}
	return string(m)
}

// NetHTTP returns the request r answered through w as an Exchange. Its
// answers are built in buffers from bufs.
func NetHTTP(w http.ResponseWriter, r *http.Request, bufs *BodyPool) Exchange {
	return &netExchange{w: w, r: r, bufs: bufs}
}

type netExchange struct {
	w     http.ResponseWriter
	r     *http.Request
	bufs  *BodyPool
	query map[string][]string // parsed on first use
}

func (x *netExchange) Method() string   { return x.r.Method }
func (x *netExchange) Path() string     { return x.r.URL.EscapedPath() }
func (x *netExchange) RawQuery() string { return x.r.URL.RawQuery }
func (x *netExchange) Host() string     { return x.r.Host }

func (x *netExchange) TLS() *tls.ConnectionState { return x.r.TLS }
func (x *netExchange) RemoteAddr() net.Addr      { return remoteAddr(x.r.RemoteAddr) }

func (x *netExchange) Query(name string) []byte {
	if x.query == nil {
		x.query = x.r.URL.Query()
	}
	if vs := x.query[name]; len(vs) > 0 {
		return []byte(vs[0])
	}
	return nil
}

func (x *netExchange) Header(name string) []byte {
	if vs := x.r.Header[http.CanonicalHeaderKey(name)]; len(vs) > 0 {
		return []byte(vs[0])
	}
	return nil
}

func (x *netExchange) ContentLength() int {
	if x.r.ContentLength < 0 || x.r.ContentLength > int64(^uint(0)>>1) {
		return -1
	}
	return int(x.r.ContentLength)
}

func (x *netExchange) Body() ([]byte, io.Reader) {
	if x.r.Body == nil || x.r.Body == http.NoBody {
		return nil, nil
	}
	return nil, x.r.Body
}

func (x *netExchange) SetHeader(name, value string) { x.w.Header().Set(name, value) }

func (x *netExchange) Buffer() []byte { return (*x.bufs.Get())[:0] }

func (x *netExchange) Respond(status int, contentType string, body []byte) {
	h := x.w.Header()
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if status != http.StatusNotModified { // whose length would be the card's
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	x.w.WriteHeader(status)
	_, _ = x.w.Write(body)   // a client that left has nothing to be told
	if cap(body) <= 64<<10 { // a big one is left to the collector
		body = body[:0]
		x.bufs.Put(&body)
	}
}

func (x *netExchange) Stream() StreamBody {
	h := x.w.Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	// The status and headers leave with the first write, as on Hertz:
	// until then the binding may add some (Retry-After).
	return netStream{x.w, http.NewResponseController(x.w)}
}

type netStream struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (s netStream) Write(p []byte) (int, error) { return s.w.Write(p) }
func (s netStream) Flush() error                { return s.rc.Flush() }

// remoteAddr is the address net/http gives a request, already a string.
type remoteAddr string

func (remoteAddr) Network() string  { return "tcp" }
func (a remoteAddr) String() string { return string(a) }
