package grpcclient

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/a2amesh/a2amesh/a2a/internal/h2msg"
)

// frame encodes an HTTP/2 frame.
func frame(typ, flags byte, sid uint32, payload []byte) []byte {
	return h2msg.AppendFrame(nil, typ, flags, sid, payload)
}

// msg encodes a gRPC message of n body bytes.
func msg(n int) []byte {
	b := make([]byte, 5+n)
	binary.BigEndian.PutUint32(b[1:], uint32(n))
	for i := range n {
		b[5+i] = 0xff // would read as a huge length if taken for a prefix
	}
	return b
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

// padded is a DATA frame's payload with a pad length and padding of 0xff.
func padded(data []byte, pad int) []byte {
	out := append([]byte{byte(pad)}, data...)
	for range pad {
		out = append(out, 0xff)
	}
	return out
}

// The scanner finds every message's length in the DATA frames of each
// stream, however the bytes are cut into reads, and refuses the first one
// over the limit, and only that.
func TestFrameScanner(t *testing.T) {
	const max = 100
	two := cat(msg(40), msg(100))
	tests := []struct {
		name   string
		stream []byte
		refuse bool
	}{
		{"at the limit", frame(h2msg.TypeData, h2msg.FlagEndStream, 1, msg(max)), false},
		{"over the limit", frame(h2msg.TypeData, 0, 1, msg(max+1)), true},
		{"empty messages", frame(h2msg.TypeData, h2msg.FlagEndStream, 1, cat(msg(0), msg(0), msg(3))), false},
		{"a message over frames", cat(frame(h2msg.TypeData, 0, 1, msg(90)[:3]), frame(h2msg.TypeData, 0, 1, msg(90)[3:50]), frame(h2msg.TypeData, h2msg.FlagEndStream, 1, msg(90)[50:])), false},
		{"a prefix over frames", cat(frame(h2msg.TypeData, 0, 1, msg(101)[:2]), frame(h2msg.TypeData, 0, 1, msg(101)[2:])), true},
		{"padding is not data", frame(h2msg.TypeData, h2msg.FlagPadded|h2msg.FlagEndStream, 1, padded(msg(10), 20)), false},
		{"padded, over the limit", frame(h2msg.TypeData, h2msg.FlagPadded, 1, padded(msg(200), 3)), true},
		{"other frames are skipped", cat(frame(0x1, 0x4, 1, msg(5000)), frame(0x4, 0, 0, make([]byte, 12)), frame(0x6, 0, 0, msg(3)), frame(h2msg.TypeData, 0, 1, msg(1))), false},
		{"streams apart", cat(
			frame(h2msg.TypeData, 0, 1, two[:44]), frame(h2msg.TypeData, 0, 3, msg(100)[:4]),
			frame(h2msg.TypeData, 0, 1, two[44:]), frame(h2msg.TypeData, h2msg.FlagEndStream, 3, msg(100)[4:]),
		), false},
		{"the second stream over", cat(frame(h2msg.TypeData, 0, 1, msg(100)[:50]), frame(h2msg.TypeData, 0, 3, msg(101)), frame(h2msg.TypeData, 0, 1, msg(100)[50:])), true},
		{"a reset forgets", cat(frame(h2msg.TypeData, 0, 1, msg(101)[:3]), frame(h2msg.TypeRSTStream, 0, 1, []byte{0, 0, 0, 8}), frame(h2msg.TypeData, 0, 3, msg(1))), false},
		{"an empty frame", cat(frame(h2msg.TypeData, 0, 1, nil), frame(h2msg.TypeData, h2msg.FlagEndStream, 1, msg(1))), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 2, 3, 5, 9, 64, len(tt.stream)} {
				s := frameScanner{msgs: h2msg.Messages{Max: max}}
				var err error
				for b := tt.stream; len(b) > 0 && err == nil; {
					n := min(size, len(b))
					err = s.scan(b[:n])
					b = b[n:]
				}
				if got := errors.Is(err, errMessageTooLarge); got != tt.refuse {
					t.Fatalf("reads of %d bytes: error %v, want a refusal: %v", size, err, tt.refuse)
				}
				if !tt.refuse && s.msgs.Streams() != 0 {
					t.Errorf("reads of %d bytes: %d streams remembered after their messages ended", size, s.msgs.Streams())
				}
			}
		})
	}
}
