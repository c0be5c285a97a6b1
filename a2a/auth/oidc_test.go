package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/auth"
	"github.com/a2amesh/a2amesh/internal/idptest"
)

// TestJWTOpenIDConnect: an authenticator of an OpenID Connect issuer
// finds the keys through the issuer's discovery document, and declares
// the scheme as OpenID Connect, naming that document.
func TestJWTOpenIDConnect(t *testing.T) {
	idp := idptest.New(t, idptest.Config{Algorithm: "ES256"})
	const audience = "https://agents.acme.test/echo"
	j, err := auth.NewJWT(auth.JWTConfig{Scheme: "oidc", Issuer: idp.Issuer(), Audience: audience, OpenIDConnect: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := j.Authenticate(context.Background(), bearer("Bearer "+idp.Mint(t, map[string]any{"sub": "alice", "aud": audience})))
	if err != nil || p.Subject != "alice" {
		t.Fatalf("a token of the issuer: %+v, %v", p, err)
	}
	if _, err := j.Authenticate(context.Background(), bearer("Bearer "+idp.Mint(t, map[string]any{"sub": "alice", "aud": "https://elsewhere.test"}))); !errors.Is(err, auth.ErrInvalidCredentials) {
		t.Fatalf("a token for another audience: %v, want refused", err)
	}
	// Keys pinned beside discovery are used beside the discovered ones.
	pinned, err := auth.NewJWT(auth.JWTConfig{Issuer: idp.Issuer(), Audience: audience, OpenIDConnect: true,
		Keys: jwks(map[string]any{"ed": newTestKeys(t).ed.Public()})})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := pinned.Authenticate(context.Background(), bearer("Bearer "+idp.Mint(t, map[string]any{"sub": "bob", "aud": audience}))); err != nil || p.Subject != "bob" {
		t.Fatalf("a token of the discovered keys, beside pinned ones: %+v, %v", p, err)
	}
	name, scheme := j.SecurityScheme()
	if name != "oidc" || scheme.OpenIDConnect == nil || scheme.OpenIDConnect.OpenIDConnectURL != idp.Issuer()+"/.well-known/openid-configuration" {
		t.Fatalf("declared as %s: %+v, want OpenID Connect naming the discovery document", name, scheme)
	}
}

// TestJWTOAuth2: an authenticator given OAuth 2.0 flows declares the
// scheme as OAuth 2.0 with them; the flows are one, and not besides
// OpenID Connect.
func TestJWTOAuth2(t *testing.T) {
	keys := jwks(map[string]any{"ed": newTestKeys(t).ed.Public()})
	flows := &a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{TokenURL: "https://idp.example/token", Scopes: map[string]string{"a2a": "call the agent"}}}
	j, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, Keys: keys, OAuth2: flows})
	if err != nil {
		t.Fatal(err)
	}
	if name, scheme := j.SecurityScheme(); name != "bearer" || scheme.OAuth2 == nil || scheme.OAuth2.Flows.ClientCredentials.TokenURL != "https://idp.example/token" {
		t.Fatalf("declared as %s: %+v, want OAuth 2.0 with the client-credentials flow", name, scheme)
	}
	for name, cfg := range map[string]auth.JWTConfig{
		"no flow":                     {Issuer: testIssuer, Audience: testAudience, Keys: keys, OAuth2: &a2a.OAuthFlows{}},
		"two flows":                   {Issuer: testIssuer, Audience: testAudience, Keys: keys, OAuth2: &a2a.OAuthFlows{ClientCredentials: flows.ClientCredentials, DeviceCode: &a2a.DeviceCodeOAuthFlow{}}},
		"OAuth2 and OpenID Connect":   {Issuer: testIssuer, Audience: testAudience, OpenIDConnect: true, OAuth2: flows},
		"OpenID Connect, no http URL": {Issuer: "idp.example", Audience: testAudience, OpenIDConnect: true},
	} {
		if _, err := auth.NewJWT(cfg); err == nil || !strings.Contains(err.Error(), "JWTConfig.") {
			t.Errorf("%s: NewJWT = %v, want an error naming the field", name, err)
		}
	}
}

// The auth config takes both, and refuses two schemes of one name.
func TestConfigOpenIDConnect(t *testing.T) {
	c, err := auth.ParseConfig([]byte(`
jwt:
- {scheme: login, issuer: 'https://login.acme.example', audience: a, openIdConnect: true}
- {scheme: machines, issuer: i, audience: a, jwksUrl: 'https://i.example/jwks', oauth2: {clientCredentials: {tokenUrl: 'https://i.example/token', scopes: {a2a: call}}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	g, err := c.Gate(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	card := &a2a.AgentCard{}
	g.Describe(card)
	var oidc, oauth2 int
	for _, s := range card.SecuritySchemes {
		if s.OpenIDConnect != nil && s.OpenIDConnect.OpenIDConnectURL == "https://login.acme.example/.well-known/openid-configuration" {
			oidc++
		}
		if s.OAuth2 != nil && s.OAuth2.Flows.ClientCredentials != nil {
			oauth2++
		}
	}
	if oidc != 1 || oauth2 != 1 {
		t.Fatalf("card schemes %+v, want one OpenID Connect and one OAuth 2.0", card.SecuritySchemes)
	}
	// Two issuers under one scheme name would declare one of them only.
	c, err = auth.ParseConfig([]byte("jwt: [{issuer: i, audience: a, jwksUrl: 'https://i.example/j'}, {issuer: j, audience: a, jwksUrl: 'https://j.example/j'}]"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Gate(nil, nil); err == nil || !strings.Contains(err.Error(), `declare the security scheme "bearer"`) {
		t.Fatalf("two issuers named alike: %v, want an error naming the scheme", err)
	}
}
