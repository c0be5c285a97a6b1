package grpcclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/a2amesh/a2amesh/a2a/internal/h2msg"
)

// dialer is the Kitex dialer of a Transport: it dials through the
// Client's dial function (the SSRF guard's, when it has one) and bounds the
// messages each connection reads.
type dialer struct {
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	maxMsg int
	// refused is the error of the last connection that failed for a
	// message over the limit, until a connection is dialed: the streams
	// of that connection fail with Kitex's "transport is closing" alone.
	refused *atomic.Pointer[error]
}

// DialTimeout implements Kitex's remote.Dialer.
func (d dialer) DialTimeout(network, address string, timeout time.Duration) (net.Conn, error) {
	// Kitex dials on behalf of every call that needs a connection, with
	// no call's context: the timeout is the bound.
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := d.dial(ctx, network, address)
	if err != nil {
		return nil, err
	}
	d.refused.Store(nil)
	return &limitConn{Conn: c, scan: frameScanner{msgs: h2msg.Messages{Max: uint32(d.maxMsg)}}, refused: d.refused}, nil
}

// errMessageTooLarge matches the error of a connection that received a
// message larger than the client's limit.
var errMessageTooLarge = errors.New("message larger than the client's limit")

// limitConn is a client connection whose reads are checked against the
// size limit of one gRPC message: Kitex has no such limit, and allocates
// what a message's length prefix announces before it reads the message.
// A message over the limit fails the connection, before Kitex sees its
// prefix: the HTTP/2 streams of a connection share its flow control, so
// the one stream cannot be dropped alone.
type limitConn struct {
	net.Conn
	scan    frameScanner
	err     error // sticky: the connection is unusable after a refusal
	refused *atomic.Pointer[error]
}

func (c *limitConn) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.Conn.Read(p)
	if serr := c.scan.scan(p[:n]); serr != nil {
		c.err = serr
		c.refused.Store(&serr)
		return 0, serr
	}
	return n, err
}

// frameScanner follows the HTTP/2 frames a server sends (RFC 9113 §4.1)
// however the reads cut them, far enough to give the data of each DATA
// frame to the check of its stream's messages. It keeps no payload.
type frameScanner struct {
	hdr  [h2msg.HeaderLen]byte
	hdrN int // header bytes read of the current frame

	left   int    // payload bytes of the current frame still to come
	sid    uint32 // the current frame's stream
	data   bool   // the current frame is a DATA frame
	padded bool   // ... whose pad length byte is still to come
	pad    int    // ... with this many bytes of padding at its end
	end    bool   // ... that ends its stream

	msgs h2msg.Messages
}

func (s *frameScanner) scan(b []byte) error {
	for len(b) > 0 {
		if s.hdrN < len(s.hdr) {
			k := copy(s.hdr[s.hdrN:], b)
			s.hdrN += k
			b = b[k:]
			if s.hdrN == len(s.hdr) {
				s.beginFrame()
			}
			continue
		}
		switch {
		case !s.data:
			k := min(s.left, len(b))
			s.left -= k
			b = b[k:]
		case s.padded:
			s.pad = int(b[0])
			s.padded = false
			s.left--
			b = b[1:]
		case s.left > s.pad:
			k := min(s.left-s.pad, len(b))
			if size, ok := s.msgs.Data(s.sid, b[:k]); !ok {
				return fmt.Errorf("a2a grpcclient: the server sent a message of %d bytes: %w of %d bytes (client.Config.MaxEventBytes)", size, errMessageTooLarge, s.msgs.Max)
			}
			s.left -= k
			b = b[k:]
		default: // padding
			k := min(s.left, len(b))
			s.left -= k
			b = b[k:]
		}
		if s.left == 0 {
			s.endFrame()
		}
	}
	return nil
}

func (s *frameScanner) beginFrame() {
	h := h2msg.ParseHeader(s.hdr[:])
	s.left = int(h.Length)
	s.sid = h.Stream
	s.data = h.Type == h2msg.TypeData
	s.padded = s.data && h.Flags&h2msg.FlagPadded != 0
	s.pad = 0
	s.end = s.data && h.Flags&h2msg.FlagEndStream != 0
	if h.Type == h2msg.TypeRSTStream {
		s.msgs.End(s.sid)
	}
	if s.left == 0 {
		s.endFrame()
	}
}

func (s *frameScanner) endFrame() {
	s.hdrN = 0
	if s.end {
		s.msgs.End(s.sid)
	}
}
