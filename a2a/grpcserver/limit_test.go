package grpcserver

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/codes"
	"github.com/cloudwego/kitex/pkg/remote/trans/nphttp2/status"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/a2amesh/a2amesh/a2a/internal/h2msg"
	"github.com/a2amesh/a2amesh/a2a/server"
	"github.com/a2amesh/a2amesh/internal/pbwire"
	"github.com/a2amesh/a2amesh/proto/a2apb"
)

// A request message over the limit is refused with RESOURCE_EXHAUSTED, on
// a connection that goes on serving; one at the limit is served.
func TestRequestOverTheLimit(t *testing.T) {
	const limit = 2048
	cli, _ := serveWith(t, server.Config{}, Config{MaxMessageBytes: limit})
	ctx := t.Context()

	// A request of exactly the limit: its text grown until it is.
	var enc pbwire.Encoder
	at := sendReq("", nil)
	for {
		b, err := enc.Marshal(nil, at)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == limit {
			break
		}
		text := &at.Message.Parts[0].Content.(*a2apb.Part_Text).Text
		*text += strings.Repeat("x", min(limit-len(b), 100))
	}
	if _, err := cli.SendMessage(ctx, at); err != nil {
		t.Fatalf("a request of %d bytes, the limit: %v", limit, err)
	}
	at.Message.MessageId += "y" // one byte more
	_, err := cli.SendMessage(ctx, at)
	wantStatus(t, err, codes.ResourceExhausted, "")
	if st, _ := status.FromError(err); !strings.Contains(st.Message(), "request message of 2049 bytes exceeds the server's limit of 2048 bytes") {
		t.Errorf("message %q does not give the sizes", st.Message())
	}

	stream, err := cli.SendStreamingMessage(ctx, sendReq(strings.Repeat("y", 3*limit), nil))
	if err == nil {
		_, err = stream.Recv()
	}
	wantStatus(t, err, codes.ResourceExhausted, "")

	if _, err := cli.SendMessage(ctx, sendReq("still served", nil)); err != nil {
		t.Fatalf("after the refusals: %v", err)
	}
}

// h2client speaks HTTP/2 frame by frame to a gRPC server, as a hostile
// client may.
type h2client struct {
	t    *testing.T
	conn net.Conn
	fr   *http2.Framer
	dec  *hpack.Decoder
}

func dialH2(t *testing.T, addr string) *h2client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &h2client{t: t, conn: conn, fr: http2.NewFramer(conn, conn), dec: hpack.NewDecoder(4096, nil)}
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	if err := c.fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	return c
}

// call opens stream id for method with the request headers a gRPC client
// sends.
func (c *h2client) call(id uint32, method string) {
	c.t.Helper()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":path", "/lf.a2a.v1.A2AService/" + method},
		{":authority", "a2a.test"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		if err := enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]}); err != nil {
			c.t.Fatal(err)
		}
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *h2client) data(id uint32, end bool, b []byte) {
	c.t.Helper()
	if err := c.fr.WriteData(id, end, b); err != nil {
		c.t.Fatal(err)
	}
}

// answer reads frames until stream id ends and returns its headers, the
// data it carried, and the code of the RST_STREAM that followed, if one
// came before the next answer.
func (c *h2client) answer(id uint32) (fields map[string]string, data []byte) {
	c.t.Helper()
	fields = map[string]string{}
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("stream %d: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				c.fr.WriteSettingsAck()
			}
		case *http2.HeadersFrame:
			if f.StreamID != id {
				continue
			}
			hf, err := c.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				c.t.Fatalf("stream %d: headers do not decode: %v", id, err)
			}
			for _, h := range hf {
				fields[h.Name] = h.Value
			}
			if f.StreamEnded() {
				return fields, data
			}
		case *http2.DataFrame:
			if f.StreamID == id {
				data = append(data, f.Data()...)
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				c.t.Fatalf("stream %d reset (%v) before it was answered", id, f.ErrCode)
			}
		case *http2.GoAwayFrame:
			c.t.Fatalf("GOAWAY %v %q", f.ErrCode, f.DebugData())
		}
	}
}

// reset reads frames until a RST_STREAM of stream id and returns its code.
func (c *h2client) reset(id uint32) http2.ErrCode {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("stream %d: %v", id, err)
		}
		if r, ok := f.(*http2.RSTStreamFrame); ok && r.StreamID == id {
			return r.ErrCode
		}
	}
}

// prefix is a gRPC message prefix announcing n bytes.
func prefix(n uint32) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], n)
	return b
}

// A client that announces a gigabyte gets its refusal before the server
// has reserved any of it, and the connection goes on: other calls on it
// are served, and the refused call's data already in flight is taken for
// the connection's flow control.
func TestAnnouncedSizeIsNotReserved(t *testing.T) {
	_, addr := serveWith(t, server.Config{}, Config{MaxMessageBytes: 1 << 20})
	var enc pbwire.Encoder
	small, err := enc.Marshal(nil, sendReq("after the refusal", nil))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	c := dialH2(t, addr)
	tests := []struct {
		name   string
		frames func(id uint32)
	}{
		{"a gigabyte announced", func(id uint32) { c.data(id, false, append(prefix(1<<30), make([]byte, 1000)...)) }},
		{"the prefix across frames", func(id uint32) {
			p := prefix(1 << 30)
			c.data(id, false, p[:2])
			c.data(id, false, p[2:])
		}},
		{"padded", func(id uint32) {
			if err := c.fr.WriteDataPadded(id, false, prefix(1<<30), make([]byte, 200)); err != nil {
				t.Fatal(err)
			}
		}},
		{"one byte over", func(id uint32) { c.data(id, true, append(prefix(1<<20+1), make([]byte, 1<<14-5)...)) }},
	}
	id := uint32(1)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.call(id, "SendMessage")
			tt.frames(id)
			fields, _ := c.answer(id)
			if fields["grpc-status"] != "8" || fields[":status"] != "200" || fields["content-type"] != "application/grpc" ||
				!strings.Contains(fields["grpc-message"], "exceeds the server's limit of 1048576 bytes") {
				t.Errorf("trailers %q, want a trailers-only RESOURCE_EXHAUSTED", fields)
			}
			if code := c.reset(id); code != http2.ErrCodeNo {
				t.Errorf("RST_STREAM %v after the trailers, want NO_ERROR", code)
			}
			// The rest of the refused call's data, as a client that has
			// not yet read its refusal sends it: 48 KiB, most of the
			// connection's first window.
			for range 3 {
				c.data(id, false, make([]byte, 1<<14))
			}
			// Another call on the connection is answered.
			c.call(id+2, "SendMessage")
			c.data(id+2, true, append(prefix(uint32(len(small))), small...))
			if fields, data := c.answer(id + 2); fields["grpc-status"] != "0" || len(data) == 0 {
				t.Errorf("the next call: trailers %q and %d bytes, want an answer", fields, len(data))
			}
			id += 4
		})
	}
	c.t = t
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
		t.Errorf("the process allocated %d MiB while refusing", grew>>20)
	}
}

// rwConn is a net.Conn that reads src in reads of at most size bytes and
// writes to dst.
type rwConn struct {
	net.Conn
	src  []byte
	size int
	dst  bytes.Buffer
}

func (c *rwConn) Read(p []byte) (int, error) {
	if len(c.src) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.size)], c.src)
	c.src = c.src[n:]
	return n, nil
}

func (c *rwConn) Write(p []byte) (int, error) { return c.dst.Write(p) }
func (c *rwConn) RemoteAddr() net.Addr        { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

func frame(typ, flags byte, id uint32, payload []byte) []byte {
	return h2msg.AppendFrame(nil, typ, flags, id, payload)
}

// readAll reads c to its end, in reads of size bytes.
func readAll(t *testing.T, c *limitConn, size int) []byte {
	t.Helper()
	var out []byte
	p := make([]byte, size)
	for {
		n, err := c.Read(p)
		out = append(out, p[:n]...)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// firstDiff returns the index of the first byte a and b differ in.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// What Kitex reads is what the client sent, with a RST_STREAM of a
// refused call just before the DATA frame whose message is over the
// limit, however the client's bytes and Kitex's reads are cut.
func TestLimitConnReads(t *testing.T) {
	const limit = 100
	preface := []byte(http2.ClientPreface)
	settings := frame(0x4, 0, 0, nil)
	rst := h2msg.AppendRSTStream(nil, 1, h2msg.CodeCancel)
	over := append(prefix(limit+1), make([]byte, 10)...)
	// 156 messages at the limit, and the first 4 bytes of the prefix of one over it.
	largest := append(bytes.Repeat(append(prefix(limit), make([]byte, limit)...), 156), over[:4]...)
	if len(largest) != maxFrame {
		t.Fatalf("the largest frame holds %d bytes", len(largest))
	}
	tests := []struct {
		name   string
		in     [][]byte // frames
		before int      // the frame the reset comes before, -1 for none
	}{
		{"at the limit", [][]byte{preface, settings, frame(1, 4, 1, nil), frame(0, 1, 1, append(prefix(limit), make([]byte, limit)...))}, -1},
		{"over", [][]byte{preface, settings, frame(1, 4, 1, nil), frame(0, 0, 1, over), frame(0, 1, 1, make([]byte, 50))}, 3},
		{"after a message", [][]byte{preface, frame(1, 4, 1, nil), frame(0, 0, 1, append(prefix(3), 1, 2, 3)), frame(0, 0, 1, over)}, 3},
		{"a prefix across frames", [][]byte{preface, frame(1, 4, 1, nil), frame(0, 0, 1, over[:4]), frame(0, 0, 1, over[4:])}, 3},
		{"a frame of the largest size", [][]byte{preface, frame(1, 4, 1, nil), frame(0, 0, 1, largest), frame(0, 0, 1, over[4:])}, 3},
		{"a frame over the largest size goes on unread", [][]byte{preface, frame(0, 0, 1, append(prefix(1<<30), make([]byte, maxFrame)...))}, -1},
		{"headers ending the stream forget it", [][]byte{preface, frame(0, 0, 1, over[:3]), frame(1, 5, 1, nil), frame(0, 0, 1, append(prefix(1), 0))}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := bytes.Join(tt.in, nil)
			var want []byte
			for i, f := range tt.in {
				if i == tt.before {
					want = append(want, rst...)
				}
				want = append(want, f...)
			}
			for _, size := range []int{1, 7, 9, 100, 1 << 14, 1 << 16} {
				for _, rsize := range []int{1, 13, 4096, 1 << 15} {
					under := &rwConn{src: in, size: size}
					c := newLimitConn(under, limit, slog.New(slog.DiscardHandler))
					if got := readAll(t, c, rsize); !bytes.Equal(got, want) {
						t.Fatalf("client writes of %d, reads of %d: Kitex read %d bytes, want %d, from byte %d on:\n%.64x\nwant\n%.64x",
							size, rsize, len(got), len(want), firstDiff(got, want), got[firstDiff(got, want):], want[firstDiff(got, want):])
					}
					if refused := under.dst.Len() > 0; refused != (tt.before >= 0) {
						t.Fatalf("client writes of %d, reads of %d: wrote %x to the client", size, rsize, under.dst.Bytes())
					}
				}
			}
		})
	}
}

// The refusal reaches the client between two of Kitex's frames, never in
// one or in a header block, however Kitex's writes cut them; a call with
// an answer under way is reset instead.
func TestLimitConnWrites(t *testing.T) {
	block := frame(h2msg.TypeHeaders, 0, 3, []byte("abc"))                              // a header block left open
	cont := frame(h2msg.TypeContinuation, h2msg.FlagEndHeaders, 3, []byte("def"))       // and closed
	data := frame(h2msg.TypeData, 0, 3, bytes.Repeat([]byte{7}, 40))                    // a frame to cut
	answered := frame(h2msg.TypeHeaders, h2msg.FlagEndHeaders, 1, []byte("header"))     // stream 1's answer begins
	ended := frame(h2msg.TypeHeaders, h2msg.FlagEndHeaders|h2msg.FlagEndStream, 1, nil) // and ends
	tests := []struct {
		name    string
		written []byte // before the refusal
		after   []byte // after
		at      int    // where the refusal goes: the end of written, or of this many bytes of after
		reset   bool   // stream 1 is reset rather than answered
	}{
		{"between frames", data, data, 0, false},
		{"in a frame", data[:20], append(data[20:], data...), len(data) - 20, false},
		{"in a header block", append(append([]byte{}, data...), block...), append(cont, data...), len(cont), false},
		{"in a frame's header", data[:4], data[4:], len(data) - 4, false},
		{"an answer under way", answered, data, 0, true},
		{"an answer ended", append(append([]byte{}, answered...), ended...), data, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 5, 9, 1000} {
				under := &rwConn{}
				c := newLimitConn(under, 10, slog.New(slog.DiscardHandler))
				write := func(b []byte) {
					for len(b) > 0 {
						n := min(size, len(b))
						if k, err := c.Write(b[:n]); k != n || err != nil {
							t.Fatalf("Write: %d, %v", k, err)
						}
						b = b[n:]
					}
				}
				write(tt.written)
				c.refuse(1, 11)
				write(tt.after)

				var refusal []byte
				if tt.reset {
					refusal = h2msg.AppendRSTStream(nil, 1, h2msg.CodeEnhanceYourCalm)
				} else {
					refusal = appendTrailersOnly(nil, 1, 8, "request message of 11 bytes exceeds the server's limit of 10 bytes")
					refusal = h2msg.AppendRSTStream(refusal, 1, h2msg.CodeNo)
				}
				at := len(tt.written) + tt.at
				want := append(append(append([]byte{}, tt.written...), tt.after...)[:at:at], refusal...)
				want = append(want, append(append([]byte{}, tt.written...), tt.after...)[at:]...)
				if got := under.dst.Bytes(); !bytes.Equal(got, want) {
					t.Fatalf("writes of %d:\n%x\nwant\n%x", size, got, want)
				}
			}
		})
	}
}

// The trailers decode with HPACK as written, long messages and bytes
// grpc-message may not hold included.
func TestTrailersOnly(t *testing.T) {
	for _, msg := range []string{"short", strings.Repeat("long ", 100), "50% of\na limit \xff"} {
		f := appendTrailersOnly(nil, 5, 8, msg)
		h := h2msg.ParseHeader(f)
		if h.Type != h2msg.TypeHeaders || h.Flags != h2msg.FlagEndHeaders|h2msg.FlagEndStream || h.Stream != 5 || int(h.Length) != len(f)-h2msg.HeaderLen {
			t.Fatalf("header %+v", h)
		}
		dec := hpack.NewDecoder(4096, nil)
		fields, err := dec.DecodeFull(f[h2msg.HeaderLen:])
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, hf := range fields {
			if !hf.Sensitive {
				t.Errorf("%s is indexable: it would change the client's dynamic table", hf.Name)
			}
			got[hf.Name] = hf.Value
		}
		if got[":status"] != "200" || got["content-type"] != "application/grpc" || got["grpc-status"] != "8" {
			t.Errorf("fields %q", got)
		}
		if dm, err := decodeGRPCMessage(got["grpc-message"]); err != nil || dm != msg {
			t.Errorf("grpc-message %q decodes to %q (%v), want %q", got["grpc-message"], dm, err, msg)
		}
	}
}

// decodeGRPCMessage undoes grpc-message's percent-encoding.
func decodeGRPCMessage(s string) (string, error) {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("a cut escape")
		}
		var v byte
		for _, c := range []byte(s[i+1 : i+3]) {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= c - '0'
			case c >= 'A' && c <= 'F':
				v |= c - 'A' + 10
			default:
				return "", errors.New("not hex")
			}
		}
		b = append(b, v)
		i += 2
	}
	return string(b), nil
}

// FuzzLimitConn reads whatever a client sends through the check as Kitex
// reads it: never a panic; however the client's writes are cut, Kitex
// reads the same, which is what the client sent, frame for frame, but for
// a RST_STREAM (CANCEL) added just before a DATA frame of its stream, once
// for each call refused, and a last DATA frame not yet whole.
func FuzzLimitConn(f *testing.F) {
	over := append(prefix(101), make([]byte, 10)...)
	f.Add(append([]byte(http2.ClientPreface), bytes.Join([][]byte{frame(1, 4, 1, nil), frame(0, 0, 1, over), frame(0, 1, 1, []byte{1})}, nil)...))
	f.Add(append([]byte(http2.ClientPreface), bytes.Join([][]byte{frame(0, 8, 3, append([]byte{2}, append(prefix(3), 1, 2, 3, 0, 0)...)), frame(0, 0, 3, over[:2]), frame(3, 0, 3, []byte{0, 0, 0, 8}), frame(0, 0, 3, over)}, nil)...))
	f.Add(append([]byte(http2.ClientPreface), frame(0, 0, 5, append(prefix(100), make([]byte, 100)...))...))
	f.Fuzz(func(t *testing.T, in []byte) {
		read := func(size int) ([]byte, int) {
			under := &rwConn{src: in, size: size}
			c := newLimitConn(under, 100, slog.New(slog.DiscardHandler))
			var out []byte
			p := make([]byte, 4096)
			for range len(in) + 100 {
				n, err := c.Read(p)
				out = append(out, p[:n]...)
				if err != nil {
					return out, under.dst.Len()
				}
			}
			t.Fatal("reads went on past the end")
			return nil, 0
		}
		out, wrote := read(len(in) + 1)
		if cut, _ := read(7); !bytes.Equal(cut, out) {
			t.Fatalf("reads of 7 bytes gave %x, whole %x", cut, out)
		}
		if !bytes.HasPrefix(out, in[:min(len(in), clientPreface)]) {
			t.Fatalf("the preface changed: %x", out)
		}
		i, o, resets := min(len(in), clientPreface), min(len(in), clientPreface), 0
		for i < len(in) && o < len(out) {
			if len(in)-i >= h2msg.HeaderLen && len(out)-o >= h2msg.HeaderLen+4 && out[o+3] == h2msg.TypeRSTStream && in[i+3] == h2msg.TypeData {
				want := h2msg.AppendRSTStream(nil, h2msg.ParseHeader(in[i:]).Stream, h2msg.CodeCancel)
				if !bytes.Equal(out[o:o+len(want)], want) {
					t.Fatalf("at %d, %x before a DATA frame", o, out[o:o+len(want)])
				}
				o += len(want)
				resets++
				continue
			}
			n := len(in) - i
			if n >= h2msg.HeaderLen {
				n = min(n, h2msg.HeaderLen+int(h2msg.ParseHeader(in[i:]).Length))
			}
			if !bytes.HasPrefix(in[i:], out[o:min(len(out), o+n)]) {
				t.Fatalf("at %d, Kitex read %x for the client's %x", o, out[o:min(len(out), o+n)], in[i:i+n])
			}
			i += n
			o += n
		}
		if o < len(out) {
			t.Fatalf("Kitex read %d bytes more than the client sent", len(out)-o)
		}
		if held := len(in) - (i - max(0, o-len(out))); held >= h2msg.HeaderLen+maxFrame {
			t.Fatalf("%d bytes held back", held)
		}
		if (resets > 0) != (wrote > 0) {
			t.Fatalf("%d calls reset for Kitex, %d bytes written to the client", resets, wrote)
		}
	})
}
