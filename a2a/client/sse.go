package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID   string // the id field of this event; "" when it had none
	Data []byte // the data lines joined by "\n"; the reader's until its next event
}

// sseReader parses a text/event-stream body (the WHATWG event stream
// format): data lines accumulate until a blank line dispatches the event,
// comments (":" lines) are skipped, and an event larger than max bytes is
// an error rather than unbounded memory.
type sseReader struct {
	r       *bufio.Reader
	max     int
	onBytes func() // called whenever input arrives, to reset idle timers
	data    bytes.Buffer
	id      string
	hasData bool
}

var errEventTooLarge = errors.New("event larger than the client's limit")

// newSSEReader reads events from r, through r itself when it is a
// *bufio.Reader.
func newSSEReader(r io.Reader, max int, onBytes func()) *sseReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, sseBufferSize)
	}
	return &sseReader{r: br, max: max, onBytes: onBytes}
}

// sseBufferSize holds most events whole; longer lines are put together
// from several reads.
const sseBufferSize = 16 << 10

// Next returns the next event with data, or io.EOF at the end of the body.
// Events without data lines (such as a lone id) are not dispatched.
func (s *sseReader) Next() (sseEvent, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.hasData {
				// A final event without its blank line was cut off; the
				// specification discards it.
				s.reset()
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if s.hasData {
				ev := sseEvent{ID: s.id, Data: s.data.Bytes()}
				s.reset()
				return ev, nil
			}
			s.id = ""
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		switch string(field) {
		case "data":
			if s.data.Len()+len(value)+1 > s.max {
				return sseEvent{}, fmt.Errorf("read event stream: %w (%d bytes)", errEventTooLarge, s.max)
			}
			if s.hasData {
				s.data.WriteByte('\n')
			}
			s.data.Write(value)
			s.hasData = true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.id = string(value)
			}
		}
	}
}

func (s *sseReader) reset() {
	s.data.Reset()
	s.hasData = false
	s.id = ""
}

// readLine returns the next line without its line ending ("\n", "\r\n").
func (s *sseReader) readLine() ([]byte, error) {
	var long []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		if len(chunk) > 0 && s.onBytes != nil {
			s.onBytes()
		}
		switch {
		case err == nil:
			line := chunk[:len(chunk)-1]
			if long != nil {
				line = append(long, line...)
			}
			return bytes.TrimSuffix(line, []byte{'\r'}), nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(long)+len(chunk) > s.max {
				return nil, fmt.Errorf("read event stream: %w (%d bytes)", errEventTooLarge, s.max)
			}
			long = append(long, chunk...)
		case err == io.EOF && (len(chunk) > 0 || long != nil):
			// A last line without a newline is complete only if
			// followed by a blank line, which cannot come now.
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// ssePool keeps the read buffers of finished event streams
// (*bufio.Reader) for the next ones.
type ssePool struct{ p sync.Pool }

// sseStream is an EventStream over a text/event-stream response.
type sseStream struct {
	resp   *http.Response
	cancel context.CancelFunc
	br     *bufio.Reader
	r      *sseReader
	pool   *ssePool
	decode func([]byte) (a2a.Event, error)
	cut    func(error) error
	final  bool
	closed bool
}

// stream reads resp's events: decode turns one event's data into an
// event, cut wraps a read failure as a cut of the stream. cancel ends the
// request.
func (p *ssePool) stream(resp *http.Response, cancel context.CancelFunc, maxEv int, alive func(),
	decode func([]byte) (a2a.Event, error), cut func(error) error) *sseStream {
	br, _ := p.p.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(resp.Body, sseBufferSize)
	} else {
		br.Reset(resp.Body)
	}
	return &sseStream{resp: resp, cancel: cancel, br: br, r: newSSEReader(br, maxEv, alive), pool: p, decode: decode, cut: cut}
}

func (s *sseStream) Recv() (Event, error) {
	if s.final || s.closed {
		return Event{}, io.EOF
	}
	raw, err := s.r.Next()
	if err != nil {
		if errors.Is(err, errEventTooLarge) {
			return Event{}, fmt.Errorf("a2a client: %w", err)
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return Event{}, s.cut(err)
	}
	ev, err := s.decode(raw.Data)
	if err != nil {
		return Event{}, err
	}
	s.final = final(ev)
	return Event{Event: ev, ID: raw.ID}, nil
}

func (s *sseStream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.final {
		// The server ends the stream after its final event; reading up
		// to the end lets the connection be reused instead of closed.
		stop := time.AfterFunc(100*time.Millisecond, s.cancel)
		_, _ = io.CopyN(io.Discard, s.resp.Body, 64<<10) // what is left is not ours to check
		stop.Stop()
	}
	s.cancel()
	err := s.resp.Body.Close()
	s.br.Reset(nil)
	s.pool.p.Put(s.br)
	return err
}
