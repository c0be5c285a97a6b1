package pushtest

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
)

// Stalled is a webhook that accepts connections and never answers, as a
// hung webhook does, and counts the connections it holds. It listens on
// 127.0.0.1; close it with the test.
type Stalled struct {
	// URL is the webhook's URL.
	URL string

	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every change
	conns   map[net.Conn]bool
	max     int
	total   int
	release bool
}

// NewStalled starts a Stalled webhook, closed when t ends.
func NewStalled(t testing.TB) *Stalled {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Stalled{URL: "http://" + ln.Addr().String() + "/hook", ln: ln, changed: make(chan struct{}), conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(s.close)
	return s
}

func (s *Stalled) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.total++
		if s.release {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = true
		s.max = max(s.max, len(s.conns))
		s.changeLocked()
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			// Read the request and whatever follows, answering nothing,
			// until the client gives up.
			_, _ = io.Copy(io.Discard, c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.changeLocked()
			s.mu.Unlock()
		}()
	}
}

func (s *Stalled) changeLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Counts returns the connections open now, the most open at once so far,
// and all accepted so far.
func (s *Stalled) Counts() (open, most, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns), s.max, s.total
}

// WaitOpen waits until n connections are open at once, or ctx ends.
func (s *Stalled) WaitOpen(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		open, changed := len(s.conns), s.changed
		s.mu.Unlock()
		if open >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Release closes the connections held and, from now on, every connection
// as soon as it is accepted: deliveries fail at once, as to a webhook
// that went away.
func (s *Stalled) Release() {
	s.mu.Lock()
	s.release = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
}

func (s *Stalled) close() {
	s.ln.Close()
	s.Release()
	s.wg.Wait()
}

// Logs is a slog.Handler that counts records by message, so a test can
// tell how often something was logged and wait for it.
type Logs struct {
	mu      sync.Mutex
	counts  map[string]int
	changed chan struct{}
}

// NewLogs returns an empty Logs.
func NewLogs() *Logs { return &Logs{counts: map[string]int{}, changed: make(chan struct{})} }

// Logger returns a logger that records into l, at every level.
func (l *Logs) Logger() *slog.Logger { return slog.New(l) }

// Count returns how many records had the message msg.
func (l *Logs) Count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[msg]
}

// Wait waits until a record with the message msg was logged, or ctx ends.
func (l *Logs) Wait(ctx context.Context, msg string) error {
	for {
		l.mu.Lock()
		n, changed := l.counts[msg], l.changed
		l.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Enabled implements slog.Handler.
func (l *Logs) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (l *Logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.counts[r.Message]++
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler.
func (l *Logs) WithAttrs([]slog.Attr) slog.Handler { return l }

// WithGroup implements slog.Handler.
func (l *Logs) WithGroup(string) slog.Handler { return l }
