// Package h2msg follows gRPC messages through the HTTP/2 frames one peer
// of a connection sends (RFC 9113 §4.1; gRPC's length-prefixed messages),
// far enough to know the length each message announces before Kitex reads
// it. Kitex v0.16.1 allocates whatever a message's 5-byte prefix
// announces, up to 4 GiB, before a byte of the message arrives, and has
// no option that bounds it: the gRPC client (a2a/grpcclient) and server
// (a2a/grpcserver) check what their peer sends with this package first.
package h2msg

import "encoding/binary"

// HTTP/2 frame types and flags (RFC 9113 §6) the checks need.
const (
	TypeData         = 0x0
	TypeHeaders      = 0x1
	TypeRSTStream    = 0x3
	TypePushPromise  = 0x5
	TypeContinuation = 0x9

	FlagEndStream  = 0x1
	FlagEndHeaders = 0x4
	FlagPadded     = 0x8
)

// HeaderLen is the length of a frame header.
const HeaderLen = 9

// Header is a frame's header.
type Header struct {
	Length uint32 // of the payload, 24 bits
	Type   byte
	Flags  byte
	Stream uint32 // 31 bits
}

// ParseHeader reads the header at the start of b, which holds at least
// HeaderLen bytes.
func ParseHeader(b []byte) Header {
	_ = b[HeaderLen-1]
	return Header{
		Length: uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]),
		Type:   b[3],
		Flags:  b[4],
		Stream: binary.BigEndian.Uint32(b[5:9]) & 0x7fffffff,
	}
}

// AppendFrame appends a frame of the given type, flags and stream holding
// payload, which is shorter than 1<<24 bytes.
func AppendFrame(b []byte, typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	b = binary.BigEndian.AppendUint32(b, stream&0x7fffffff)
	return append(b, payload...)
}

// HTTP/2 error codes (RFC 9113 §7) of the RST_STREAM frames a check sends.
const (
	CodeNo              = 0x0
	CodeCancel          = 0x8
	CodeEnhanceYourCalm = 0xb // gRPC clients read it as RESOURCE_EXHAUSTED
)

// AppendRSTStream appends a RST_STREAM frame resetting stream with code.
func AppendRSTStream(b []byte, stream, code uint32) []byte {
	var p [4]byte
	binary.BigEndian.PutUint32(p[:], code)
	return AppendFrame(b, TypeRSTStream, 0, stream, p[:])
}

// Data returns the data of a DATA frame's payload: without the pad length
// and the padding when the frame is padded. ok is false when the padding
// is longer than the payload, which a peer must treat as a connection
// error (RFC 9113 §6.1).
func Data(h Header, payload []byte) (data []byte, ok bool) {
	if h.Flags&FlagPadded == 0 {
		return payload, true
	}
	if len(payload) == 0 || int(payload[0]) >= len(payload) {
		return nil, false
	}
	return payload[1 : len(payload)-int(payload[0])], true
}

// Messages follows the messages of each stream of one direction: a 5-byte
// prefix (a compressed flag, then the body's length, big-endian) and the
// body, back to back across the stream's DATA frames. It keeps no
// payload, and remembers a stream only while a message of it is partly
// read or after it was refused. The zero value refuses any non-empty
// message; set Max.
type Messages struct {
	Max  uint32
	msgs map[uint32]*message
}

// message is where a stream is in its current message.
type message struct {
	prefix  [5]byte
	n       int    // prefix bytes read
	body    uint32 // body bytes still to come
	refused bool   // a message over Max was met: the rest is skipped
}

// Data reads the next data bytes of stream. It returns ok false, with the
// size the message announced, when a message over Max begins in b; the
// rest of that stream's data is then skipped until End.
func (m *Messages) Data(stream uint32, b []byte) (size uint32, ok bool) {
	// Most frames hold whole messages: a stream's state is kept on the
	// heap only when a message goes on into the next frame.
	var cur message
	kept := m.msgs[stream]
	if kept != nil {
		if kept.refused {
			return 0, true
		}
		cur = *kept
	}
	ok = true
	for len(b) > 0 {
		if cur.body > 0 {
			k := min(int(cur.body), len(b))
			cur.body -= uint32(k)
			b = b[k:]
			continue
		}
		k := copy(cur.prefix[cur.n:], b)
		cur.n += k
		b = b[k:]
		if cur.n == len(cur.prefix) {
			cur.n = 0
			cur.body = binary.BigEndian.Uint32(cur.prefix[1:])
			if cur.body > m.Max {
				size, ok = cur.body, false
				cur = message{refused: true}
				break
			}
		}
	}
	// Only a stream in the middle of a message, or refused, needs
	// remembering.
	switch {
	case cur.n == 0 && cur.body == 0 && !cur.refused:
		if kept != nil {
			delete(m.msgs, stream)
		}
	case kept != nil:
		*kept = cur
	default:
		if m.msgs == nil {
			m.msgs = map[uint32]*message{}
		}
		p := new(message)
		*p = cur
		m.msgs[stream] = p
	}
	return size, ok
}

// End forgets stream, which ended or was reset.
func (m *Messages) End(stream uint32) {
	delete(m.msgs, stream)
}

// Streams reports how many streams are remembered.
func (m *Messages) Streams() int { return len(m.msgs) }
