package schema

import (
	"errors"
	"io"
	"sync"
)

// StreamReader yields the items of a stream in order. Recv returns io.EOF
// after the last item, or the error the stream ended with. A reader is used
// by one goroutine at a time; Close may be called from any goroutine, more
// than once, and tells the writer to stop.
//
// Streams never block their writer: items wait in the stream until they
// are read, so a reader that stops reading cannot leave a producer stuck.
type StreamReader[T any] struct {
	pipe  *pipe[T]
	items []T // a stream from a slice
	pos   int
	tape  *tape[T] // a copy of another stream
	err   error    // a stream that only fails
}

// StreamWriter feeds a stream made by Pipe.
type StreamWriter[T any] struct{ pipe *pipe[T] }

// ErrStreamClosed is what Recv returns on a reader that was closed.
var ErrStreamClosed = errors.New("schema: stream closed")

type pipe[T any] struct {
	mu     sync.Mutex
	queue  []T
	head   int
	done   bool  // the writer closed or failed
	err    error // what ends the stream after the queue: io.EOF or a failure
	closed bool  // the reader closed
	wake   chan struct{}
	// onClose runs when the reader closes, so a writer blocked elsewhere
	// (waiting on a network read) can be stopped.
	onClose func()
}

// Pipe returns a connected reader and writer.
func Pipe[T any]() (*StreamReader[T], *StreamWriter[T]) {
	p := &pipe[T]{}
	return &StreamReader[T]{pipe: p}, &StreamWriter[T]{pipe: p}
}

// Send adds an item. It reports whether the reader closed the stream, in
// which case the writer should stop.
func (w *StreamWriter[T]) Send(v T) (readerClosed bool) {
	p := w.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.done {
		return p.closed
	}
	p.queue = append(p.queue, v)
	p.signal()
	return false
}

// OnReaderClose makes the reader's Close call f (at once if the reader is
// already closed). A writer that waits on something else between sends
// uses it to stop waiting.
func (w *StreamWriter[T]) OnReaderClose(f func()) {
	p := w.pipe
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.onClose = f
	}
	p.mu.Unlock()
	if closed {
		f()
	}
}

// Fail ends the stream with err after the items already sent.
func (w *StreamWriter[T]) Fail(err error) { w.end(err) }

// Close ends the stream after the items already sent.
func (w *StreamWriter[T]) Close() { w.end(io.EOF) }

func (w *StreamWriter[T]) end(err error) {
	p := w.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.done {
		p.done, p.err = true, err
		p.signal()
	}
}

func (p *pipe[T]) signal() {
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
}

func (p *pipe[T]) recv() (T, error) {
	var zero T
	p.mu.Lock()
	for {
		switch {
		case p.closed:
			p.mu.Unlock()
			return zero, ErrStreamClosed
		case p.head < len(p.queue):
			v := p.queue[p.head]
			p.queue[p.head] = zero
			p.head++
			if p.head == len(p.queue) {
				p.queue, p.head = p.queue[:0], 0
			}
			p.mu.Unlock()
			return v, nil
		case p.done:
			p.mu.Unlock()
			return zero, p.err
		}
		if p.wake == nil {
			p.wake = make(chan struct{})
		}
		wake := p.wake
		p.mu.Unlock()
		<-wake
		p.mu.Lock()
	}
}

func (p *pipe[T]) close() {
	p.mu.Lock()
	first := !p.closed
	p.closed = true
	p.queue, p.head = nil, 0
	p.signal()
	onClose := p.onClose
	p.mu.Unlock()
	if first && onClose != nil {
		onClose()
	}
}

// FromSlice returns a stream of the items.
func FromSlice[T any](items []T) *StreamReader[T] { return &StreamReader[T]{items: items} }

// FailedStream returns a stream that ends with err at once.
func FailedStream[T any](err error) *StreamReader[T] { return &StreamReader[T]{err: err} }

// Recv returns the next item, or io.EOF at the end, or the stream's error.
func (r *StreamReader[T]) Recv() (T, error) {
	switch {
	case r.pipe != nil:
		return r.pipe.recv()
	case r.tape != nil:
		return r.tape.recv(r)
	case r.err != nil:
		var zero T
		return zero, r.err
	}
	if r.pos < len(r.items) {
		r.pos++
		return r.items[r.pos-1], nil
	}
	var zero T
	return zero, io.EOF
}

// Close releases the stream; the writer is told to stop. Closing the last
// open copy of a stream closes the stream it copies.
func (r *StreamReader[T]) Close() {
	switch {
	case r.pipe != nil:
		r.pipe.close()
	case r.tape != nil:
		r.tape.closeReader(r)
	default:
		r.pos = len(r.items)
	}
}

// Copy returns n readers that each yield every item of r; r must not be
// used afterwards. Items are read from r once, as the first copy needs
// them, and kept until every copy has them or is closed. n must be
// positive.
func (r *StreamReader[T]) Copy(n int) []*StreamReader[T] {
	if n < 1 {
		panic("schema: Copy of a stream into fewer than one reader")
	}
	if r.tape != nil {
		return r.tape.split(r, n)
	}
	t := &tape[T]{src: r, open: n, pos: make(map[*StreamReader[T]]int, n)}
	t.cond = sync.NewCond(&t.mu)
	out := make([]*StreamReader[T], n)
	for i := range out {
		out[i] = &StreamReader[T]{tape: t}
		t.pos[out[i]] = 0
	}
	return out
}

// tape is the shared buffer behind copies of a stream.
type tape[T any] struct {
	mu       sync.Mutex
	cond     *sync.Cond
	src      *StreamReader[T]
	items    []T
	base     int // index in the stream of items[0]
	end      error
	fetching bool
	open     int
	pos      map[*StreamReader[T]]int // next stream index per open copy
}

// split replaces copy r by n copies at its position, so copying a copy
// costs no second tape.
func (t *tape[T]) split(r *StreamReader[T], n int) []*StreamReader[T] {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]*StreamReader[T], n)
	pos, open := t.pos[r]
	for i := range out {
		out[i] = &StreamReader[T]{tape: t}
		if open {
			t.pos[out[i]] = pos // copies of a closed copy stay closed
		}
	}
	if open {
		delete(t.pos, r)
		t.open += n - 1
	}
	return out
}

func (t *tape[T]) recv(r *StreamReader[T]) (T, error) {
	var zero T
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		pos, ok := t.pos[r]
		switch {
		case !ok:
			return zero, ErrStreamClosed
		case pos < t.base+len(t.items):
			v := t.items[pos-t.base]
			t.pos[r] = pos + 1
			t.trim()
			return v, nil
		case t.end != nil:
			return zero, t.end
		case !t.fetching:
			t.fetching = true
			t.mu.Unlock()
			v, err := t.src.Recv()
			t.mu.Lock()
			t.fetching = false
			if err != nil {
				t.end = err
			} else {
				t.items = append(t.items, v)
			}
			t.cond.Broadcast()
		default:
			t.cond.Wait()
		}
	}
}

// trim drops items every open copy has read.
func (t *tape[T]) trim() {
	low := -1
	for _, p := range t.pos {
		if low < 0 || p < low {
			low = p
		}
	}
	if drop := low - t.base; drop > 0 {
		var zero T
		for i := range drop {
			t.items[i] = zero
		}
		t.items = t.items[drop:]
		t.base = low
	}
}

func (t *tape[T]) closeReader(r *StreamReader[T]) {
	t.mu.Lock()
	if _, ok := t.pos[r]; !ok {
		t.mu.Unlock()
		return
	}
	delete(t.pos, r)
	t.open--
	last := t.open == 0
	if !last {
		t.trim()
	}
	t.cond.Broadcast()
	t.mu.Unlock()
	if last {
		t.src.Close()
	}
}
