package client_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
)

// closingProxy forwards connections to upstream, but closes a client's
// connection, unanswered, when a second request arrives on it: a server
// that closed a kept-alive connection as a request went out on it, as a
// replica going away behind a Service does.
type closingProxy struct {
	ln    net.Listener
	conns atomic.Int64
	cut   atomic.Int64
	wg    sync.WaitGroup
}

func newClosingProxy(t *testing.T, upstream string) *closingProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &closingProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.conns.Add(1)
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.serve(c, upstream)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *closingProxy) serve(c net.Conn, upstream string) {
	defer c.Close()
	up, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		_, _ = io.Copy(c, up) // ends when either side closes
		c.Close()
	}()
	requests := 0
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if bytes.HasPrefix(buf[:n], []byte("POST ")) || bytes.HasPrefix(buf[:n], []byte("GET ")) {
				requests++
			}
			if requests > 1 {
				p.cut.Add(1)
				return
			}
			if _, err := up.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A stream or a read whose kept-alive connection is closed before any of
// its answer comes back goes out again on a new connection; a blocking
// send, which a resend could run twice, does not.
func TestReplayOnAClosedKeptAliveConnection(t *testing.T) {
	s := startEcho(t, serverOpts{})
	upstream := s.URL[len("http://") : len(s.URL)-1]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Every call on a connection of its own, then one on the kept-alive
	// connection the first left, which the proxy cuts.
	for _, tc := range []struct {
		name   string
		call   func(c *client.Client) error
		replay bool
	}{
		{"SendStreamingMessage", func(c *client.Client) error {
			for _, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")}) {
				if err != nil {
					return err
				}
			}
			return nil
		}, true},
		{"ListTasks", func(c *client.Client) error {
			_, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
			return err
		}, true},
		{"SendMessage", func(c *client.Client) error {
			_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hello")})
			return err
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newClosingProxy(t, upstream)
			hc := newHTTPClient()
			defer hc.CloseIdleConnections()
			// The agent's own URL, reached through the proxy.
			hc.Transport.(*http.Transport).DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, p.ln.Addr().String())
			}
			c, err := client.NewFromURL(s.URL, client.Config{HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := tc.call(c); err != nil {
				t.Fatalf("first call: %v", err)
			}
			err = tc.call(c)
			if p.cut.Load() != 1 {
				t.Fatalf("the proxy cut %d requests, want 1", p.cut.Load())
			}
			switch {
			case tc.replay && err != nil:
				t.Errorf("the cut call failed rather than going out again: %v", err)
			case tc.replay && p.conns.Load() != 2:
				t.Errorf("%d connections, want 2: the first and the resend's", p.conns.Load())
			case !tc.replay && err == nil:
				t.Error("a blocking send was sent again after its connection closed")
			}
		})
	}
}
