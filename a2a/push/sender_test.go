package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/netguard"
)

// request is what a webhook received.
type request struct {
	method, path string
	header       http.Header
	body         []byte
}

// hook is a webhook on 127.0.0.1 whose handler is told the attempt number.
type hook struct {
	srv   *httptest.Server
	calls atomic.Int32
	mu    sync.Mutex
	reqs  []request
}

func newHook(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request)) *hook {
	t.Helper()
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(h.calls.Add(1))
		body, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.reqs = append(h.reqs, request{r.Method, r.URL.Path, r.Header.Clone(), body})
		h.mu.Unlock()
		respond(n, w, r)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) url() string { return h.srv.URL + "/hook" }

func (h *hook) requests() []request {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reqs)
}

// statuses answers attempt n with codes[n-1], repeating the last code.
func statuses(codes ...int) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(codes[min(n, len(codes))-1])
	}
}

// newSender returns a sender allowed to reach 127.0.0.1 that retries
// without noticeable waits.
func newSender(t *testing.T) *Sender {
	s := &Sender{
		BaseBackoff: time.Millisecond,
		MaxBackoff:  5 * time.Millisecond,
		Guard:       netguard.Guard{Allow: []string{"127.0.0.0/8"}},
		Logger:      slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	t.Cleanup(func() { s.httpClient().CloseIdleConnections() })
	return s
}

func hookConfig(url string) Config {
	return Config{TaskPushNotificationConfig: a2a.TaskPushNotificationConfig{ID: "c1", TaskID: "t1", URL: url}}
}

func statusEvent(state a2a.TaskState) *a2a.TaskStatusUpdateEvent {
	return a2a.NewStatusUpdate("t1", "ctx1", state, a2a.NewTextMessage(a2a.RoleAgent, "which city?"))
}

func snapshotTask(state a2a.TaskState) *a2a.Task {
	return &a2a.Task{
		ID: "t1", ContextID: "ctx1",
		Status:  a2a.TaskStatus{State: state, Timestamp: a2a.Now()},
		History: []a2a.Message{*a2a.NewTextMessage(a2a.RoleUser, "book a flight")},
	}
}

// jsonKeys returns the sorted top-level keys of a JSON object.
func jsonKeys(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, body)
	}
	return slices.Sorted(maps.Keys(m))
}

func TestNotifyPayload(t *testing.T) {
	artifact := a2a.NewArtifactUpdate("t1", "ctx1", a2a.Artifact{ArtifactID: "a1", Parts: []a2a.Part{a2a.TextPart("hi")}}, false, true)
	tests := []struct {
		name     string
		version  string
		auth     *a2a.AuthenticationInfo
		token    string
		ev       a2a.Event
		snapshot *a2a.Task

		wantType string
		wantAuth string // "" means no Authorization header
		check    func(t *testing.T, body []byte)
	}{
		{
			name: "1.0 status update", version: "1.0",
			auth: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "secret"}, token: "tok",
			ev: statusEvent(a2a.TaskStateInputRequired), snapshot: snapshotTask(a2a.TaskStateInputRequired),
			wantType: "application/a2a+json", wantAuth: "Bearer secret",
			check: func(t *testing.T, body []byte) {
				if keys := jsonKeys(t, body); fmt.Sprint(keys) != "[statusUpdate]" {
					t.Fatalf("top-level keys %v, want [statusUpdate]", keys)
				}
				var sr a2a.StreamResponse
				if err := json.Unmarshal(body, &sr); err != nil {
					t.Fatal(err)
				}
				if u := sr.StatusUpdate; u == nil || u.TaskID != "t1" || u.Status.State != a2a.TaskStateInputRequired || u.Status.Message.Text() != "which city?" {
					t.Fatalf("decoded %+v from %s", sr, body)
				}
			},
		},
		{
			name: "empty version is 1.0", auth: &a2a.AuthenticationInfo{Scheme: "Bearer"},
			ev: artifact, wantType: "application/a2a+json", wantAuth: "Bearer",
			check: func(t *testing.T, body []byte) {
				var sr a2a.StreamResponse
				if err := json.Unmarshal(body, &sr); err != nil {
					t.Fatal(err)
				}
				if u := sr.ArtifactUpdate; u == nil || u.Artifact.ArtifactID != "a1" || !u.LastChunk {
					t.Fatalf("decoded %+v from %s", sr, body)
				}
			},
		},
		{
			name: "1.0 task, no scheme, no token", version: "1.0",
			auth: &a2a.AuthenticationInfo{Credentials: "orphan"},
			ev:   snapshotTask(a2a.TaskStateCompleted), wantType: "application/a2a+json",
			check: func(t *testing.T, body []byte) {
				if keys := jsonKeys(t, body); fmt.Sprint(keys) != "[task]" {
					t.Fatalf("top-level keys %v, want [task]", keys)
				}
			},
		},
		{
			name: "0.3 sends the task snapshot", version: "0.3",
			auth: &a2a.AuthenticationInfo{Scheme: "Basic", Credentials: "dXNlcjpwdw=="}, token: "tok03",
			ev: statusEvent(a2a.TaskStateInputRequired), snapshot: snapshotTask(a2a.TaskStateInputRequired),
			wantType: "application/json", wantAuth: "Basic dXNlcjpwdw==",
			check: func(t *testing.T, body []byte) {
				var task struct {
					Kind   string `json:"kind"`
					ID     string `json:"id"`
					Status struct {
						State string `json:"state"`
					} `json:"status"`
					History []struct {
						Kind string `json:"kind"`
						Role string `json:"role"`
					} `json:"history"`
				}
				if err := json.Unmarshal(body, &task); err != nil {
					t.Fatal(err)
				}
				if task.Kind != "task" || task.ID != "t1" || task.Status.State != "input-required" ||
					len(task.History) != 1 || task.History[0].Kind != "message" || task.History[0].Role != "user" {
					t.Fatalf("0.3 body %s", body)
				}
			},
		},
		{
			name: "0.3 with a task event and no snapshot", version: "0.3",
			ev: snapshotTask(a2a.TaskStateCompleted), wantType: "application/json",
			check: func(t *testing.T, body []byte) {
				if !bytes.Contains(body, []byte(`"kind":"task"`)) || !bytes.Contains(body, []byte(`"state":"completed"`)) {
					t.Fatalf("0.3 body %s", body)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHook(t, statuses(http.StatusNoContent))
			c := hookConfig(h.url())
			c.ProtocolVersion, c.Authentication, c.Token = tt.version, tt.auth, tt.token
			if err := newSender(t).Notify(context.Background(), c, tt.ev, tt.snapshot); err != nil {
				t.Fatal(err)
			}
			reqs := h.requests()
			if len(reqs) != 1 {
				t.Fatalf("webhook got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPost || r.path != "/hook" {
				t.Errorf("request %s %s, want POST /hook", r.method, r.path)
			}
			if got := r.header.Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type %q, want %q", got, tt.wantType)
			}
			if got, ok := r.header["Authorization"]; tt.wantAuth == "" && ok || tt.wantAuth != "" && fmt.Sprint(got) != "["+tt.wantAuth+"]" {
				t.Errorf("Authorization %q, want %q", got, tt.wantAuth)
			}
			if got, ok := r.header["X-A2a-Notification-Token"]; tt.token == "" && ok || tt.token != "" && fmt.Sprint(got) != "["+tt.token+"]" {
				t.Errorf("X-A2A-Notification-Token %q, want %q", got, tt.token)
			}
			tt.check(t, r.body)
		})
	}
}

func TestNotifyRetries(t *testing.T) {
	tests := []struct {
		name    string
		respond func(int, http.ResponseWriter, *http.Request)
		// hour makes the computed backoff huge, so only Retry-After can
		// explain a prompt retry.
		hour         bool
		wantAttempts int
		wantErr      string // "" for success
	}{
		{name: "500 then success", respond: statuses(500, 502, 200), wantAttempts: 3},
		{name: "408 and 425 are transient", respond: statuses(408, 425, 204), wantAttempts: 3},
		{
			name: "429 with Retry-After: 0", hour: true, wantAttempts: 2,
			respond: func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				w.WriteHeader(http.StatusOK)
			},
		},
		{name: "gives up after MaxAttempts", respond: statuses(503), wantAttempts: 3, wantErr: "3 attempt(s)"},
		{
			name: "400 is not retried", wantAttempts: 1, wantErr: "400 Bad Request",
			respond: func(_ int, w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "missing field taskId", http.StatusBadRequest)
			},
		},
		{name: "404 is not retried", respond: statuses(404), wantAttempts: 1, wantErr: "not retried"},
		{
			name: "redirect is not followed", wantAttempts: 1, wantErr: "302 Found",
			respond: func(_ int, w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "/elsewhere", http.StatusFound)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHook(t, tt.respond)
			s := newSender(t)
			s.MaxAttempts = 3
			if tt.hour {
				s.BaseBackoff, s.MaxBackoff = time.Hour, time.Hour
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := s.Notify(ctx, hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Notify = %v, want success", err)
			case tt.wantErr != "" && err == nil:
				t.Fatalf("Notify succeeded, want an error about %q", tt.wantErr)
			case tt.wantErr != "" && (!strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), h.url())):
				t.Fatalf("Notify = %v, want it to name the URL and mention %q", err, tt.wantErr)
			}
			if got := int(h.calls.Load()); got != tt.wantAttempts {
				t.Fatalf("webhook got %d attempts, want %d", got, tt.wantAttempts)
			}
			for _, r := range h.requests() {
				if r.path != "/hook" {
					t.Fatalf("request to %s: a redirect was followed", r.path)
				}
			}
		})
	}
}

func TestNotifyTimeout(t *testing.T) {
	release := make(chan struct{})
	h := newHook(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done(): // the sender gave up
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	s := newSender(t)
	s.Timeout, s.MaxAttempts = 50*time.Millisecond, 2
	err := s.Notify(context.Background(), hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil)
	if err == nil {
		t.Fatal("Notify succeeded against a webhook that never answers")
	}
	if errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "2 attempt(s)") {
		t.Fatalf("Notify = %v, want a failure after 2 attempts", err)
	}
	if got := h.calls.Load(); got != 2 {
		t.Fatalf("webhook got %d attempts, want 2", got)
	}
}

// signalHandler is a slog.Handler that reports each record's message.
type signalHandler struct{ msgs chan<- string }

func (h signalHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h signalHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.msgs <- r.Message:
	default:
	}
	return nil
}
func (h signalHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h signalHandler) WithGroup(string) slog.Handler      { return h }

func TestNotifyCancelDuringBackoff(t *testing.T) {
	h := newHook(t, statuses(http.StatusServiceUnavailable))
	msgs := make(chan string, 10)
	s := newSender(t)
	// The failed attempt is logged just before the wait; an hour-long wait
	// that ended on its own would hang the test.
	s.BaseBackoff, s.MaxBackoff = time.Hour, time.Hour
	s.Logger = slog.New(signalHandler{msgs})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- s.Notify(ctx, hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil) }()
	for msg := range msgs {
		if msg == "push: delivery attempt failed" {
			break
		}
	}
	cancel()
	err := <-errc
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Notify after cancel = %v, want context.Canceled", err)
	}
	if got := h.calls.Load(); got != 1 {
		t.Fatalf("webhook got %d attempts, want 1", got)
	}
}

func TestNotifyCancelledBeforehand(t *testing.T) {
	h := newHook(t, statuses(http.StatusOK))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := newSender(t).Notify(ctx, hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Notify with a cancelled context = %v, want context.Canceled", err)
	}
}

func TestNotifyGuardRefusal(t *testing.T) {
	h := newHook(t, statuses(http.StatusOK))
	s := newSender(t)
	s.Guard = netguard.Guard{} // the zero Guard refuses 127.0.0.1
	err := s.Notify(context.Background(), hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil)
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "1 attempt(s)") {
		t.Fatalf("Notify to 127.0.0.1 with the zero Guard = %v, want a loopback refusal after 1 attempt", err)
	}
	if got := h.calls.Load(); got != 0 {
		t.Fatalf("webhook got %d requests, want none", got)
	}
}

func TestNotifyCustomClient(t *testing.T) {
	h := newHook(t, statuses(http.StatusOK))
	// A caller's client is used as is but for redirects; this one does
	// not dial through the guard, so the zero Guard does not stop it.
	s := &Sender{Client: h.srv.Client()}
	if err := s.Notify(context.Background(), hookConfig(h.url()), statusEvent(a2a.TaskStateWorking), nil); err != nil {
		t.Fatal(err)
	}
	if got := h.calls.Load(); got != 1 {
		t.Fatalf("webhook got %d requests, want 1", got)
	}
}

func TestNotifyBadInput(t *testing.T) {
	h := newHook(t, statuses(http.StatusOK))
	tests := []struct {
		name     string
		version  string
		url      string
		ev       a2a.Event
		snapshot *a2a.Task
		want     string
	}{
		{"unknown version", "2.0", h.url(), statusEvent(a2a.TaskStateWorking), nil, `"2.0"`},
		{"0.3 without snapshot", "0.3", h.url(), statusEvent(a2a.TaskStateWorking), nil, "snapshot"},
		{"nil event", "1.0", h.url(), nil, nil, "no event"},
		{"nil task event", "1.0", h.url(), (*a2a.Task)(nil), nil, "no event"},
		{"ftp URL", "1.0", "ftp://127.0.0.1/hook", statusEvent(a2a.TaskStateWorking), nil, "ftp://"},
		{"no URL", "1.0", "", statusEvent(a2a.TaskStateWorking), nil, "not an http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := hookConfig(tt.url)
			c.ProtocolVersion = tt.version
			err := newSender(t).Notify(context.Background(), c, tt.ev, tt.snapshot)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Notify = %v, want an error mentioning %s", err, tt.want)
			}
		})
	}
	if got := h.calls.Load(); got != 0 {
		t.Fatalf("webhook got %d requests, want none", got)
	}
}

func TestNotifyLogsNoCredentials(t *testing.T) {
	h := newHook(t, statuses(http.StatusInternalServerError))
	var buf bytes.Buffer
	s := newSender(t)
	s.MaxAttempts = 2
	s.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := hookConfig(strings.Replace(h.url(), "http://", "http://user:pw-secret@", 1))
	c.Authentication = &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "cred-secret"}
	c.Token = "token-secret"
	err := s.Notify(context.Background(), c, statusEvent(a2a.TaskStateWorking), nil)
	if err == nil {
		t.Fatal("Notify succeeded against a failing webhook")
	}
	logs := buf.String()
	for _, secret := range []string{"pw-secret", "cred-secret", "token-secret"} {
		if strings.Contains(logs, secret) || strings.Contains(err.Error(), secret) {
			t.Fatalf("%s leaked:\nerror: %v\nlogs:\n%s", secret, err, logs)
		}
	}
	for _, want := range []string{"level=DEBUG", "level=WARN", "task=t1", "attempt=1", "attempt=2", "url=", "status=500"} {
		if !strings.Contains(logs, want) {
			t.Fatalf("logs lack %q:\n%s", want, logs)
		}
	}
}

func TestNotifyConcurrent(t *testing.T) {
	h := newHook(t, statuses(http.StatusOK))
	s := newSender(t)
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := hookConfig(h.url())
			c.ID = fmt.Sprint("c", i)
			if i%2 == 1 {
				c.ProtocolVersion = "0.3"
			}
			if err := s.Notify(context.Background(), c, statusEvent(a2a.TaskStateWorking), snapshotTask(a2a.TaskStateWorking)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := h.calls.Load(); got != n {
		t.Fatalf("webhook got %d requests, want %d", got, n)
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		base, max time.Duration
		bounds    []time.Duration // bound after attempt 1, 2, ...
	}{
		{0, 0, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}},
		{time.Millisecond, 3 * time.Millisecond, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}},
		{time.Second, time.Millisecond, []time.Duration{time.Millisecond, time.Millisecond}},
	}
	// Full jitter spreads the waits over [0, bound]. Each wait is checked
	// against its bound, and the draws must reach the upper half of it and
	// differ: a backoff stuck at 0, at one value, or not growing fails. With
	// 200 draws, a correct backoff fails by chance with probability below
	// 2^-190.
	check := func(s *Sender, n int, bound time.Duration) {
		t.Helper()
		seen := map[time.Duration]bool{}
		var top time.Duration
		for range 200 {
			d := s.backoff(n)
			if d < 0 || d > bound {
				t.Fatalf("base %v max %v: backoff after attempt %d = %v, want within [0, %v]", s.BaseBackoff, s.MaxBackoff, n, d, bound)
			}
			seen[d] = true
			top = max(top, d)
		}
		if top <= bound/2 {
			t.Fatalf("base %v max %v: 200 backoffs after attempt %d all at most %v, want them spread up to %v", s.BaseBackoff, s.MaxBackoff, n, top, bound)
		}
		if len(seen) < 2 {
			t.Fatalf("base %v max %v: every backoff after attempt %d is %v, want jitter", s.BaseBackoff, s.MaxBackoff, n, top)
		}
	}
	for _, tt := range tests {
		s := &Sender{BaseBackoff: tt.base, MaxBackoff: tt.max}
		for i, bound := range tt.bounds {
			check(s, i+1, bound)
		}
		// Far beyond where doubling would overflow, the bound stays MaxBackoff.
		check(s, 200, tt.bounds[len(tt.bounds)-1])
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"0", 0, true},
		{" 7 ", 7 * time.Second, true},
		{"Wed, 01 Jan 2025 12:00:30 GMT", 30 * time.Second, true},
		{"Wed, 01 Jan 2025 11:00:00 GMT", 0, true},
		{"99999999999999999999", time.Duration(1<<63 - 1), true},
		{"", 0, false},
		{"-1", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		if got, ok := parseRetryAfter(tt.header, now); got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}
