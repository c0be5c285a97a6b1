package grpcserver

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/a2amesh/a2amesh/a2a/internal/h2msg"
)

// maxFrame is the largest frame Kitex reads: the SETTINGS_MAX_FRAME_SIZE it
// announces (http2MaxFrameLen), its framer refusing any larger one as a
// connection error.
const maxFrame = 16384

// clientPreface is the length of what an HTTP/2 client sends before its
// first frame (RFC 9113 §3.4).
const clientPreface = 24

// limitConn is a server connection whose incoming requests are held to
// the size limit of one gRPC message: Kitex allocates what a message's
// length prefix announces before it reads the message (h2msg says more).
// Its reads hand Kitex each DATA frame whole, once the frame is checked;
// a frame beginning a message over the limit is preceded by a RST_STREAM
// of its stream, so that Kitex drops the call before it meets the prefix,
// and reads the frame (and any later one of the stream) for the
// connection's flow control alone. The client is told on the writing
// side, between two of Kitex's frames: a call that has no answer yet gets
// a trailers-only answer, RESOURCE_EXHAUSTED with the sizes, and a
// RST_STREAM (NO_ERROR) that stops it sending the rest, as a gRPC server
// does (grpc-go's finishStream); one that already has its answer's
// headers gets a RST_STREAM (ENHANCE_YOUR_CALM), which gRPC clients read
// as RESOURCE_EXHAUSTED. The connection and its other calls go on.
type limitConn struct {
	net.Conn
	log *slog.Logger

	// Reading, on Kitex's reading goroutine alone.
	msgs   h2msg.Messages
	buf    []byte // read from the client: buf[r:ready] is Kitex's, buf[ready:w] not checked yet
	r      int
	ready  int
	w      int
	pass   int    // bytes after ready that go to Kitex unchecked: the preface, a frame's payload
	reset  []byte // a RST_STREAM Kitex reads at ready, before the frame there
	resetB [h2msg.HeaderLen + 4]byte
	rerr   error

	// Writing: Kitex's writing goroutine and the reader's refusals.
	wmu     sync.Mutex
	out     frameFollower
	pending []byte // frames of ours waiting for the end of Kitex's current frame
	werr    error  // a refusal's write failed: the connection is broken
}

func newLimitConn(c net.Conn, limit uint32, log *slog.Logger) *limitConn {
	return &limitConn{Conn: c, log: log, msgs: h2msg.Messages{Max: limit}, pass: clientPreface,
		buf: make([]byte, 2*(h2msg.HeaderLen+maxFrame))}
}

// Read implements net.Conn for Kitex's reader.
func (c *limitConn) Read(p []byte) (int, error) {
	for {
		switch {
		case c.r < c.ready:
			n := copy(p, c.buf[c.r:c.ready])
			c.r += n
			return n, nil
		case len(c.reset) > 0:
			n := copy(p, c.reset)
			c.reset = c.reset[n:]
			return n, nil
		}
		for len(c.reset) == 0 && c.check() {
		}
		if c.r < c.ready || len(c.reset) > 0 {
			continue
		}
		if c.rerr != nil {
			return 0, c.rerr
		}
		// A DATA frame is checked whole: make room for the largest
		// after the part of one already read.
		if c.r > 0 && len(c.buf)-c.w < h2msg.HeaderLen+maxFrame {
			c.w = copy(c.buf, c.buf[c.r:c.w])
			c.ready -= c.r
			c.r = 0
		}
		n, err := c.Conn.Read(c.buf[c.w:])
		c.w += n
		if err != nil {
			c.rerr = err
		}
	}
}

// check moves ready over the next bytes read, frame by frame, as far as
// they can go to Kitex; it reports whether it moved or set reset.
func (c *limitConn) check() bool {
	avail := c.w - c.ready
	if c.pass > 0 {
		k := min(c.pass, avail)
		c.pass -= k
		c.ready += k
		return k > 0
	}
	if avail < h2msg.HeaderLen {
		return false
	}
	h := h2msg.ParseHeader(c.buf[c.ready:])
	if h.Type != h2msg.TypeData || h.Length > maxFrame {
		// Other frames carry no message; a DATA frame over the limit
		// ends the connection when Kitex reads its header.
		if h.Type == h2msg.TypeRSTStream || h.Type == h2msg.TypeHeaders && h.Flags&h2msg.FlagEndStream != 0 {
			c.msgs.End(h.Stream)
		}
		c.ready += h2msg.HeaderLen
		c.pass = int(h.Length)
		return true
	}
	end := h2msg.HeaderLen + int(h.Length)
	if avail < end {
		return false
	}
	if data, ok := h2msg.Data(h, c.buf[c.ready+h2msg.HeaderLen:c.ready+end]); ok {
		if size, ok := c.msgs.Data(h.Stream, data); !ok {
			c.reset = h2msg.AppendRSTStream(c.resetB[:0], h.Stream, h2msg.CodeCancel)
			c.refuse(h.Stream, size)
		}
	}
	if h.Flags&h2msg.FlagEndStream != 0 {
		c.msgs.End(h.Stream)
	}
	if len(c.reset) > 0 {
		// Kitex reads the reset first; the frame follows as is.
		c.pass = end
		return false
	}
	c.ready += end
	return true
}

// refuse tells the client that stream's request message of size bytes is
// over the limit.
func (c *limitConn) refuse(stream, size uint32) {
	c.log.Warn("a2a grpcserver: a request message over the limit refused",
		"remote", c.RemoteAddr(), "stream", stream, "bytes", size, "limit", c.msgs.Max)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var frames []byte
	if c.out.answering(stream) {
		frames = h2msg.AppendRSTStream(nil, stream, h2msg.CodeEnhanceYourCalm)
	} else {
		msg := fmt.Sprintf("request message of %d bytes exceeds the server's limit of %d bytes", size, c.msgs.Max)
		frames = appendTrailersOnly(nil, stream, 8 /* RESOURCE_EXHAUSTED */, msg)
		frames = h2msg.AppendRSTStream(frames, stream, h2msg.CodeNo)
	}
	c.pending = append(c.pending, frames...)
	if c.out.between() {
		c.flushPending()
	}
}

// flushPending writes the frames of ours waiting; the caller holds wmu
// and Kitex is between two frames.
func (c *limitConn) flushPending() {
	if c.werr == nil {
		_, c.werr = c.Conn.Write(c.pending)
	}
	c.pending = c.pending[:0]
}

// Write implements net.Conn for Kitex's writer. Frames of ours waiting go
// out at the first end of one of Kitex's frames outside a header block.
func (c *limitConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return 0, c.werr
	}
	n := 0
	for len(c.pending) > 0 && len(p) > 0 {
		k := c.out.follow(p, true)
		m, err := c.Conn.Write(p[:k])
		n += m
		if err != nil {
			return n, err
		}
		p = p[k:]
		if c.out.between() {
			c.flushPending()
			if c.werr != nil {
				return n, c.werr
			}
		}
	}
	if len(p) == 0 {
		return n, nil
	}
	c.out.follow(p, false)
	m, err := c.Conn.Write(p)
	return n + m, err
}

// frameFollower follows the frames Kitex writes, however its writes cut
// them, to know where one ends and which calls have their answer's
// headers out.
type frameFollower struct {
	hdr   [h2msg.HeaderLen]byte
	hdrN  int
	left  int  // payload bytes of the current frame still to come
	block bool // a header block is open: no frame of another may come between its frames
	// answered holds the streams whose answer began and did not end.
	answered map[uint32]struct{}
}

// between reports whether the writer is between two frames, outside a
// header block.
func (f *frameFollower) between() bool {
	return f.hdrN == 0 && f.left == 0 && !f.block
}

func (f *frameFollower) answering(stream uint32) bool {
	_, ok := f.answered[stream]
	return ok
}

// follow reads the bytes of p; with stop, it stops after the first frame
// that ends outside a header block, and returns how many bytes it read.
func (f *frameFollower) follow(p []byte, stop bool) int {
	n := 0
	for n < len(p) {
		if f.hdrN < len(f.hdr) {
			k := copy(f.hdr[f.hdrN:], p[n:])
			f.hdrN += k
			n += k
			if f.hdrN < len(f.hdr) {
				return n
			}
			f.begin(h2msg.ParseHeader(f.hdr[:]))
		} else {
			k := min(f.left, len(p)-n)
			f.left -= k
			n += k
		}
		if f.left == 0 {
			f.hdrN = 0
			if stop && !f.block {
				return n
			}
		}
	}
	return n
}

func (f *frameFollower) begin(h h2msg.Header) {
	f.left = int(h.Length)
	switch h.Type {
	case h2msg.TypeHeaders, h2msg.TypePushPromise, h2msg.TypeContinuation:
		f.block = h.Flags&h2msg.FlagEndHeaders == 0
	}
	switch {
	case h.Type == h2msg.TypeRSTStream, h.Flags&h2msg.FlagEndStream != 0 && (h.Type == h2msg.TypeHeaders || h.Type == h2msg.TypeData):
		delete(f.answered, h.Stream)
	case h.Type == h2msg.TypeHeaders:
		if f.answered == nil {
			f.answered = map[uint32]struct{}{}
		}
		f.answered[h.Stream] = struct{}{}
	}
}

// appendTrailersOnly appends a gRPC trailers-only answer on stream: one
// HEADERS frame ending the stream, its fields HPACK literals never
// indexed with literal names (RFC 7541 §6.2.3), which leave the dynamic
// tables of Kitex's encoder and of the client's decoder as they were.
func appendTrailersOnly(b []byte, stream uint32, code int, msg string) []byte {
	var block []byte
	for _, f := range [...][2]string{
		{":status", "200"},
		{"content-type", "application/grpc"},
		{"grpc-status", strconv.Itoa(code)},
		{"grpc-message", grpcMessage(msg)},
	} {
		block = append(block, 0x10)
		block = appendHPACKString(block, f[0])
		block = appendHPACKString(block, f[1])
	}
	return h2msg.AppendFrame(b, h2msg.TypeHeaders, h2msg.FlagEndHeaders|h2msg.FlagEndStream, stream, block)
}

// appendHPACKString appends s as a string literal without Huffman coding:
// its length as an integer of a 7-bit prefix (RFC 7541 §5.1, §5.2).
func appendHPACKString(b []byte, s string) []byte {
	n := len(s)
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n&0x7f|0x80))
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// grpcMessage percent-encodes what gRPC's grpc-message may not hold as
// is: bytes outside printable ASCII, and '%'.
func grpcMessage(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '%' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', "0123456789ABCDEF"[c>>4], "0123456789ABCDEF"[c&0xf])
	}
	return string(b)
}
