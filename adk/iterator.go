package adk

import "github.com/a2amesh/a2amesh/adk/schema"

// AsyncIterator yields the items an AsyncGenerator sends, in order. It is
// read by one goroutine.
type AsyncIterator[T any] struct{ r *schema.StreamReader[T] }

// AsyncGenerator feeds an AsyncIterator. Send never blocks: items wait in
// the iterator until read, so a consumer that stops reading cannot leave
// the producer stuck. Send and Close may be called from any goroutine.
type AsyncGenerator[T any] struct{ w *schema.StreamWriter[T] }

// NewAsyncIteratorPair returns a connected iterator and generator.
func NewAsyncIteratorPair[T any]() (*AsyncIterator[T], *AsyncGenerator[T]) {
	r, w := schema.Pipe[T]()
	return &AsyncIterator[T]{r: r}, &AsyncGenerator[T]{w: w}
}

// Next blocks until an item arrives or the generator is closed; ok is
// false at the end.
func (it *AsyncIterator[T]) Next() (item T, ok bool) {
	v, err := it.r.Recv()
	return v, err == nil
}

// Send queues an item.
func (g *AsyncGenerator[T]) Send(v T) { g.w.Send(v) }

// Close ends the iteration after the items already sent.
func (g *AsyncGenerator[T]) Close() { g.w.Close() }
