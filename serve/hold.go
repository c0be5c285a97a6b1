package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Hold answers HTTP on ln while what is to serve it is being made, before
// New (a gateway discovering its agents, an agent waiting for the agents
// it calls): HealthzPath answers 200 (the process is alive), ReadyzPath
// 503 with "not ready: " and why() (called per probe: keep it cheap),
// every other request 503 with Retry-After, each answer closing its
// connection; so that probes and clients see a server starting, not a
// refused connection. release stops answering and returns once ln is free
// to be served by New (as Config.Listener); ln stays open. A listener
// that cannot be interrupted (it has no SetDeadline, which TCP and Unix
// listeners have) is not answered on.
func Hold(ln net.Listener, why func() string) (release func()) {
	dl, ok := ln.(interface{ SetDeadline(time.Time) error })
	if !ok {
		return func() {}
	}
	hl := &heldListener{Listener: ln}
	srv := &http.Server{Handler: holdHandler(why), ReadHeaderTimeout: 5 * time.Second}
	srv.SetKeepAlivesEnabled(false)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(hl) // ends with errReleased
	}()
	return func() {
		hl.released.Store(true)
		_ = dl.SetDeadline(time.Now()) // wakes the Accept going on
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			_ = srv.Close()
		}
		<-served
		_ = dl.SetDeadline(time.Time{})
	}
}

func holdHandler(why func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", textPlain)
		switch r.URL.Path {
		case HealthzPath:
			_, _ = w.Write(bodyOK)
		case ReadyzPath:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("not ready: " + why() + "\n"))
		default:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("starting: " + why() + "\n"))
		}
	})
}

// errReleased ends a held listener's serving.
var errReleased = errors.New("serve: the listener is released")

// heldListener is a listener Hold serves until it is released, which
// closing does not close.
type heldListener struct {
	net.Listener
	released atomic.Bool
}

func (l *heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil && l.released.Load() {
		return nil, errReleased
	}
	return c, err
}

// Close leaves the listener open for New.
func (l *heldListener) Close() error { return nil }
