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
)

// Defaults of a zero Sender.
const (
	defaultTimeout     = 10 * time.Second
	defaultMaxAttempts = 5
	defaultBaseBackoff = 250 * time.Millisecond
	defaultMaxBackoff  = 10 * time.Second
)

// Content types of the payloads: the A2A 1.0 media type, and plain JSON,
// which is what 0.3 webhooks expect.
const (
	contentType10 = "application/a2a+json"
	contentType03 = "application/json"
)

// Sender delivers push notifications with timeouts and retries. Its zero
// value is usable: 10 s per attempt, 5 attempts, backoff 250 ms doubling to
// at most 10 s with full jitter, zero Guard. A Sender is safe for
// concurrent use and must not be copied after first use.
type Sender struct {
	// Client sends the requests. nil means a client whose transport dials
	// through Guard.DialContext, ignores proxy environment variables (a
	// proxy would make the connection the guard checks), applies Timeout
	// per attempt and follows no redirects (a redirect could lead into the
	// server's network after the checks). A Client set here bypasses Guard
	// unless its transport dials through it.
	Client *http.Client
	// Timeout bounds one attempt, from dialling to draining the response.
	Timeout time.Duration
	// MaxAttempts is the most requests made for one notification.
	MaxAttempts int
	// BaseBackoff is the longest wait after the first failed attempt; it
	// doubles after each further one up to MaxBackoff, and the actual wait
	// is random up to that bound, so webhooks that failed together are not
	// retried together.
	BaseBackoff time.Duration
	// MaxBackoff also caps a webhook's Retry-After.
	MaxBackoff time.Duration
	// Guard checks every connection the default client makes.
	Guard netguard.Guard
	// Logger receives failed attempts (Debug) and failed deliveries (Warn).
	// nil means slog.Default().
	Logger *slog.Logger

	once   sync.Once
	client *http.Client
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

func (s *Sender) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

func (s *Sender) httpClient() *http.Client {
	if s.Client != nil {
		return s.Client
	}
	s.once.Do(func() {
		s.client = &http.Client{
			Transport: &http.Transport{
				DialContext:           s.Guard.DialContext,
				ForceAttemptHTTP2:     true,
				MaxIdleConns:          100,
				IdleConnTimeout:       90 * time.Second,
				TLSHandshakeTimeout:   10 * time.Second,
				ExpectContinueTimeout: time.Second,
			},
			Timeout: s.timeout(),
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	})
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
// are permanent and returned at once. When ctx ends, Notify stops and
// returns an error wrapping ctx.Err().
func (s *Sender) Notify(ctx context.Context, c Config, ev a2a.Event, snapshot *a2a.Task) error {
	body, contentType, err := payload(c.ProtocolVersion, ev, snapshot)
	if err != nil {
		return fmt.Errorf("push: cannot notify webhook %s of task %s: %w", c.ID, c.TaskID, err)
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("push: cannot notify webhook %s of task %s: %q is not an http:// or https:// URL", c.ID, c.TaskID, c.URL)
	}
	where := u.Redacted()
	log := s.logger().With("task", c.TaskID, "config", c.ID, "url", where)
	maxAttempts := s.maxAttempts()
	for n := 1; ; n++ {
		r := s.attempt(ctx, c, body, contentType)
		if r.err == nil && r.status/100 == 2 {
			return nil
		}
		if ctx.Err() != nil {
			log.Debug("push: delivery abandoned", "attempt", n, "error", ctx.Err())
			return fmt.Errorf("push: notification for task %s to %s abandoned after %d attempt(s): %w", c.TaskID, where, n, ctx.Err())
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
	err        error
	permanent  bool
	retryAfter time.Duration // -1 when the response does not say
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
	if r.snippet != "" {
		last += ": " + strconv.Quote(r.snippet)
	}
	return fmt.Errorf("push: notification for task %s to %s failed after %d attempt(s)%s: %s", taskID, where, n, verdict, last)
}

func (s *Sender) attempt(ctx context.Context, c Config, body []byte, contentType string) result {
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
	resp, err := s.httpClient().Do(req)
	if err != nil {
		var ne net.Error
		if ctx.Err() == nil && (errors.Is(actx.Err(), context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()) {
			err = fmt.Errorf("no response within %v: %w", timeout, err)
		}
		return result{err: err, permanent: errors.Is(err, netguard.ErrRefused), retryAfter: -1}
	}
	snippet := drain(resp)
	r := result{status: resp.StatusCode, statusText: resp.Status, retryAfter: -1}
	if r.status/100 == 2 {
		return r
	}
	r.snippet = snippet
	switch {
	case r.status == http.StatusRequestTimeout, r.status == http.StatusTooEarly,
		r.status == http.StatusTooManyRequests, r.status/100 == 5:
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
