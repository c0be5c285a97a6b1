package natsstore

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/a2amesh/a2amesh/internal/userfile"
)

// ErrClosed means a connection to NATS has closed for good: nats.go no
// longer reconnects it, and every store on it fails from then on. nats.go
// closes a connection itself when the server answers with an error it does
// not recover from (a protocol line longer than the server's
// max_control_line, a repeated authorization failure); only a new
// connection, in practice a restart of the process, helps.
var ErrClosed = errors.New("natsstore: the connection to NATS has closed for good")

// Conn is a connection Connect made: it reconnects on its own after a
// loss, for ever, until it is closed, by its owner or by nats.go (see
// ErrClosed). Context tells its owner the second.
type Conn struct {
	*nats.Conn
	closed chan struct{} // closed once the connection is
}

// ConnConfig configures Connect. The zero value connects as no one, to a
// NATS server that asks for no credential, over TLS only if the server or
// the URL (tls://) asks for it, and logs nothing.
type ConnConfig struct {
	// Name names the connection to the server (its monitoring lists it).
	Name string
	// Auth is who the connection is, and how it verifies the server.
	Auth Auth
	// Logger receives the connection's losses and recoveries; nil: none.
	Logger *slog.Logger
}

// Auth says how a connection proves who it is to NATS, and how it
// verifies the server. Every secret is in a file (a Kubernetes Secret's
// mount), never in the struct: Connect reads each once to fail at once on a
// missing or empty one, and again at every connection nats.go makes (a
// reconnection after a loss), so that a rotated file takes effect without
// a restart. The one exception is NkeyFile's public key, which nats.go
// takes once: a new key pair needs a new connection. An error names the
// file, never what it holds.
//
// At most one of CredsFile, NkeyFile, User and TokenFile; none connects
// as no one. The TLS files apply with any of them.
type Auth struct {
	// CredsFile is a NATS credentials file (.creds): a user's JWT and its
	// nkey seed, for a server in operator mode (decentralized JWT auth).
	CredsFile string
	// NkeyFile is a user's nkey seed (SU...), for a server that lists the
	// user's public key.
	NkeyFile string
	// User and PasswordFile are a user of the server's authorization
	// block and the file its password is in (given both, or neither).
	User, PasswordFile string
	// TokenFile is the file of the server's authorization token.
	TokenFile string
	// TLSCA is a PEM file of the CA certificates that verify the server;
	// empty: the system's roots. Setting it (or TLSCert) connects over TLS
	// only, refusing a server that offers none.
	TLSCA string
	// TLSCert and TLSKey are PEM files of the client certificate (chain)
	// and its key, for a server that verifies clients (mutual TLS); both,
	// or neither.
	TLSCert, TLSKey string
}

// Check says what is wrong with a, if anything: two ways of proving who
// the connection is, a user without a password file or the reverse, a
// TLS certificate without its key or the reverse.
func (a Auth) Check() error {
	var ways []string
	for _, w := range []struct{ name, file string }{{"CredsFile", a.CredsFile}, {"NkeyFile", a.NkeyFile}, {"User", a.User + a.PasswordFile}, {"TokenFile", a.TokenFile}} {
		if w.file != "" {
			ways = append(ways, w.name)
		}
	}
	switch {
	case len(ways) > 1:
		return fmt.Errorf("natsstore: %s: give one way of authenticating, not several", strings.Join(ways, " and "))
	case (a.User == "") != (a.PasswordFile == ""):
		return errors.New("natsstore: User and PasswordFile: give both, or neither")
	case (a.TLSCert == "") != (a.TLSKey == ""):
		return errors.New("natsstore: TLSCert and TLSKey: give both, or neither")
	}
	return nil
}

// options are the nats.go options that authenticate as a says and verify
// the server, each secret read from its file at every connection.
func (a Auth) options(log *slog.Logger) []nats.Option {
	var opts []nats.Option
	switch {
	case a.CredsFile != "":
		opts = append(opts, nats.UserCredentials(a.CredsFile))
	case a.User != "":
		password := reread(a.PasswordFile, "password", log)
		opts = append(opts, nats.UserInfoHandler(func() (string, string) { return a.User, password() }))
	case a.TokenFile != "":
		opts = append(opts, nats.TokenHandler(reread(a.TokenFile, "token", log)))
	}
	var cert nats.TLSCertHandler
	var roots nats.RootCAsHandler
	if a.TLSCert != "" {
		cert = func() (tls.Certificate, error) {
			pair, err := tls.LoadX509KeyPair(a.TLSCert, a.TLSKey)
			if err != nil {
				return tls.Certificate{}, fmt.Errorf("natsstore: TLS client certificate %s, key %s: %w", a.TLSCert, a.TLSKey, err)
			}
			return pair, nil
		}
	}
	if a.TLSCA != "" {
		roots = func() (*x509.CertPool, error) {
			b, err := userfile.Read(a.TLSCA)
			if err != nil {
				return nil, fmt.Errorf("natsstore: TLS CA: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(b) {
				return nil, fmt.Errorf("natsstore: TLS CA %s: no PEM certificate in it", a.TLSCA)
			}
			return pool, nil
		}
	}
	if cert != nil || roots != nil {
		opts = append(opts, nats.ClientTLSConfig(cert, roots))
	}
	return opts
}

// secretFile reads the secret in file, whole but for trailing line ends.
// Its errors name the file, never the content.
func secretFile(file, what string) (string, error) {
	b, err := userfile.Read(file)
	if err != nil {
		return "", fmt.Errorf("natsstore: the %s file: %w", what, err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	if s == "" {
		return "", fmt.Errorf("natsstore: the %s file %s is empty", what, file)
	}
	return s, nil
}

// reread returns what nats.go calls at every connection for the secret in
// file: its content then. Connect has read it once already; a file that
// cannot be read later (a Secret's mount swapping its files) leaves the
// last content read in use, and says so in the log.
func reread(file, what string, log *slog.Logger) func() string {
	var mu sync.Mutex
	last, _ := secretFile(file, what)
	return func() string {
		s, err := secretFile(file, what)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			log.Warn("nats: the "+what+" file cannot be read; connecting with the one read before", "err", err)
			return last
		}
		last = s
		return s
	}
}

// Connect connects to url (a comma-separated list for a cluster), as
// cfg.Auth says, reconnecting for ever after a loss, and returns the
// connection and a JetStream handle. The log says when the connection
// drops, comes back, or closes for a reason other than its owner's Close.
//
// A server not reachable yet (a process that starts before NATS, or
// beside a NATS too busy to answer in time) is tried again until ctx ends;
// a refused credential, a server certificate that does not verify, a
// missing or unreadable credential file or a malformed URL is returned at
// once, as no retry mends it. Errors and logs name url without the
// password or token it may hold.
func Connect(ctx context.Context, url string, cfg ConnConfig) (*Conn, jetstream.JetStream, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	shown := redact(url)
	if err := cfg.Auth.Check(); err != nil {
		return nil, nil, fmt.Errorf("natsstore: connect to %s: %w", shown, err)
	}
	for _, f := range []struct{ file, what string }{{cfg.Auth.PasswordFile, "password"}, {cfg.Auth.TokenFile, "token"}} {
		if f.file != "" {
			if _, err := secretFile(f.file, f.what); err != nil {
				return nil, nil, fmt.Errorf("natsstore: connect to %s: %w", shown, err)
			}
		}
	}
	c := &Conn{closed: make(chan struct{})}
	opts := []nats.Option{nats.Name(cfg.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats: reconnected", "url", redact(c.ConnectedUrl())) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if sub != nil {
				log.Warn("nats: error", "subject", sub.Subject, "err", err)
			} else {
				log.Warn("nats: error", "err", err)
			}
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if err := nc.LastError(); err != nil {
				log.Error("nats: the connection closed for good; nothing stored on NATS can be reached through it any more", "err", err)
			}
			close(c.closed)
		})}
	if cfg.Auth.NkeyFile != "" {
		// nats.go reads the public key here, the seed at every signing.
		nk, err := nats.NkeyOptionFromSeed(cfg.Auth.NkeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("natsstore: connect to %s: the nkey seed %s: %w", shown, cfg.Auth.NkeyFile, err)
		}
		opts = append(opts, nk)
	}
	// The options apply once, here: a credential file they cannot read is
	// an error no retry mends.
	o := nats.GetDefaultOptions()
	o.Servers = splitURLs(url)
	for _, opt := range append(opts, cfg.Auth.options(log)...) {
		if err := opt(&o); err != nil {
			return nil, nil, fmt.Errorf("natsstore: connect to %s: %w", shown, err)
		}
	}
	var nc *nats.Conn
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		var err error
		if nc, err = o.Connect(); err == nil {
			break
		}
		if !retryable(err) {
			return nil, nil, fmt.Errorf("natsstore: connect to %s: %w", shown, err)
		}
		log.Warn("nats: not reachable yet; trying again", "url", shown, "err", err, "in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fmt.Errorf("natsstore: connect to %s: %w (%w)", shown, err, context.Cause(ctx))
		case <-t.C:
		}
	}
	c.Conn = nc
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("natsstore: jetstream: %w", err)
	}
	return c, js, nil
}

// retryable reports whether a failed first connection may succeed if
// tried again: not if the server refused the credential (a password, a
// token, a signature, or a client certificate: a TLS alert it sent), the
// server's certificate did not verify, or the two sides disagree on TLS.
func retryable(err error) bool {
	var urlErr *url.Error
	var verify *tls.CertificateVerificationError
	var opErr *net.OpError
	alert := errors.As(err, &opErr) && opErr.Op == "remote error"
	return !alert && !errors.As(err, &urlErr) && !errors.As(err, &verify) && !errors.Is(err, nats.ErrAuthorization) &&
		!errors.Is(err, nats.ErrAuthExpired) && !errors.Is(err, nats.ErrAuthRevoked) && !errors.Is(err, nats.ErrAccountAuthExpired) &&
		!errors.Is(err, nats.ErrSecureConnWanted) && !errors.Is(err, nats.ErrSecureConnRequired)
}

// splitURLs splits a comma-separated list of server URLs, as nats.Connect
// does.
func splitURLs(list string) []string {
	var urls []string
	for u := range strings.SplitSeq(list, ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// redact returns the server URLs of list with the password or token they
// may hold replaced by "xxxxx", for errors and logs.
func redact(list string) string {
	urls := splitURLs(list)
	for i, s := range urls {
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				urls[i] = u.Redacted()
			} else {
				u.User = url.User("xxxxx") // a token
				urls[i] = u.String()
			}
		}
	}
	return strings.Join(urls, ",")
}

// Context returns a copy of ctx that also ends when the connection closes
// for good, its cause then an error that matches ErrClosed and says why.
// A service ties its serving to it, so that a connection nats.go gave up
// on stops the process rather than leaving it up and failing every
// request. Call cancel when done with it.
func (c *Conn) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-c.closed:
			cancel(c.closedErr())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// closedErr says why the connection closed.
func (c *Conn) closedErr() error {
	if err := c.LastError(); err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return ErrClosed
}
