package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/a2av03"
	"github.com/a2amesh/a2amesh/a2a/netguard"
	"github.com/a2amesh/a2amesh/telemetry"
)

// Defaults of a zero Sender.
const (
	defaultTimeout           = 5 * time.Second
	defaultDialTimeout       = 3 * time.Second
	defaultMaxAttempts       = 5
	defaultBaseBackoff       = 250 * time.Millisecond
	defaultMaxBackoff        = 10 * time.Second
	defaultMaxConns          = 128
	defaultMaxConnsPerHost   = 8
	defaultMaxPending        = 1024
	defaultMaxPendingPerHost = 64
	defaultBreakerThreshold  = 5
	defaultBreakerCooldown   = 30 * time.Second
)

// Content types of the payloads: the A2A 1.0 media type, and plain JSON,
// which is what 0.3 webhooks expect.
const (
	contentType10 = "application/a2a+json"
	contentType03 = "application/json"
)

// Errors of notifications that were not attempted, or not attempted again;
// test with errors.Is. Sender logs a breaker's opening once, and drops at
// most once a BreakerCooldown with their number, so a caller need not log
// these per notification.
var (
	// ErrOverloaded: the notification was dropped because too many are
	// pending for its destination (MaxPendingPerHost) or in all
	// (MaxPending).
	ErrOverloaded = errors.New("push: too many notifications pending")
	// ErrUnavailable: the destination's breaker is open, because its last
	// BreakerThreshold attempts failed; it is tried again after
	// BreakerCooldown.
	ErrUnavailable = errors.New("push: webhook destination failing, not tried until its cooldown ends")
)

// Sender delivers push notifications with timeouts, retries and bounds on
// what webhooks can hold: a webhook is a client's choice, and one that
// never answers must not take the server's connections, goroutines or
// memory.
//
// A destination is a webhook URL's scheme, host and port. At most MaxConns
// attempts are in flight at once, and MaxConnsPerHost per destination; a
// notification waits for its turn, but at most MaxPending notifications
// wait, retry or are in flight at once, MaxPendingPerHost per destination,
// and Notify drops the ones beyond (ErrOverloaded). A destination whose
// last BreakerThreshold attempts failed is not tried for BreakerCooldown
// (ErrUnavailable); then one attempt probes it.
//
// The zero value is usable: 5 s per attempt (3 s to connect), 5 attempts,
// backoff 250 ms doubling to at most 10 s with full jitter, 128
// connections (8 per destination), 1024 pending notifications (64 per
// destination), a breaker opening after 5 failed attempts in a row for
// 30 s, and the zero Guard. A zero or negative field means its default. A
// Sender is safe for concurrent use and must not be copied after first
// use; its fields are read on first use.
type Sender struct {
	// Client sends the requests. nil means a client whose transport dials
	// through Guard.DialContext within DialTimeout, ignores proxy
	// environment variables (a proxy would make the connection the guard
	// checks), applies Timeout per attempt, and keeps at most
	// MaxConnsPerHost connections per destination and MaxConns idle ones.
	// A Client set here bypasses Guard unless its transport dials through
	// it; the bounds on attempts still hold. No client follows redirects,
	// this one's CheckRedirect notwithstanding: a redirect could lead into
	// the server's network after the URL was checked, and would carry the
	// notification's token and signature to a host the client did not
	// register.
	Client *http.Client
	// Timeout bounds one attempt, from dialling to draining the response.
	Timeout time.Duration
	// DialTimeout bounds connecting (TCP and TLS handshakes) with the
	// default client. The transport finishes a dial its attempt gave up
	// on, to keep the connection, so this also bounds how long a
	// connection to a destination that never accepts outlives its attempt.
	DialTimeout time.Duration
	// MaxAttempts is the most requests made for one notification.
	MaxAttempts int
	// BaseBackoff is the longest wait after the first failed attempt; it
	// doubles after each further one up to MaxBackoff, and the actual wait
	// is random up to that bound, so webhooks that failed together are not
	// retried together.
	BaseBackoff time.Duration
	// MaxBackoff also caps a webhook's Retry-After.
	MaxBackoff time.Duration
	// MaxConns bounds the attempts in flight at once, so the outbound
	// connections in use, across destinations.
	MaxConns int
	// MaxConnsPerHost bounds the attempts in flight at once to one
	// destination.
	MaxConnsPerHost int
	// MaxPending bounds the notifications in progress (in flight, waiting
	// for a connection, or waiting to retry) across destinations; beyond
	// it Notify drops a notification at once, with ErrOverloaded.
	MaxPending int
	// MaxPendingPerHost is the same bound per destination, so a slow
	// webhook holds at most this many notifications.
	MaxPendingPerHost int
	// BreakerThreshold is how many attempts in a row must fail at a
	// destination (no connection, no response within Timeout, 408, 425,
	// 429 or 5xx) to open its breaker: then notifications to it fail at
	// once with ErrUnavailable, without connecting.
	BreakerThreshold int
	// BreakerCooldown is how long a breaker stays open. Then one attempt
	// probes the destination: its success closes the breaker, its failure
	// opens it for another cooldown.
	BreakerCooldown time.Duration
	// Guard checks every connection the default client makes.
	Guard netguard.Guard
	// Signing, when set, signs every attempt (see Signing and Verifier),
	// besides the config's credentials; nil sends notifications unsigned.
	// A Signing that cannot sign (no key, an unsupported one) fails every
	// notification at once.
	Signing *Signing
	// Logger receives failed attempts (Debug), failed deliveries (Warn),
	// dropped notifications (Warn, at most once a BreakerCooldown per
	// destination, with their number), and a breaker's opening (Warn) and
	// closing (Info), once each. nil means slog.Default().
	Logger *slog.Logger
	// Telemetry counts the notifications by outcome (telemetry.Push):
	// delivered, refused (Guard refused the destination) or failed (any
	// other end but the caller's giving up); nil counts none.
	Telemetry *telemetry.Telemetry

	once      sync.Once
	client    *http.Client
	conns     chan struct{} // a token per attempt in flight
	notary    *notary       // nil when unsigned
	notaryErr error

	mu         sync.Mutex
	dests      map[string]*dest // destinations with notifications pending or a breaker's state
	sweepAt    int              // len(dests) at which idle entries are swept
	pending    int
	dropped    int // since dropLogged, for want of room in MaxPending
	dropLogged time.Time
}

// dest is the state of one destination. Its fields but slots are guarded
// by Sender.mu.
type dest struct {
	key   string        // scheme://host:port
	slots chan struct{} // a token per attempt in flight

	pending    int
	failures   int       // failed attempts in a row
	openUntil  time.Time // zero while the breaker is closed
	probing    bool      // an attempt is probing the open breaker
	skipped    int       // notifications failed fast since the breaker opened
	dropped    int       // since dropLogged, for want of room in MaxPendingPerHost
	dropLogged time.Time
}

// unused reports whether d holds nothing worth keeping: no notification
// pending and a breaker closed with no failure counted.
func (d *dest) unused() bool {
	return d.pending == 0 && d.openUntil.IsZero() && d.failures == 0
}

func orDefault[T time.Duration | int](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (s *Sender) timeout() time.Duration    { return orDefault(s.Timeout, defaultTimeout) }
func (s *Sender) maxAttempts() int          { return orDefault(s.MaxAttempts, defaultMaxAttempts) }
func (s *Sender) maxBackoff() time.Duration { return orDefault(s.MaxBackoff, defaultMaxBackoff) }
func (s *Sender) cooldown() time.Duration {
	return orDefault(s.BreakerCooldown, defaultBreakerCooldown)
}
func (s *Sender) maxPending() int { return orDefault(s.MaxPending, defaultMaxPending) }
func (s *Sender) maxPendingPerHost() int {
	return orDefault(s.MaxPendingPerHost, defaultMaxPendingPerHost)
}

func (s *Sender) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Sender) setup() {
	s.once.Do(func() {
		maxConns, perHost := orDefault(s.MaxConns, defaultMaxConns), orDefault(s.MaxConnsPerHost, defaultMaxConnsPerHost)
		s.conns = make(chan struct{}, maxConns)
		s.dests = make(map[string]*dest)
		if s.Signing != nil {
			s.notary, s.notaryErr = newNotary(s.Signing)
		}
		if s.Client != nil {
			// A shallow copy shares the caller's transport and jar.
			c := *s.Client
			c.CheckRedirect = noRedirects
			s.client = &c
			return
		}
		dialTimeout := orDefault(s.DialTimeout, defaultDialTimeout)
		s.client = &http.Client{
			Transport: &http.Transport{
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					ctx, cancel := context.WithTimeout(ctx, dialTimeout)
					defer cancel()
					return s.Guard.DialContext(ctx, network, addr)
				},
				ForceAttemptHTTP2:     true,
				MaxConnsPerHost:       perHost,
				MaxIdleConnsPerHost:   perHost,
				MaxIdleConns:          maxConns,
				IdleConnTimeout:       30 * time.Second,
				TLSHandshakeTimeout:   dialTimeout,
				ExpectContinueTimeout: time.Second,
			},
			Timeout:       s.timeout(),
			CheckRedirect: noRedirects,
		}
	})
}

// noRedirects makes a client return a redirect as the response.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func (s *Sender) httpClient() *http.Client {
	s.setup()
	return s.client
}

// backoff returns the wait after failed attempt n (1-based): full jitter
// over an exponentially growing bound.
func (s *Sender) backoff(n int) time.Duration {
	bound, limit := orDefault(s.BaseBackoff, defaultBaseBackoff), s.maxBackoff()
	for i := 1; i < n && bound < limit; i++ {
		bound *= 2
	}
	bound = min(bound, limit)
	return rand.N(bound + 1)
}

// Notify delivers one task event to one webhook, retrying transient
// failures. snapshot is the task's state after ev (used for 0.3 webhooks,
// whose payload is the whole task; it may be nil when ev is a *a2a.Task).
//
// A 2xx response is a delivery. Network errors, timeouts, 408, 425, 429 and
// 5xx are transient and retried with backoff up to MaxAttempts, waiting as
// long as a Retry-After header asks (capped at MaxBackoff). Other statuses
// (3xx, since redirects are not followed, and 4xx) and refusals by Guard
// are permanent and returned at once. A notification the bounds leave no
// room for fails at once with ErrOverloaded, and one to a destination
// whose breaker is open with ErrUnavailable, before or between attempts.
// When ctx ends, Notify stops and returns an error wrapping ctx.Err().
func (s *Sender) Notify(ctx context.Context, c Config, ev a2a.Event, snapshot *a2a.Task) error {
	err := s.notify(ctx, c, ev, snapshot)
	switch {
	case err == nil:
		s.Telemetry.Push("delivered")
	case errors.Is(err, netguard.ErrRefused):
		s.Telemetry.Push("refused")
	case ctx.Err() == nil:
		s.Telemetry.Push("failed")
	}
	return err
}

func (s *Sender) notify(ctx context.Context, c Config, ev a2a.Event, snapshot *a2a.Task) error {
	body, contentType, err := payload(c.ProtocolVersion, ev, snapshot)
	if err != nil {
		return fmt.Errorf("push: cannot notify webhook %s of task %s: %w", c.ID, c.TaskID, err)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("push: cannot notify webhook %s of task %s: %q is not an http:// or https:// URL", c.ID, c.TaskID, c.URL)
	}
	where := u.Redacted()
	s.setup()
	if s.notaryErr != nil {
		return fmt.Errorf("push: notification for task %s to %s not attempted: %w", c.TaskID, where, s.notaryErr)
	}
	var note notice // what each attempt signs, when they are signed
	if s.notary != nil {
		note = newNotice(c, body)
	}
	log := s.logger().With("task", c.TaskID, "config", c.ID, "url", where)
	d, err := s.admit(destination(u))
	if err != nil {
		log.Debug("push: notification not attempted", "error", err)
		return fmt.Errorf("push: notification for task %s to %s not attempted: %w", c.TaskID, where, err)
	}
	defer s.leave(d)
	maxAttempts := s.maxAttempts()
	for n := 1; ; n++ {
		r := s.try(ctx, d, c, note, body, contentType)
		if r.err == nil && r.status/100 == 2 {
			return nil
		}
		if ctx.Err() != nil {
			log.Debug("push: delivery abandoned", "attempt", n, "error", ctx.Err())
			return fmt.Errorf("push: notification for task %s to %s abandoned after %d attempt(s): %w", c.TaskID, where, n, ctx.Err())
		}
		if errors.Is(r.err, ErrUnavailable) {
			// The breaker's opening was logged, once for all its
			// notifications.
			log.Debug("push: notification not attempted further", "attempt", n, "error", r.err)
			return fmt.Errorf("push: notification for task %s to %s given up after %d attempt(s): %w", c.TaskID, where, n-1, r.err)
		}
		if r.err != nil {
			log.Debug("push: delivery attempt failed", "attempt", n, "error", r.err)
		} else {
			log.Debug("push: delivery attempt failed", "attempt", n, "status", r.status)
		}
		if r.permanent || n >= maxAttempts {
			err := r.failure(c.TaskID, where, n)
			log.Warn("push: notification not delivered", "attempt", n, "error", err)
			return err
		}
		wait := s.backoff(n)
		if r.retryAfter >= 0 {
			wait = min(r.retryAfter, s.maxBackoff())
		}
		if err := sleep(ctx, wait); err != nil {
			log.Debug("push: delivery abandoned", "attempt", n, "error", err)
			return fmt.Errorf("push: notification for task %s to %s abandoned after %d attempt(s): %w", c.TaskID, where, n, err)
		}
	}
}

// destination returns the key of a URL's destination: scheme, host and
// port, in one spelling.
func destination(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// admit counts a notification to the destination key as pending, or fails
// when the destination's breaker is open or the bounds are reached.
func (s *Sender) admit(key string) (*dest, error) {
	s.setup()
	now := time.Now()
	s.mu.Lock()
	d := s.dests[key]
	if d == nil {
		s.sweepLocked(now)
		d = &dest{key: key, slots: make(chan struct{}, orDefault(s.MaxConnsPerHost, defaultMaxConnsPerHost))}
		s.dests[key] = d
	}
	var err error
	var logDrops func()
	switch {
	case !d.openUntil.IsZero() && (now.Before(d.openUntil) || d.probing):
		d.skipped++
		err = ErrUnavailable
	case d.pending >= s.maxPendingPerHost():
		limit := s.maxPendingPerHost()
		err = fmt.Errorf("%w for %s (MaxPendingPerHost %d)", ErrOverloaded, key, limit)
		// Logged at most once a cooldown, with the number dropped since.
		d.dropped++
		if n := d.dropped; now.Sub(d.dropLogged) >= s.cooldown() {
			d.dropped, d.dropLogged = 0, now
			logDrops = func() {
				s.logger().Warn("push: too many notifications pending for a webhook destination; dropping the ones beyond", "destination", key, "limit", limit, "dropped", n)
			}
		}
	case s.pending >= s.maxPending():
		limit := s.maxPending()
		err = fmt.Errorf("%w in all (MaxPending %d)", ErrOverloaded, limit)
		s.dropped++
		if n := s.dropped; now.Sub(s.dropLogged) >= s.cooldown() {
			s.dropped, s.dropLogged = 0, now
			logDrops = func() {
				s.logger().Warn("push: too many notifications pending; dropping the ones beyond", "limit", limit, "dropped", n)
			}
		}
	default:
		d.pending++
		s.pending++
	}
	if d.unused() {
		delete(s.dests, key)
	}
	s.mu.Unlock()
	if logDrops != nil {
		logDrops()
	}
	return d, err
}

// leave ends a notification admit counted.
func (s *Sender) leave(d *dest) {
	s.mu.Lock()
	d.pending--
	s.pending--
	if d.unused() {
		delete(s.dests, d.key)
	}
	s.mu.Unlock()
}

// sweepLocked forgets, once their number has doubled since the last
// sweep, the destinations with nothing pending whose breaker is closed or
// has not been probed for a cooldown after the one it served, so the map
// does not grow with every URL ever notified. s.mu is held.
func (s *Sender) sweepLocked(now time.Time) {
	if len(s.dests) < s.sweepAt {
		return
	}
	for k, d := range s.dests {
		if d.pending == 0 && (d.openUntil.IsZero() || now.After(d.openUntil.Add(s.cooldown()))) {
			delete(s.dests, k)
		}
	}
	s.sweepAt = max(2*len(s.dests), 64)
}

// try makes one attempt when the destination's breaker lets it, within
// the bounds on attempts in flight, and records its outcome.
func (s *Sender) try(ctx context.Context, d *dest, c Config, note notice, body []byte, contentType string) result {
	select {
	case d.slots <- struct{}{}:
	case <-ctx.Done():
		return result{err: ctx.Err(), retryAfter: -1}
	}
	defer func() { <-d.slots }()
	select {
	case s.conns <- struct{}{}:
	case <-ctx.Done():
		return result{err: ctx.Err(), retryAfter: -1}
	}
	defer func() { <-s.conns }()
	probe, err := s.enter(d)
	if err != nil {
		return result{err: err, permanent: true, retryAfter: -1}
	}
	r := s.attempt(ctx, c, note, body, contentType)
	s.record(ctx, d, probe, r)
	return r
}

// enter lets an attempt through the destination's breaker: always while it
// is closed; once it has cooled down, one attempt at a time, as a probe.
func (s *Sender) enter(d *dest) (probe bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case d.openUntil.IsZero():
		return false, nil
	case time.Now().Before(d.openUntil) || d.probing:
		d.skipped++
		return false, ErrUnavailable
	}
	d.probing = true
	return true, nil
}

// record counts an attempt's outcome in the destination's breaker.
func (s *Sender) record(ctx context.Context, d *dest, probe bool, r result) {
	now := time.Now()
	s.mu.Lock()
	if probe {
		d.probing = false
	}
	var logIt func()
	// An attempt abandoned, or refused by the guard, says nothing of the
	// destination.
	switch {
	case r.unreachable && ctx.Err() == nil:
		d.failures++
		threshold := orDefault(s.BreakerThreshold, defaultBreakerThreshold)
		if probe || d.openUntil.IsZero() && d.failures >= threshold {
			opening := d.openUntil.IsZero()
			d.openUntil = now.Add(s.cooldown())
			n, cause := d.failures, r.cause()
			logIt = func() {
				if opening {
					s.logger().Warn("push: webhook destination keeps failing; notifications to it fail at once until a probe after the cooldown succeeds",
						"destination", d.key, "failures", n, "cooldown", s.cooldown(), "error", cause)
				} else {
					s.logger().Debug("push: probe of a failing webhook destination failed", "destination", d.key, "error", cause)
				}
			}
		}
	case r.err == nil: // it answered
		d.failures = 0
		if !d.openUntil.IsZero() {
			skipped := d.skipped
			d.openUntil, d.skipped = time.Time{}, 0
			logIt = func() {
				s.logger().Info("push: webhook destination answers again", "destination", d.key, "failed_fast", skipped)
			}
		}
	}
	s.mu.Unlock()
	if logIt != nil {
		logIt()
	}
}

// payload encodes the notification in the wire form of the webhook's
// protocol version.
func payload(version string, ev a2a.Event, snapshot *a2a.Task) (body []byte, contentType string, err error) {
	switch version {
	case "", "1.0":
		sr := a2a.Wrap(ev)
		if _, err := sr.Event(); err != nil {
			return nil, "", fmt.Errorf("no event to send: %w", err)
		}
		body, err = json.Marshal(sr)
		return body, contentType10, err
	case "0.3":
		if snapshot == nil {
			t, ok := ev.(*a2a.Task)
			if !ok || t == nil {
				return nil, "", errors.New("a 0.3 webhook is sent the whole task, and no task snapshot was given")
			}
			snapshot = t
		}
		body, err = json.Marshal(a2av03.FromTask(snapshot))
		return body, contentType03, err
	}
	return nil, "", fmt.Errorf("unsupported protocol version %q (want \"1.0\" or \"0.3\")", version)
}

// result is the outcome of one attempt: a response status or an error.
type result struct {
	status     int
	statusText string // "503 Service Unavailable"
	snippet    string // start of the response body, for the error
	location   string // where a 3xx response redirected to, redacted
	err        error
	permanent  bool
	// unreachable: the destination failed (no connection, no response in
	// time, or a transient status), which its breaker counts.
	unreachable bool
	retryAfter  time.Duration // -1 when the response does not say
}

// cause describes a failed attempt for a log.
func (r *result) cause() string {
	if r.err != nil {
		return r.err.Error()
	}
	return "status " + r.statusText
}

func (r *result) failure(taskID, where string, n int) error {
	verdict := ""
	if r.permanent {
		verdict = " (not retried)"
	}
	if r.err != nil {
		return fmt.Errorf("push: notification for task %s to %s failed after %d attempt(s)%s: %w", taskID, where, n, verdict, r.err)
	}
	last := "status " + r.statusText
	if r.location != "" {
		last += ", a redirect to " + strconv.Quote(r.location) + ", not followed (a webhook must answer itself)"
	}
	if r.snippet != "" {
		last += ": " + strconv.Quote(r.snippet)
	}
	return fmt.Errorf("push: notification for task %s to %s failed after %d attempt(s)%s: %s", taskID, where, n, verdict, last)
}

func (s *Sender) attempt(ctx context.Context, c Config, note notice, body []byte, contentType string) result {
	timeout := s.timeout()
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return result{err: err, permanent: true, retryAfter: -1}
	}
	req.Header.Set("Content-Type", contentType)
	if a := c.Authentication; a != nil && a.Scheme != "" {
		v := a.Scheme
		if a.Credentials != "" {
			v += " " + a.Credentials
		}
		req.Header.Set("Authorization", v)
	}
	if c.Token != "" {
		// Peers disagree on the name: the 0.3 specification's example
		// uses X-A2A-Notification-Token, a2a-go A2A-Notification-Token.
		req.Header.Set("X-A2A-Notification-Token", c.Token)
		req.Header.Set("A2A-Notification-Token", c.Token)
	}
	if s.notary != nil {
		sig, err := s.notary.sign(note, time.Now())
		if err != nil {
			return result{err: err, permanent: true, retryAfter: -1}
		}
		req.Header.Set(SignatureHeader, sig)
	}
	resp, err := s.httpClient().Do(req)
	if err != nil {
		var ne net.Error
		if ctx.Err() == nil && (errors.Is(actx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
			err = fmt.Errorf("no response within %v: %w", timeout, err)
		}
		refused := errors.Is(err, netguard.ErrRefused)
		return result{err: err, permanent: refused, unreachable: !refused, retryAfter: -1}
	}
	snippet := drain(resp)
	r := result{status: resp.StatusCode, statusText: resp.Status, retryAfter: -1}
	if r.status/100 == 2 {
		return r
	}
	r.snippet = snippet
	if r.status/100 == 3 {
		if loc, err := resp.Location(); err == nil {
			// The Location header is the webhook's to choose, and as long.
			where := loc.Redacted()
			r.location = strings.ToValidUTF8(where[:min(len(where), 256)], "")
		}
	}
	switch {
	case r.status == http.StatusRequestTimeout, r.status == http.StatusTooEarly,
		r.status == http.StatusTooManyRequests, r.status/100 == 5:
		r.unreachable = true
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			r.retryAfter = d
		}
	default:
		r.permanent = true
	}
	return r
}

// drain reads what is left of a response, so the connection can be reused,
// and closes it. It returns the start of the body as printable text. A
// body too long to drain cheaply is cut off; its connection is then closed.
func drain(resp *http.Response) string {
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(head), "")))
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP date.
func parseRetryAfter(h string, now time.Time) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	const forever = time.Duration(1<<63 - 1)
	secs, err := strconv.ParseUint(h, 10, 64)
	switch {
	case err == nil && secs <= uint64(forever/time.Second):
		return time.Duration(secs) * time.Second, true
	case err == nil || errors.Is(err, strconv.ErrRange):
		return forever, true // capped by the caller
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// sleep waits for d or until ctx ends, returning ctx's error then.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
