package grpcclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
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
	return &limitConn{Conn: c, scan: frameScanner{max: uint32(d.maxMsg)}, refused: d.refused}, nil
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
// far enough to read the length prefix of every gRPC message in the DATA
// frames of each stream. It keeps no payload.
type frameScanner struct {
	max  uint32
	hdr  [9]byte
	hdrN int // header bytes read of the current frame

	left   int    // payload bytes of the current frame still to come
	sid    uint32 // the current frame's stream
	data   bool   // the current frame is a DATA frame
	padded bool   // ... whose pad length byte is still to come
	pad    int    // ... with this many bytes of padding at its end
	end    bool   // ... that ends its stream

	// msgs holds the streams whose current message is partly read.
	msgs map[uint32]*message
}

// message is where a stream is in its current gRPC message: the 5-byte
// prefix (compressed flag, big-endian length), then the body.
type message struct {
	prefix [5]byte
	n      int    // prefix bytes read
	body   uint32 // body bytes still to come
}

// HTTP/2 frame types and flags the scanner needs.
const (
	frameData      = 0x0
	frameRSTStream = 0x3
	flagEndStream  = 0x1
	flagPadded     = 0x8
)

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
			if err := s.body(b[:k]); err != nil {
				return err
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
	h := s.hdr
	s.left = int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	s.sid = binary.BigEndian.Uint32(h[5:9]) & 0x7fffffff
	s.data = h[3] == frameData
	s.padded = s.data && h[4]&flagPadded != 0
	s.pad = 0
	s.end = s.data && h[4]&flagEndStream != 0
	if h[3] == frameRSTStream {
		delete(s.msgs, s.sid)
	}
	if s.left == 0 {
		s.endFrame()
	}
}

func (s *frameScanner) endFrame() {
	s.hdrN = 0
	if s.end {
		delete(s.msgs, s.sid)
	}
}

// body reads data bytes of the current frame's stream.
func (s *frameScanner) body(b []byte) error {
	// Most frames hold whole messages: the stream's state is kept on
	// the heap only when a message goes on into the next frame.
	var m message
	kept := s.msgs[s.sid]
	if kept != nil {
		m = *kept
	}
	for len(b) > 0 {
		if m.body > 0 {
			k := min(int(m.body), len(b))
			m.body -= uint32(k)
			b = b[k:]
			continue
		}
		k := copy(m.prefix[m.n:], b)
		m.n += k
		b = b[k:]
		if m.n == len(m.prefix) {
			m.n = 0
			m.body = binary.BigEndian.Uint32(m.prefix[1:])
			if m.body > s.max {
				return fmt.Errorf("a2a grpcclient: the server sent a message of %d bytes: %w of %d bytes (client.Config.MaxEventBytes)", m.body, errMessageTooLarge, s.max)
			}
		}
	}
	// Only a stream in the middle of a message needs remembering.
	switch {
	case m.n == 0 && m.body == 0:
		if kept != nil {
			delete(s.msgs, s.sid)
		}
	case kept != nil:
		*kept = m
	default:
		if s.msgs == nil {
			s.msgs = map[uint32]*message{}
		}
		p := new(message)
		*p = m
		s.msgs[s.sid] = p
	}
	return nil
}
