// Package jwkstest is what the tests of the packages that fetch a JWKS
// (jwks, a2a/cardsign, a2a/push) share: a JWKS endpoint whose answer a
// test changes, and a clock a test moves.
package jwkstest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Server is a JWKS endpoint on 127.0.0.1, at any path, that answers
// every request alike and counts them.
type Server struct {
	*httptest.Server

	mu     sync.Mutex
	status int
	doc    []byte
	hits   int
}

// NewServer returns a Server answering doc with status 200, closed at the
// end of t.
func NewServer(t testing.TB, doc []byte) *Server {
	t.Helper()
	s := &Server{status: http.StatusOK, doc: doc}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits++
		status, doc := s.status, s.doc
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		w.Write(doc)
	}))
	t.Cleanup(s.Close)
	return s
}

// Answer makes the Server answer doc with status from now on.
func (s *Server) Answer(status int, doc []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.doc = status, doc
}

// Fetches is how many requests the Server answered.
func (s *Server) Fetches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits
}

// Clock is a time that moves only when the test advances it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock at now.
func NewClock(now time.Time) *Clock { return &Clock{now: now} }

// Now is the Clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the Clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
