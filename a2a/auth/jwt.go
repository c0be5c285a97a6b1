package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/internal/jwks"
)

// JWTConfig configures a JWT authenticator. Issuer, Audience and where
// the keys are (Keys, JWKSURL, or OpenIDConnect's discovery) are
// required; every other zero field means its default.
type JWTConfig struct {
	// Scheme is the name of the card's security scheme the authenticator
	// implements: the Scheme of the principals it admits and the realm of
	// its challenges ("a2a" when empty).
	Scheme string
	// Issuer is the iss a token must carry, compared exactly.
	Issuer string
	// Audience is the value a token's aud must contain: this agent.
	Audience string
	// Algorithms are the signature algorithms accepted, by JWS name; the
	// default is RS256, ES256 and EdDSA. Only asymmetric ones may be named
	// (RS*, PS*, ES*, EdDSA): never "none", nor HMAC, whose shared secrets
	// this package does not hold, and whose confusion with a public key
	// is the classic forgery.
	Algorithms []string
	// Skew is the clock skew allowed in checking exp, nbf and iat: at
	// most 5 minutes, 1 minute by default.
	Skew time.Duration
	// Keys are pinned verification keys. Private keys serve by their
	// public half; symmetric keys are refused.
	Keys *jose.JSONWebKeySet
	// JWKSURL is where the issuer publishes its keys (a JWKS document),
	// fetched with HTTPClient, used beside Keys. It is fetched at the
	// first token, then again by the first token after RefreshInterval,
	// and at once by a token whose key id it lacks, so that the issuer's
	// key rotations apply without a restart. A failed fetch keeps the last
	// good keys; a set that publishes a private key is refused.
	JWKSURL string
	// OpenIDConnect says Issuer is an OpenID Connect provider. The card
	// then declares the scheme as OpenID Connect, naming the issuer's
	// discovery document (Issuer + "/.well-known/openid-configuration"),
	// from which a client learns how to get a token; and without JWKSURL
	// the keys are fetched from the jwks_uri that document names (read at
	// the first token, its issuer checked to be Issuer), as JWKSURL's are.
	OpenIDConnect bool
	// OAuth2, when set, declares the scheme on the card as OAuth 2.0 with
	// these flows (say, the client-credentials flow and its token URL),
	// so that a client learns where to get a token; the tokens are
	// verified as JWTs all the same. It excludes OpenIDConnect.
	OAuth2 *a2a.OAuthFlows
	// RefreshInterval is how old the fetched keys may grow before a token
	// fetches them again: 10 minutes by default.
	RefreshInterval time.Duration
	// MinRefreshInterval is the least time between two fetches, however
	// many tokens name unknown keys: 30 seconds by default.
	MinRefreshInterval time.Duration
	// HTTPClient fetches JWKSURL (and the discovery document); the
	// default is a client with a 10 s timeout. A fetch takes 10 s at most
	// whatever the client's timeout.
	HTTPClient *http.Client
	// TenantClaim is the claim naming the tenant the token is bound to:
	// "tenant" by default. A token without it binds no tenant.
	TenantClaim string
	// ScopeClaim is the claim listing the granted scopes: "scope" by
	// default, a space-separated string (or an array of strings). The
	// "scp" claim counts too, in either form.
	ScopeClaim string
	// MaxTokenBytes bounds the Authorization header a token comes in,
	// checked before anything is parsed: 8 KiB by default.
	MaxTokenBytes int
}

// Defaults and bounds of JWTConfig.
const (
	defaultSkew               = time.Minute
	maxSkew                   = 5 * time.Minute
	defaultRefreshInterval    = 10 * time.Minute
	defaultMinRefreshInterval = 30 * time.Second
	defaultMaxTokenBytes      = 8 << 10
	defaultRealm              = "a2a"
)

// JWT authenticates requests by a bearer JWT (RFC 6750, RFC 7519) signed
// by an issuer's asymmetric key. It is safe for concurrent use and starts
// no goroutine: keys from a JWKS URL are fetched on the request path (see
// JWTConfig.JWKSURL).
type JWT struct {
	scheme        string
	realm         string // the challenge up to its error, quoted once
	issuer        string
	audience      jwt.Audience
	algs          []jose.SignatureAlgorithm
	skew          time.Duration
	pinned        []jwks.Key
	remote        *jwks.Cache // nil without a JWKS URL or discovery
	oidc          bool
	oauth2        *a2a.OAuthFlows
	tenantClaim   string
	scopeClaim    string
	maxTokenBytes int
	cache         tokenCache
}

var _ Authenticator = (*JWT)(nil)

// NewJWT returns a JWT authenticator, or an error naming the first field
// of cfg that cannot be used as given. It fetches nothing: the first token
// fetches JWKSURL.
func NewJWT(cfg JWTConfig) (*JWT, error) {
	bad := func(field, needs string) error {
		return fmt.Errorf("auth: JWTConfig.%s: %s", field, needs)
	}
	switch {
	case cfg.Issuer == "":
		return nil, bad("Issuer", "required")
	case cfg.Audience == "":
		return nil, bad("Audience", "required")
	case cfg.Keys == nil && cfg.JWKSURL == "" && !cfg.OpenIDConnect:
		return nil, bad("Keys", "Keys, JWKSURL or OpenIDConnect is required")
	case cfg.OpenIDConnect && cfg.OAuth2 != nil:
		return nil, bad("OAuth2", "the scheme is declared as OpenID Connect or as OAuth 2.0, not both")
	case cfg.OAuth2 != nil && !oneFlow(cfg.OAuth2):
		return nil, bad("OAuth2", "give exactly one flow")
	case cfg.Skew < 0 || cfg.Skew > maxSkew:
		return nil, bad("Skew", fmt.Sprintf("must be between 0 and %v", maxSkew))
	case cfg.MaxTokenBytes < 0:
		return nil, bad("MaxTokenBytes", "must not be negative")
	case cfg.RefreshInterval < 0:
		return nil, bad("RefreshInterval", "must not be negative")
	case cfg.MinRefreshInterval < 0:
		return nil, bad("MinRefreshInterval", "must not be negative")
	case cfg.JWKSURL == "" && !cfg.OpenIDConnect && (cfg.RefreshInterval != 0 || cfg.MinRefreshInterval != 0 || cfg.HTTPClient != nil):
		return nil, bad("JWKSURL", "RefreshInterval, MinRefreshInterval and HTTPClient apply only with JWKSURL or OpenIDConnect")
	}
	j := &JWT{
		scheme:        cfg.Scheme,
		issuer:        cfg.Issuer,
		audience:      jwt.Audience{cfg.Audience},
		algs:          []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA},
		skew:          or(cfg.Skew, defaultSkew),
		tenantClaim:   or(cfg.TenantClaim, "tenant"),
		scopeClaim:    or(cfg.ScopeClaim, "scope"),
		maxTokenBytes: or(cfg.MaxTokenBytes, defaultMaxTokenBytes),
		oidc:          cfg.OpenIDConnect,
		oauth2:        cfg.OAuth2,
	}
	j.realm = `Bearer realm="` + quoted(or(cfg.Scheme, defaultRealm)) + `"`
	if len(cfg.Algorithms) > 0 {
		j.algs = nil
		for _, a := range cfg.Algorithms {
			if !asymmetric(a) {
				return nil, bad("Algorithms", fmt.Sprintf("%q is not an asymmetric signature algorithm (RS*, PS*, ES*, EdDSA)", a))
			}
			j.algs = append(j.algs, jose.SignatureAlgorithm(a))
		}
	}
	if cfg.Keys != nil {
		for i, k := range cfg.Keys.Keys {
			vk, ok := jwks.SigningKey(k)
			if !ok {
				return nil, bad("Keys", fmt.Sprintf("key %d (kid %q) is not an RSA, EC or Ed25519 signing key", i, k.KeyID))
			}
			j.pinned = append(j.pinned, vk)
		}
		if len(j.pinned) == 0 && cfg.JWKSURL == "" && !cfg.OpenIDConnect {
			return nil, bad("Keys", "no keys, and no JWKSURL")
		}
	}
	if cfg.JWKSURL != "" || cfg.OpenIDConnect {
		// Authentication is on the request path: it prefers availability,
		// so the last good keys serve through an outage of the issuer's
		// JWKS (not Expire). A key the issuer withdraws is dropped by the
		// first good fetch after it, and the tokens it verified with it.
		kc, field := jwks.Config{
			URL:         cfg.JWKSURL,
			Client:      cfg.HTTPClient,
			Refresh:     or(cfg.RefreshInterval, defaultRefreshInterval),
			MinInterval: or(cfg.MinRefreshInterval, defaultMinRefreshInterval),
		}, "JWKSURL"
		if kc.URL == "" { // discovered
			kc.Issuer, field = cfg.Issuer, "Issuer"
		}
		remote, err := jwks.New(kc)
		if err != nil {
			return nil, bad(field, err.Error())
		}
		j.remote = remote
	}
	return j, nil
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func asymmetric(alg string) bool {
	switch jose.SignatureAlgorithm(alg) {
	case jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
		jose.ES256, jose.ES384, jose.ES512, jose.EdDSA:
		return true
	}
	return false
}

// Why a token is refused, as the error and the challenge's
// error_description say it.
const (
	reasonTooLarge     = "token too large"
	reasonMalformed    = "malformed token"
	reasonAlgorithm    = "algorithm not allowed"
	reasonUnknownKey   = "unknown key id"
	reasonNoKeyID      = "token names no key id and several keys fit"
	reasonKeyMismatch  = "key does not fit the algorithm"
	reasonSignature    = "bad signature"
	reasonClaims       = "malformed claims"
	reasonNoExpiry     = "token has no expiry"
	reasonIssuer       = "wrong issuer"
	reasonAudience     = "wrong audience"
	reasonExpired      = "token expired"
	reasonNotYetValid  = "token not yet valid"
	reasonFutureIssued = "token issued in the future"
	reasonNoSubject    = "token has no subject"
	reasonTenant       = "malformed tenant claim"
	reasonScope        = "malformed scope claim"
)

// tokenError is a refused token: it wraps ErrInvalidCredentials and says
// why without the token.
type tokenError struct{ reason string }

func (e *tokenError) Error() string { return ErrInvalidCredentials.Error() + ": " + e.reason }
func (e *tokenError) Unwrap() error { return ErrInvalidCredentials }

func refuse(reason string) error { return &tokenError{reason: reason} }

var errNoBearer = fmt.Errorf("auth: no bearer token: %w", ErrNoCredentials)

// Authenticate returns the principal of the request's bearer token (the
// Authorization header's "Bearer" scheme, in any case). Without one it
// returns an error wrapping ErrNoCredentials. A token is admitted when it
// is signed with an allowed algorithm by a key that fits the algorithm
// (the one its kid names; without a kid, the only key of its algorithm),
// names the Issuer and the Audience, has a subject and an expiry, has not
// expired and is valid now (nbf and iat not in the future), all within
// Skew; else the error wraps ErrInvalidCredentials and says which check
// failed. When no key can be had at all (JWKSURL could not be fetched
// and no key is pinned) the error wraps neither: the server, not the
// token, is at fault.
//
// The principal's Claims are the token's claims but iss, sub, the tenant
// and the scope claims, which fill its other fields.
//
// A token once admitted is taken on trust when the same bytes come again,
// for up to two minutes, so that a client sending its token with every
// request pays for the signature and the claims once: until then its exp
// is still checked on every request (within Skew), and a JWKS refresh
// that no longer publishes the key that signed it ends the trust. The
// requests presenting one token may then share its Principal: treat it
// as read-only.
func (j *JWT) Authenticate(ctx context.Context, creds Credentials) (*Principal, error) {
	token, err := j.bearer(creds)
	if err != nil {
		return nil, err
	}
	d := digest(token)
	// The keys of a JWKS URL are read first, on a cache hit too: it keeps
	// their refresh on schedule, and a hit serves only while no refresh
	// has dropped a key since the token was verified.
	ks := j.jwksKeys(ctx)
	now := time.Now()
	if e, ok := j.cache.get(d, now); ok {
		// As jwt.Claims.ValidateWithLeeway, which admitted the token, has it.
		if now.Add(-j.skew).After(e.exp) {
			j.cache.remove(d)
			return nil, refuse(reasonExpired)
		}
		if ks.err == nil && e.epoch == ks.Epoch {
			return e.p, nil
		}
		j.cache.remove(d)
	}
	p, err := j.verified(ctx, token, ks)
	if err != nil {
		return nil, err
	}
	if exp, ok := expiry(p); ok {
		j.cache.put(d, p, exp, ks.Epoch, now)
	}
	return p, nil
}

// jwksKeys are the keys of the JWKS URL a request has read, and their
// epoch; none without a JWKS URL.
type jwksKeys struct {
	jwks.Set
	err error // why there are none
}

func (j *JWT) jwksKeys(ctx context.Context) jwksKeys {
	var ks jwksKeys
	if j.remote != nil {
		ks.Set, ks.err = j.remote.Keys(ctx, false)
	}
	return ks
}

// expiry reads the exp of a verified token from its principal's claims,
// where principal leaves it (a NumericDate, read as jwt.NumericDate
// reads it). Without it the token is not cached.
func expiry(p *Principal) (time.Time, bool) {
	exp, ok := p.Claims["exp"].(float64)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(int64(exp), 0), true
}

// verified checks token's signature, against the pinned keys and ks,
// and its claims, and returns its principal.
func (j *JWT) verified(ctx context.Context, token string, ks jwksKeys) (*Principal, error) {
	sig, err := jose.ParseSignedCompact(token, j.algs)
	if err != nil {
		if e, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok && e.Got != "" {
			return nil, refuse(reasonAlgorithm)
		}
		return nil, refuse(reasonMalformed)
	}
	h := sig.Signatures[0].Header
	payload, err := j.verify(ctx, sig, h.KeyID, h.Algorithm, ks)
	if err != nil {
		return nil, err
	}
	p, err := j.principal(payload)
	if err != nil {
		return nil, err
	}
	p.Token = token
	return p, nil
}

func (j *JWT) bearer(creds Credentials) (string, error) {
	v := creds.header("Authorization")
	scheme, token, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", errNoBearer
	}
	if len(v) > j.maxTokenBytes {
		return "", refuse(reasonTooLarge)
	}
	token = strings.TrimLeft(token, " ")
	// Two byte searches rather than strings.ContainsAny, which walks the
	// token a byte at a time: it comes with every request.
	if token == "" || strings.IndexByte(token, ' ') >= 0 || strings.IndexByte(token, '\t') >= 0 {
		return "", refuse(reasonMalformed)
	}
	return token, nil
}

// verify checks sig with the key it names and returns its payload. A
// token naming a key the JWKS keys ks lack refreshes them (see
// jwks.Cache.Keys).
func (j *JWT) verify(ctx context.Context, sig *jose.JSONWebSignature, kid, alg string, ks jwksKeys) ([]byte, error) {
	remoteErr := ks.err
	keys, reason := pick(kid, alg, j.pinned, ks.Keys)
	if reason == reasonUnknownKey && j.remote != nil {
		var s jwks.Set
		s, remoteErr = j.remote.Keys(ctx, true)
		keys, reason = pick(kid, alg, j.pinned, s.Keys)
	}
	if reason == reasonUnknownKey && remoteErr != nil && len(j.pinned) == 0 {
		return nil, fmt.Errorf("auth: no keys to verify a bearer token with: %w", remoteErr)
	}
	if reason != "" {
		return nil, refuse(reason)
	}
	for _, k := range keys {
		if payload, err := sig.Verify(k.Public); err == nil {
			return payload, nil
		}
	}
	return nil, refuse(reasonSignature)
}

// pick returns the keys that may have signed a token with kid and alg:
// those with that kid, or without a kid the only key fitting alg; else why
// there are none.
func pick(kid, alg string, sets ...[]jwks.Key) ([]jwks.Key, string) {
	var fit []jwks.Key
	named := false
	for _, set := range sets {
		for _, k := range set {
			if kid != "" && k.ID != kid {
				continue
			}
			named = true
			if k.Fits(alg) {
				fit = append(fit, k)
			}
		}
	}
	switch {
	case kid == "" && len(fit) > 1:
		return nil, reasonNoKeyID
	case len(fit) > 0:
		return fit, ""
	case kid != "" && named:
		return nil, reasonKeyMismatch
	}
	return nil, reasonUnknownKey
}

// principal checks the claims of a verified token and returns its
// principal.
func (j *JWT) principal(payload []byte) (*Principal, error) {
	// go-jose's json matches names exactly, unlike encoding/json, which
	// would take "ISS" for iss.
	var std jwt.Claims
	var claims map[string]any
	if josejson.Unmarshal(payload, &std) != nil || josejson.Unmarshal(payload, &claims) != nil || claims == nil {
		return nil, refuse(reasonClaims)
	}
	if std.Expiry == nil {
		return nil, refuse(reasonNoExpiry)
	}
	err := std.ValidateWithLeeway(jwt.Expected{Issuer: j.issuer, AnyAudience: j.audience}, j.skew)
	switch {
	case err == nil:
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return nil, refuse(reasonIssuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return nil, refuse(reasonAudience)
	case errors.Is(err, jwt.ErrExpired):
		return nil, refuse(reasonExpired)
	case errors.Is(err, jwt.ErrNotValidYet):
		return nil, refuse(reasonNotYetValid)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return nil, refuse(reasonFutureIssued)
	default:
		return nil, refuse(reasonClaims)
	}
	if std.Subject == "" {
		return nil, refuse(reasonNoSubject)
	}
	p := &Principal{Scheme: j.scheme, Issuer: std.Issuer, Subject: std.Subject}
	switch t := claims[j.tenantClaim].(type) {
	case nil:
	case string:
		p.Tenant = t
	default:
		return nil, refuse(reasonTenant)
	}
	for _, name := range []string{j.scopeClaim, "scp"} {
		scopes, ok := scopeList(claims[name])
		if !ok {
			return nil, refuse(reasonScope)
		}
		for _, s := range scopes {
			if !p.HasScope(s) {
				p.Scopes = append(p.Scopes, s)
			}
		}
	}
	for _, name := range []string{"iss", "sub", j.tenantClaim, j.scopeClaim, "scp"} {
		delete(claims, name)
	}
	p.Claims = claims
	return p, nil
}

// scopeList reads a scope claim: a space-separated string or an array of
// strings, absent meaning none.
func scopeList(v any) ([]string, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return strings.Fields(v), true
	case []any:
		scopes := make([]string, 0, len(v))
		for _, s := range v {
			s, ok := s.(string)
			if !ok {
				return nil, false
			}
			scopes = append(scopes, s)
		}
		return scopes, true
	}
	return nil, false
}

// Challenge returns the RFC 6750 challenge for err: Bearer with the
// realm, and for a refused token error="invalid_token" and the reason as
// error_description.
func (j *JWT) Challenge(err error) string {
	if te, ok := errors.AsType[*tokenError](err); ok {
		return j.realm + `, error="invalid_token", error_description="` + quoted(te.reason) + `"`
	}
	if errors.Is(err, ErrInvalidCredentials) {
		return j.realm + `, error="invalid_token"`
	}
	return j.realm
}

// quoted makes s safe inside a quoted-string (RFC 7235): backslash
// before " and \, and printable ASCII only. error_description may hold
// neither " nor \ at all (RFC 6750), which the reasons never contain.
func quoted(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		default:
			b.WriteByte('?')
		}
	}
	return b.String()
}

// Kind names the credential, for refusals.
func (j *JWT) Kind() string { return "a bearer token from " + j.issuer }

// SecurityScheme implements Describer: OpenID Connect with the issuer's
// discovery document (JWTConfig.OpenIDConnect), OAuth 2.0 with the
// configured flows (JWTConfig.OAuth2), or else HTTP bearer authentication
// with JWTs.
func (j *JWT) SecurityScheme() (string, a2a.SecurityScheme) {
	name := j.scheme
	if name == "" {
		name = "bearer"
	}
	desc := "a JWT issued by " + j.issuer + " for the audience " + strings.Join(j.audience, " ")
	switch {
	case j.oidc:
		return name, a2a.SecurityScheme{OpenIDConnect: &a2a.OpenIDConnectSecurityScheme{Description: desc,
			OpenIDConnectURL: jwks.DiscoveryURL(j.issuer)}}
	case j.oauth2 != nil:
		return name, a2a.SecurityScheme{OAuth2: &a2a.OAuth2SecurityScheme{Description: desc, Flows: *j.oauth2}}
	}
	return name, a2a.SecurityScheme{HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT", Description: desc}}
}

// oneFlow reports whether f holds exactly one flow, as a card's
// OAuthFlows must.
func oneFlow(f *a2a.OAuthFlows) bool {
	n := 0
	for _, set := range []bool{f.AuthorizationCode != nil, f.ClientCredentials != nil, f.Implicit != nil, f.Password != nil, f.DeviceCode != nil} {
		if set {
			n++
		}
	}
	return n == 1
}
