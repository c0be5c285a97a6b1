// Package cli holds what every a2amesh command shares: flags that fall back
// to environment variables, logger setup, and running an A2A server until
// a signal arrives.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Flags wraps a FlagSet whose flags default to environment variables:
// each flag's default is its variable's value when set, else the given
// default, and the usage names the variable.
type Flags struct {
	*flag.FlagSet
	prefix  string
	errs    []error
	fromEnv map[string]bool // flags whose default came from the environment
}

// NewFlags returns Flags whose variables are named PREFIX_FLAG_NAME.
func NewFlags(name, envPrefix string) *Flags {
	return &Flags{FlagSet: flag.NewFlagSet(name, flag.ExitOnError), prefix: envPrefix, fromEnv: map[string]bool{}}
}

// Given reports whether the flag was set, on the command line or by its
// environment variable, rather than left at its default; for defaults
// that depend on other flags.
func (f *Flags) Given(name string) bool {
	given := f.fromEnv[name]
	f.Visit(func(fl *flag.Flag) { given = given || fl.Name == name })
	return given
}

func (f *Flags) env(name string) (string, string, bool) {
	key := f.prefix + "_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	v, ok := os.LookupEnv(key)
	return key, v, ok
}

// String defines a string flag.
func (f *Flags) String(name, def, usage string) *string {
	key, v, ok := f.env(name)
	if ok {
		def, f.fromEnv[name] = v, true
	}
	return f.FlagSet.String(name, def, usage+" (env "+key+")")
}

// StringEnv defines a string flag whose variable is env, for settings
// every command shares under one name (NATS_URL, OPENAI_API_KEY).
func (f *Flags) StringEnv(name, env, def, usage string) *string {
	if v, ok := os.LookupEnv(env); ok {
		def, f.fromEnv[name] = v, true
	}
	return f.FlagSet.String(name, def, usage+" (env "+env+")")
}

// Duration defines a duration flag.
func (f *Flags) Duration(name string, def time.Duration, usage string) *time.Duration {
	key, v, ok := f.env(name)
	return f.duration(name, key, v, ok, def, usage)
}

// DurationEnv defines a duration flag whose variable is env, for settings
// every command shares under one name.
func (f *Flags) DurationEnv(name, env string, def time.Duration, usage string) *time.Duration {
	v, ok := os.LookupEnv(env)
	return f.duration(name, env, v, ok, def, usage)
}

func (f *Flags) duration(name, key, v string, ok bool, def time.Duration, usage string) *time.Duration {
	if ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s=%q: %w", key, v, err))
		} else {
			def, f.fromEnv[name] = d, true
		}
	}
	return f.FlagSet.Duration(name, def, usage+" (env "+key+")")
}

// Int defines an int flag.
func (f *Flags) Int(name string, def int, usage string) *int {
	key, v, ok := f.env(name)
	return f.int(name, key, v, ok, def, usage)
}

// IntEnv defines an int flag whose variable is env, for settings every
// command shares under one name.
func (f *Flags) IntEnv(name, env string, def int, usage string) *int {
	v, ok := os.LookupEnv(env)
	return f.int(name, env, v, ok, def, usage)
}

func (f *Flags) int(name, key, v string, ok bool, def int, usage string) *int {
	if ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			f.errs = append(f.errs, fmt.Errorf("%s=%q: %w", key, v, err))
		} else {
			def, f.fromEnv[name] = n, true
		}
	}
	return f.FlagSet.Int(name, def, usage+" (env "+key+")")
}

// Parse parses args, failing on malformed environment variables too.
func (f *Flags) Parse(args []string) error {
	if len(f.errs) > 0 {
		return f.errs[0]
	}
	return f.FlagSet.Parse(args)
}

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Logger returns a text logger at the named level (debug, info, warn, error).
func Logger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}

// SignalContext returns a context canceled by SIGINT or SIGTERM.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// ServeDebug serves Go's profiling endpoints (/debug/pprof/) on addr until
// ctx is done. It is for operators diagnosing a live process; leave addr
// empty to serve nothing.
func ServeDebug(ctx context.Context, addr string, log *slog.Logger) {
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close() // nothing to drain: profiles are best effort
	}()
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("debug server stopped", "addr", addr, "err", err)
		}
	}()
}
