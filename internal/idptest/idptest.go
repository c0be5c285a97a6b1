// Package idptest is an identity provider for tests: a small OAuth 2.0
// authorization server on 127.0.0.1 that signs JWT access tokens with its
// own RSA and EC keys, publishes them as a JWKS (and an OpenID discovery
// document naming it), grants tokens for the client-credentials grant
// (RFC 6749 section 4.4) and token exchange (RFC 8693) to the clients it
// knows, and records every token request. No real IdP runs where the
// tests do; this one speaks the same wire, so that a2a/credentials and
// a2a/auth are tested against a server rather than against each other.
package idptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

// Grant types and token types of the token endpoint.
const (
	GrantClientCredentials = "client_credentials"
	GrantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	TokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	TokenTypeJWT           = "urn:ietf:params:oauth:token-type:jwt"
)

// Config configures an IdP.
type Config struct {
	// Clients are the OAuth clients the token endpoint grants tokens to:
	// secrets by client id.
	Clients map[string]string
	// TTL is the lifetime of the tokens it grants (their exp and the
	// response's expires_in); 0 means 5 minutes.
	TTL time.Duration
	// Algorithm signs the tokens it grants and mints: "RS256" (the
	// default) or "ES256". Both keys are in the JWKS.
	Algorithm string
}

// Request is one request to the token endpoint, as the IdP understood it.
type Request struct {
	GrantType string
	// ClientID is the client that authenticated, "" when none did.
	ClientID string
	// Basic reports that the client authenticated with HTTP Basic.
	Basic            bool
	Scope            string
	Audience         []string
	Resource         []string
	SubjectToken     string
	SubjectTokenType string
	// Status is the HTTP status the IdP answered with.
	Status int
}

// IdP is a running identity provider.
type IdP struct {
	srv     *httptest.Server
	cfg     Config
	rsa     *rsa.PrivateKey
	ec      *ecdsa.PrivateKey
	signers map[string]jose.Signer

	mu       sync.Mutex
	requests []Request
	down     int // answer 503 to this many more token requests
}

// New starts an IdP on 127.0.0.1 until the test ends.
func New(t testing.TB, cfg Config) *IdP {
	t.Helper()
	if cfg.TTL == 0 {
		cfg.TTL = 5 * time.Minute
	}
	if cfg.Algorithm == "" {
		cfg.Algorithm = string(jose.RS256)
	}
	p := &IdP{cfg: cfg, signers: map[string]jose.Signer{}}
	var err error
	if p.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	if p.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
		t.Fatal(err)
	}
	for alg, key := range map[jose.SignatureAlgorithm]any{jose.RS256: p.rsa, jose.ES256: p.ec} {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: string(alg)}},
			(&jose.SignerOptions{}).WithType("JWT"))
		if err != nil {
			t.Fatal(err)
		}
		p.signers[string(alg)] = s
	}
	if p.signers[cfg.Algorithm] == nil {
		t.Fatalf("idptest: algorithm %q: want RS256 or ES256", cfg.Algorithm)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks.json", p.serveJWKS)
	mux.HandleFunc("GET /.well-known/openid-configuration", p.serveDiscovery)
	mux.HandleFunc("/token", p.serveToken)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// Issuer is the IdP's issuer identifier (iss): its base URL.
func (p *IdP) Issuer() string { return p.srv.URL }

// TokenURL is the token endpoint.
func (p *IdP) TokenURL() string { return p.srv.URL + "/token" }

// JWKSURL is where the IdP publishes its public keys.
func (p *IdP) JWKSURL() string { return p.srv.URL + "/jwks.json" }

// Authenticator returns an auth.JWT that admits the IdP's tokens for
// audience, fetching the IdP's keys from its JWKS URL.
func (p *IdP) Authenticator(t testing.TB, audience string) *auth.JWT {
	t.Helper()
	a, err := auth.NewJWT(auth.JWTConfig{Scheme: "oidc", Issuer: p.Issuer(), Audience: audience, JWKSURL: p.JWKSURL()})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Mint signs a token with claims: iss, iat and exp (now and the TTL from
// now) are added unless claims has them. It is how a test gets an end
// user's token, as a login would give it.
func (p *IdP) Mint(t testing.TB, claims map[string]any) string {
	t.Helper()
	s, err := p.mint(claims)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (p *IdP) mint(claims map[string]any) (string, error) {
	c := map[string]any{"iss": p.Issuer(), "iat": time.Now().Unix(), "exp": time.Now().Add(p.cfg.TTL).Unix()}
	for k, v := range claims {
		c[k] = v
	}
	return jwt.Signed(p.signers[p.cfg.Algorithm]).Claims(c).Serialize()
}

// Requests returns the token requests so far, in order.
func (p *IdP) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

// Down makes the token endpoint answer the next n requests with 503.
func (p *IdP) Down(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = n
}

func (p *IdP) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &p.rsa.PublicKey, KeyID: string(jose.RS256), Algorithm: string(jose.RS256), Use: "sig"},
		{Key: &p.ec.PublicKey, KeyID: string(jose.ES256), Algorithm: string(jose.ES256), Use: "sig"},
	}}
	writeJSON(w, http.StatusOK, set)
}

func (p *IdP) serveDiscovery(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer": p.Issuer(), "jwks_uri": p.JWKSURL(), "token_endpoint": p.TokenURL(),
		"grant_types_supported":                 []string{GrantClientCredentials, GrantTokenExchange},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic", "client_secret_post"},
	})
}

// serveToken is the token endpoint.
func (p *IdP) serveToken(w http.ResponseWriter, r *http.Request) {
	var rec Request
	status, body := p.grant(r, &rec)
	rec.Status = status
	p.mu.Lock()
	p.requests = append(p.requests, rec)
	p.mu.Unlock()
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="idptest"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, body)
}

// grant answers one token request: the status and the JSON body.
func (p *IdP) grant(r *http.Request, rec *Request) (int, any) {
	p.mu.Lock()
	down := p.down > 0
	if down {
		p.down--
	}
	p.mu.Unlock()
	if down {
		return http.StatusServiceUnavailable, oauthError("temporarily_unavailable", "the test made the IdP unavailable")
	}
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, oauthError("invalid_request", "POST the token request")
	}
	if err := r.ParseForm(); err != nil || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return http.StatusBadRequest, oauthError("invalid_request", "the body must be application/x-www-form-urlencoded")
	}
	f := r.PostForm
	rec.GrantType, rec.Scope = f.Get("grant_type"), f.Get("scope")
	rec.Audience, rec.Resource = f["audience"], f["resource"]
	rec.SubjectToken, rec.SubjectTokenType = f.Get("subject_token"), f.Get("subject_token_type")

	id, secret, basic := r.BasicAuth()
	if basic {
		// RFC 6749 section 2.3.1: form-encoded before Basic encoding.
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	if want, ok := p.cfg.Clients[id]; !ok || id == "" || secret != want {
		return http.StatusUnauthorized, oauthError("invalid_client", "unknown client or wrong secret")
	}
	rec.ClientID, rec.Basic = id, basic

	claims := map[string]any{"client_id": id, "jti": rand.Text()}
	if rec.Scope != "" {
		claims["scope"] = rec.Scope
	}
	if aud := append(append([]string(nil), rec.Audience...), rec.Resource...); len(aud) > 0 {
		claims["aud"] = aud
	}
	issued := ""
	switch rec.GrantType {
	case GrantClientCredentials:
		claims["sub"] = id
	case GrantTokenExchange:
		if rec.SubjectTokenType != TokenTypeAccessToken && rec.SubjectTokenType != TokenTypeJWT {
			return http.StatusBadRequest, oauthError("invalid_request", "subject_token_type must be an access token or a JWT")
		}
		subject, err := p.verify(rec.SubjectToken)
		if err != nil {
			return http.StatusBadRequest, oauthError("invalid_grant", "subject_token: "+err.Error())
		}
		claims["sub"] = subject["sub"]
		if t, ok := subject["tenant"]; ok {
			claims["tenant"] = t
		}
		// The actor (RFC 8693 section 4.1): who acts for the subject.
		claims["act"] = map[string]any{"sub": id}
		issued = TokenTypeAccessToken
	default:
		return http.StatusBadRequest, oauthError("unsupported_grant_type", "grant_type "+rec.GrantType)
	}
	token, err := p.mint(claims)
	if err != nil {
		return http.StatusInternalServerError, oauthError("server_error", err.Error())
	}
	resp := map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": int(p.cfg.TTL / time.Second)}
	if rec.Scope != "" {
		resp["scope"] = rec.Scope
	}
	if issued != "" {
		resp["issued_token_type"] = issued
	}
	return http.StatusOK, resp
}

// verify checks a token the IdP signed (a subject token): its signature,
// issuer and expiry; it returns its claims.
func (p *IdP) verify(token string) (map[string]any, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		return nil, err
	}
	var std jwt.Claims
	var all map[string]any
	if err := parsed.Claims(&p.rsa.PublicKey, &std, &all); err != nil {
		if err := parsed.Claims(&p.ec.PublicKey, &std, &all); err != nil {
			return nil, err
		}
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Issuer: p.Issuer()}, 0); err != nil {
		return nil, err
	}
	return all, nil
}

func oauthError(code, desc string) map[string]string {
	return map[string]string{"error": code, "error_description": desc}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
