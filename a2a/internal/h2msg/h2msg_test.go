package h2msg

import (
	"bytes"
	"testing"
)

func TestData(t *testing.T) {
	tests := []struct {
		name    string
		flags   byte
		payload []byte
		want    []byte
		ok      bool
	}{
		{"plain", 0, []byte{1, 2, 3}, []byte{1, 2, 3}, true},
		{"padded", FlagPadded, []byte{2, 1, 2, 0, 0}, []byte{1, 2}, true},
		{"all padding", FlagPadded, []byte{2, 0, 0}, []byte{}, true},
		{"padding too long", FlagPadded, []byte{3, 0, 0}, nil, false},
		{"no pad length", FlagPadded, nil, nil, false},
	}
	for _, tt := range tests {
		data, ok := Data(Header{Type: TypeData, Flags: tt.flags, Length: uint32(len(tt.payload))}, tt.payload)
		if ok != tt.ok || !bytes.Equal(data, tt.want) {
			t.Errorf("%s: %v %v, want %v %v", tt.name, data, ok, tt.want, tt.ok)
		}
	}
}

// A stream refused is skipped until it ends, whatever its data holds; a
// stream that ends is forgotten.
func TestMessagesRefused(t *testing.T) {
	m := Messages{Max: 10}
	if size, ok := m.Data(1, []byte{0, 0, 0, 0, 11, 0xff}); ok || size != 11 {
		t.Fatalf("a message of 11 bytes: %d %v, want a refusal", size, ok)
	}
	if _, ok := m.Data(1, []byte{0, 0xff, 0xff, 0xff, 0xff}); !ok {
		t.Error("the refused stream's later data was read")
	}
	if _, ok := m.Data(3, []byte{0, 0, 0, 0, 10}); !ok || m.Streams() != 2 {
		t.Errorf("another stream, at the limit: %v, %d streams remembered", ok, m.Streams())
	}
	m.End(1)
	m.End(3)
	if m.Streams() != 0 {
		t.Errorf("%d streams remembered after they ended", m.Streams())
	}
	if _, ok := m.Data(1, []byte{0, 0, 0, 0, 11}); ok {
		t.Error("a stream id used again after its end was not read afresh")
	}
}

func TestFrames(t *testing.T) {
	f := AppendRSTStream(nil, 0x80000007, CodeEnhanceYourCalm) // the reserved bit is not the stream's
	h := ParseHeader(f)
	if h != (Header{Length: 4, Type: TypeRSTStream, Stream: 7}) || !bytes.Equal(f[HeaderLen:], []byte{0, 0, 0, 0xb}) {
		t.Errorf("RST_STREAM %x reads as %+v", f, h)
	}
}
