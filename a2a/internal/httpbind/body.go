package httpbind

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
)

// BodyPool recycles request body buffers. The zero value is ready.
type BodyPool struct{ p sync.Pool }

// Get returns a buffer for ReadBody; Put it back when the body is no
// longer used.
func (p *BodyPool) Get() *[]byte {
	if b, ok := p.p.Get().(*[]byte); ok {
		return b
	}
	b := make([]byte, 0, 4096)
	return &b
}

// Put returns a buffer to the pool.
func (p *BodyPool) Put(b *[]byte) { p.p.Put(b) }

// ReadBody reads the request body into *bufp, up to limit bytes. A body
// over the limit is drained a little further (a bounded amount), so that
// the connection stops at a message boundary where it can and the 413
// reaches the client.
func ReadBody(x Exchange, bufp *[]byte, limit int, log *slog.Logger) (body []byte, tooBig bool) {
	if n := x.ContentLength(); n > limit {
		return nil, true
	}
	b, stream := x.Body()
	if stream == nil {
		return b, len(b) > limit
	}
	buf := bytes.NewBuffer((*bufp)[:0])
	_, err := buf.ReadFrom(io.LimitReader(stream, int64(limit)+1))
	*bufp = buf.Bytes()
	if err != nil {
		log.Debug("a2a: reading a request body failed", "err", err)
	}
	if buf.Len() > limit {
		// Best effort: a client still sending when the connection closes
		// loses the reply. The connection closes afterwards anyway.
		_, _ = io.CopyN(io.Discard, stream, max(4*int64(limit), 8<<20))
		return nil, true
	}
	return buf.Bytes(), false
}
