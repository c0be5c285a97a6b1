package credentials

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/internal/idptest"
)

func TestParseTokenResponse(t *testing.T) {
	const tok = "eyJhbGciOi.payload.sig"
	for _, tc := range []struct {
		name     string
		status   int
		body     string
		lifetime time.Duration
		issued   string
		err      string // a substring of the error; "": a grant
	}{
		{name: "grant", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":3600}`, lifetime: time.Hour},
		{name: "token type in lower case", status: 200, body: `{"access_token":"` + tok + `","token_type":"bearer","expires_in":60}`, lifetime: time.Minute},
		{name: "expires_in as a string", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":"120"}`, lifetime: 2 * time.Minute},
		{name: "no expires_in", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer"}`, lifetime: defaultLifetime},
		{name: "null expires_in", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":null}`, lifetime: defaultLifetime},
		{name: "expires_in 0: use once", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":0}`, lifetime: 0},
		{name: "expires_in past the cap", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":99999999999}`, lifetime: maxLifetime},
		{name: "exchange", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":30,"issued_token_type":"` + TokenTypeAccessToken + `"}`,
			lifetime: 30 * time.Second, issued: TokenTypeAccessToken},

		{name: "negative expires_in", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":-5}`, err: "expires_in -5"},
		{name: "fractional expires_in", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":1.5}`, err: "expires_in 1.5"},
		{name: "expires_in an object", status: 200, body: `{"access_token":"` + tok + `","token_type":"Bearer","expires_in":{}}`, err: "expires_in {}"},
		{name: "no access token", status: 200, body: `{"token_type":"Bearer","expires_in":60}`, err: "no access_token"},
		{name: "token with a line break", status: 200, body: `{"access_token":"a\r\nX-Evil: 1","token_type":"Bearer"}`, err: "characters a bearer token may not"},
		{name: "token with a space", status: 200, body: `{"access_token":"a b","token_type":"Bearer"}`, err: "characters a bearer token may not"},
		{name: "token too long", status: 200, body: `{"access_token":"` + strings.Repeat("a", maxAccessToken+1) + `","token_type":"Bearer"}`, err: "longer than"},
		{name: "not a bearer token", status: 200, body: `{"access_token":"` + tok + `","token_type":"N_A"}`, err: `token_type "N_A": want Bearer`},
		{name: "no token type", status: 200, body: `{"access_token":"` + tok + `"}`, err: `token_type ""`},
		{name: "not JSON", status: 200, body: `<html>ok</html>`, err: "not a JSON token response"},
		{name: "JSON array", status: 200, body: `[]`, err: "not a JSON token response"},
		{name: "OAuth error", status: 401, body: `{"error":"invalid_client","error_description":"bad secret"}`, err: "HTTP 401: invalid_client: bad secret"},
		{name: "OAuth error without description", status: 400, body: `{"error":"invalid_grant"}`, err: "HTTP 400: invalid_grant"},
		{name: "error page", status: 502, body: "<h1>Bad Gateway</h1>\n", err: "HTTP 502: <h1>Bad Gateway</h1>?"},
		{name: "grant with an error status", status: 500, body: `{"access_token":"` + tok + `","token_type":"Bearer"}`, err: "HTTP 500"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := parseTokenResponse(tc.status, []byte(tc.body))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				if tc.status == 200 && strings.Contains(err.Error(), tok) {
					t.Errorf("the error repeats the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.token != tok || g.lifetime != tc.lifetime || g.issuedType != tc.issued {
				t.Errorf("grant = %+v, want lifetime %v, issued %q", g, tc.lifetime, tc.issued)
			}
		})
	}
}

func TestRenewAt(t *testing.T) {
	t0 := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		lifetime, after time.Duration
	}{
		{time.Hour, time.Hour - 30*time.Second},
		{time.Minute, 30 * time.Second},
		{10 * time.Second, 5 * time.Second},
		{0, 0},
	} {
		if got := renewAt(t0, tc.lifetime).Sub(t0); got != tc.after {
			t.Errorf("a token of %v is renewed after %v, want %v", tc.lifetime, got, tc.after)
		}
	}
}

// clock is a test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

const (
	clientID     = "gateway"
	clientSecret = "gateway-secret-0123456789"
)

func newIdP(t *testing.T) *idptest.IdP {
	return idptest.New(t, idptest.Config{Clients: map[string]string{clientID: clientSecret}, TTL: 10 * time.Minute})
}

// secretFile writes a secret to a file of the test's and returns it.
func secretFile(t *testing.T, value string) Secret {
	t.Helper()
	path := t.TempDir() + "/secret"
	writeFile(t, path, value+"\n")
	return FromFile(path)
}

// TestClientCredentials: the token is asked for once, with the agent's
// client id and secret, audience, resource and scopes, and sent until
// shortly before it expires; an endpoint's refusal or outage fails the
// call with an error naming the endpoint and never the secret, and is
// not kept: the next call asks again.
func TestClientCredentials(t *testing.T) {
	idp := newIdP(t)
	ctx := context.Background()
	newCC := func(t *testing.T, secret string) (*ClientCredentials, *clock) {
		cc, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: idp.TokenURL(), ClientID: clientID, ClientSecret: secretFile(t, secret),
			Audience: "weather", Resource: "https://weather.test/", Scopes: []string{"a2a:call", "tasks"}})
		if err != nil {
			t.Fatal(err)
		}
		clk := &clock{t: time.Now()}
		cc.cache.now = clk.now
		return cc, clk
	}
	requests := func() int { return len(idp.Requests()) }

	cc, clk := newCC(t, clientSecret)
	before := requests()
	h1, err := cc.Header(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := idp.Requests()[before]
	if r.GrantType != "client_credentials" || r.ClientID != clientID || !r.Basic || r.Scope != "a2a:call tasks" ||
		strings.Join(r.Audience, ",") != "weather" || strings.Join(r.Resource, ",") != "https://weather.test/" {
		t.Errorf("the token request was %+v", r)
	}
	// Step by step: reused before 9:30, renewed after.
	clk.add(9*time.Minute + 29*time.Second)
	h2, err := cc.Header(ctx)
	if err != nil || h2.Get("Authorization") != h1.Get("Authorization") || requests() != before+1 {
		t.Fatalf("at 9:29 the token was not reused: %v, %d requests", err, requests()-before)
	}
	clk.add(2 * time.Second)
	h3, err := cc.Header(ctx)
	if err != nil || h3.Get("Authorization") == h1.Get("Authorization") || requests() != before+2 {
		t.Fatalf("at 9:31 the token was not renewed: %v, %d requests", err, requests()-before)
	}
	if !strings.HasPrefix(h3.Get("Authorization"), "Bearer ey") {
		t.Errorf("Authorization: %q", h3.Get("Authorization"))
	}

	t.Run("outage", func(t *testing.T) {
		cc, _ := newCC(t, clientSecret)
		idp.Down(1)
		_, err := cc.Header(ctx)
		if err == nil || !strings.Contains(err.Error(), "token endpoint "+idp.TokenURL()+": HTTP 503: temporarily_unavailable") {
			t.Fatalf("err = %v", err)
		}
		if _, err := cc.Header(ctx); err != nil {
			t.Fatalf("after the outage: %v", err)
		}
	})
	t.Run("wrong secret", func(t *testing.T) {
		const wrong = "not-the-gateway-secret"
		cc, _ := newCC(t, wrong)
		_, err := cc.Header(ctx)
		if err == nil || !strings.Contains(err.Error(), idp.TokenURL()) || !strings.Contains(err.Error(), "invalid_client") {
			t.Fatalf("err = %v", err)
		}
		if strings.Contains(err.Error(), wrong) {
			t.Errorf("the error holds the secret: %v", err)
		}
	})
	t.Run("missing secret file", func(t *testing.T) {
		cc, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: idp.TokenURL(), ClientID: clientID, ClientSecret: FromFile(t.TempDir() + "/none")})
		if err != nil {
			t.Fatal(err)
		}
		n := requests()
		if _, err := cc.Header(ctx); err == nil || !strings.Contains(err.Error(), "/none") || !strings.Contains(err.Error(), "client secret") {
			t.Fatalf("err = %v", err)
		}
		if requests() != n {
			t.Error("a token was asked for without a secret")
		}
	})
	t.Run("endpoint down", func(t *testing.T) {
		cc, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: "http://127.0.0.1:1/token", ClientID: clientID, ClientSecret: secretFile(t, clientSecret)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cc.Header(ctx); err == nil || !strings.Contains(err.Error(), "token endpoint http://127.0.0.1:1/token") || strings.Contains(err.Error(), clientSecret) {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestSingleFlight: calls that need a token at the same time share one
// request; a call whose context ends while it fetches leaves the others
// to fetch again rather than fail with its cancellation.
func TestSingleFlight(t *testing.T) {
	idp := newIdP(t)
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	cc, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: idp.TokenURL(), ClientID: clientID, ClientSecret: secretFile(t, clientSecret), HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}

	// The first caller goes away while its request hangs.
	leader, cancel := context.WithCancel(context.Background())
	leaderErr := make(chan error, 1)
	go func() {
		_, err := cc.Header(leader)
		leaderErr <- err
	}()
	<-started
	var wg sync.WaitGroup
	tokens := make([]string, 8)
	for i := range tokens {
		wg.Go(func() {
			h, err := cc.Header(context.Background())
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
				return
			}
			tokens[i] = h.Get("Authorization")
		})
	}
	cancel()
	if err := <-leaderErr; !errors.Is(err, context.Canceled) {
		t.Errorf("the leaving caller's error = %v, want its cancellation", err)
	}
	<-started // the next fetch, by one of those left
	close(release)
	wg.Wait()
	for i, tok := range tokens {
		if tok == "" || tok != tokens[0] {
			t.Errorf("caller %d got %q, caller 0 %q", i, tok, tokens[0])
		}
	}
	if n := len(idp.Requests()); n != 1 {
		t.Errorf("the IdP got %d requests, want 1", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// login authenticates a user's token from idp as an agent whose audience
// is aud would, and returns a context carrying the principal.
func login(t *testing.T, idp *idptest.IdP, aud, token string) context.Context {
	t.Helper()
	p, err := idp.Authenticator(t, aud).Authenticate(context.Background(), auth.Credentials{Header: func(name string) string {
		if strings.EqualFold(name, "Authorization") {
			return "Bearer " + token
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	return auth.NewContext(context.Background(), p)
}

// TestExchange: the caller's token is exchanged for one meant for the
// agent called (RFC 8693), whose subject is the caller and whose actor is
// this agent; one exchange per caller's token, kept until shortly before
// either token expires, the cache bounded; no caller, no exchange.
func TestExchange(t *testing.T) {
	idp := newIdP(t)
	newX := func(t *testing.T, size int) (*Exchange, *clock) {
		x, err := NewExchange(ExchangeConfig{TokenURL: idp.TokenURL(), ClientID: clientID, ClientSecret: secretFile(t, clientSecret),
			Audience: "weather", Scopes: []string{"a2a:call"}, CacheSize: size})
		if err != nil {
			t.Fatal(err)
		}
		clk := &clock{t: time.Now()}
		x.cache.now = clk.now
		return x, clk
	}
	user := func(sub string, ttl time.Duration) (context.Context, string) {
		tok := idp.Mint(t, map[string]any{"sub": sub, "aud": "gateway", "tenant": "acme", "exp": time.Now().Add(ttl).Unix()})
		return login(t, idp, "gateway", tok), tok
	}
	alice, aliceToken := user("alice", time.Hour)
	bob, _ := user("bob", time.Hour)
	carol, _ := user("carol", time.Hour)

	x, clk := newX(t, 2)
	before := len(idp.Requests())
	h, err := x.Header(alice)
	if err != nil {
		t.Fatal(err)
	}
	r := idp.Requests()[before]
	if r.GrantType != idptest.GrantTokenExchange || r.SubjectToken != aliceToken || r.SubjectTokenType != TokenTypeAccessToken ||
		r.ClientID != clientID || strings.Join(r.Audience, ",") != "weather" || r.Scope != "a2a:call" {
		t.Errorf("the exchange request was %+v", r)
	}
	// What the agent called sees.
	exchanged := strings.TrimPrefix(h.Get("Authorization"), "Bearer ")
	p, err := idp.Authenticator(t, "weather").Authenticate(context.Background(), auth.Credentials{Header: func(string) string { return "Bearer " + exchanged }})
	if err != nil {
		t.Fatalf("the exchanged token is not one for weather: %v", err)
	}
	if act, _ := p.Claims["act"].(map[string]any); p.Subject != "alice" || p.Tenant != "acme" || act["sub"] != clientID {
		t.Errorf("the exchanged token's principal is %v, act %v", p, p.Claims["act"])
	}

	asks := func() int { return len(idp.Requests()) - before }
	for _, step := range []struct {
		name string
		ctx  context.Context
		wait time.Duration
		asks int
	}{
		{"alice again", alice, 0, 1},
		{"bob", bob, 0, 2},
		{"alice, kept", alice, 0, 2},
		{"carol, bob goes", carol, 0, 3},
		{"alice, still kept", alice, 0, 3},
		{"bob again", bob, 0, 4},
		{"alice near expiry", alice, 9*time.Minute + 31*time.Second, 5},
	} {
		clk.add(step.wait)
		if _, err := x.Header(step.ctx); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if asks() != step.asks {
			t.Fatalf("%s: %d exchanges so far, want %d", step.name, asks(), step.asks)
		}
	}

	t.Run("kept no longer than the caller's token", func(t *testing.T) {
		x, clk := newX(t, 0)
		dave, _ := user("dave", 2*time.Minute)
		n := len(idp.Requests())
		for range 2 {
			if _, err := x.Header(dave); err != nil {
				t.Fatal(err)
			}
		}
		clk.add(2*time.Minute + time.Second)
		if _, err := x.Header(dave); err != nil || len(idp.Requests())-n != 2 {
			t.Errorf("%v; %d exchanges; the one kept past the caller's token's expiry was sent", err, len(idp.Requests())-n)
		}
	})
	t.Run("no caller", func(t *testing.T) {
		x, _ := newX(t, 0)
		n := len(idp.Requests())
		for name, ctx := range map[string]context.Context{
			"anonymous": context.Background(),
			"API key":   auth.NewContext(context.Background(), &auth.Principal{Scheme: "apiKey", Issuer: "apikey", Subject: "svc"}),
		} {
			if _, err := x.Header(ctx); !errors.Is(err, ErrNoCallerToken) {
				t.Errorf("%s: err = %v, want ErrNoCallerToken", name, err)
			}
		}
		if len(idp.Requests()) != n {
			t.Error("a token was exchanged for no caller")
		}
	})
	t.Run("refused", func(t *testing.T) {
		x, _ := newX(t, 0)
		expired := idp.Mint(t, map[string]any{"sub": "eve", "aud": "gateway", "exp": time.Now().Add(-time.Hour).Unix()})
		ctx := auth.NewContext(context.Background(), &auth.Principal{Scheme: "oidc", Issuer: idp.Issuer(), Subject: "eve", Token: expired})
		_, err := x.Header(ctx)
		if err == nil || !strings.Contains(err.Error(), "invalid_grant") || !strings.Contains(err.Error(), idp.TokenURL()) {
			t.Fatalf("err = %v", err)
		}
		if strings.Contains(err.Error(), expired) {
			t.Errorf("the error holds the caller's token: %v", err)
		}
	})
}

func TestForward(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    *auth.Principal
		want string // the Authorization header; "": ErrNoCallerToken
	}{
		{"bearer", &auth.Principal{Subject: "alice", Token: "tok.en"}, "Bearer tok.en"},
		{"anonymous", nil, ""},
		{"API key", &auth.Principal{Scheme: "apiKey", Subject: "svc"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.p != nil {
				ctx = auth.NewContext(ctx, tc.p)
			}
			h, err := Forward{}.Header(ctx)
			if tc.want == "" {
				if !errors.Is(err, ErrNoCallerToken) || !strings.Contains(err.Error(), "forward") {
					t.Fatalf("err = %v, want ErrNoCallerToken", err)
				}
				return
			}
			if err != nil || h.Get("Authorization") != tc.want {
				t.Fatalf("Header = %v, %v", h, err)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	secret := FromEnv("UNUSED")
	for _, tc := range []struct {
		name string
		new  func() error
		err  string
	}{
		{"cc: no token URL", func() error {
			_, err := NewClientCredentials(ClientCredentialsConfig{ClientID: "a", ClientSecret: secret})
			return err
		}, "ClientCredentialsConfig.TokenURL is required"},
		{"cc: relative token URL", func() error {
			_, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: "/token", ClientID: "a", ClientSecret: secret})
			return err
		}, `ClientCredentialsConfig.TokenURL "/token"`},
		{"cc: user info in the URL", func() error {
			_, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: "https://a:b@idp/token", ClientID: "a", ClientSecret: secret})
			return err
		}, "without user info"},
		{"cc: no client id", func() error {
			_, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: "https://idp/token", ClientSecret: secret})
			return err
		}, "ClientCredentialsConfig.ClientID is required"},
		{"cc: no secret", func() error {
			_, err := NewClientCredentials(ClientCredentialsConfig{TokenURL: "https://idp/token", ClientID: "a"})
			return err
		}, "ClientCredentialsConfig.ClientSecret is required"},
		{"exchange: no audience", func() error {
			_, err := NewExchange(ExchangeConfig{TokenURL: "https://idp/token", ClientID: "a", ClientSecret: secret})
			return err
		}, "ExchangeConfig.Audience or ExchangeConfig.Resource is required"},
		{"exchange: subject token type", func() error {
			_, err := NewExchange(ExchangeConfig{TokenURL: "https://idp/token", ClientID: "a", ClientSecret: secret, Audience: "x", SubjectTokenType: "saml"})
			return err
		}, `ExchangeConfig.SubjectTokenType "saml"`},
		{"exchange: cache size", func() error {
			_, err := NewExchange(ExchangeConfig{TokenURL: "https://idp/token", ClientID: "a", ClientSecret: secret, Resource: "x", CacheSize: -1})
			return err
		}, "ExchangeConfig.CacheSize must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.new(); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one containing %q", err, tc.err)
			}
		})
	}
}
