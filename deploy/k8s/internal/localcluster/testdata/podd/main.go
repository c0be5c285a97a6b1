// Command podd is the container localcluster's tests run: it answers what
// it sees of its pod (its user, its environment, a mounted file, whether
// it can write where it is asked to) and drains on SIGTERM as a
// well-behaved server does.
package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	var draining atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if draining.Load() {
			w.Header().Set("Connection", "close")
		}
		q := r.URL.Query()
		host, _ := os.Hostname()
		out := map[string]any{"uid": os.Getuid(), "gid": os.Getgid(), "hostname": host, "env:HOSTNAME": os.Getenv("HOSTNAME")}
		for _, k := range q["env"] {
			out["env:"+k] = os.Getenv(k)
		}
		for _, f := range q["read"] {
			b, err := os.ReadFile(f)
			out["read:"+f] = string(b) + errText(err)
		}
		for _, f := range q["write"] {
			out["write:"+f] = errText(os.WriteFile(f, []byte("x"), 0o644))
		}
		if d, err := time.ParseDuration(q.Get("sleep")); err == nil {
			time.Sleep(d)
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	srv := &http.Server{Addr: ":" + os.Getenv("PORT"), Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-ctx.Done()
		if os.Getenv("NODRAIN") != "" {
			os.Exit(0) // a server that ignores what SIGTERM asks of it
		}
		draining.Store(true)
		// Long enough for the prober to see not-ready before the listener
		// closes.
		time.Sleep(1500 * time.Millisecond)
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		os.Exit(1)
	}
	<-shut
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return "error: " + err.Error()
}
