package push

import (
	"context"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// forge signs claims as it likes: with any key and algorithm jose has, a
// chosen kid and extra header fields.
func forge(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, claims any, extra map[jose.HeaderKey]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	for k, v := range extra {
		opts = opts.WithHeader(k, v)
	}
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if raw, ok := claims.([]byte); ok { // not a JSON object: the builder refuses it
		jws, err := signer.Sign(raw)
		if err != nil {
			t.Fatal(err)
		}
		tok, err := jws.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// unsigned builds a JWT with alg "none".
func unsigned(claims any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]string{"alg": "none", "kid": "k1", "typ": "JWT"}) + "." + enc(claims) + "."
}

const hookURL = "https://client.example.com/hook"

var hookBody = []byte(`{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}`)

// goodClaims are the claims of a genuine notification of hookBody, signed
// at iat.
func goodClaims(iat time.Time) notaryClaims {
	return notaryClaims{
		Issuer: "https://agent.example.com", Audience: jwt.Audience{hookURL},
		IssuedAt: jwt.NewNumericDate(iat), Expiry: jwt.NewNumericDate(iat.Add(signatureLifetime)),
		ID: "n-1", TaskID: "t1", BodySHA256: bodyDigest(hookBody),
	}
}

func TestVerify(t *testing.T) {
	agent := newEd25519(t, "k1")
	other := newEd25519(t, "k1") // another key under the agent's kid
	rsaAgent := newRSA(t, "r1", 2048)
	now := time.Now()
	with := func(f func(*notaryClaims)) notaryClaims {
		c := goodClaims(now)
		f(&c)
		return c
	}
	sign := func(c any) string { return forge(t, jose.EdDSA, agent.signer, "k1", c, nil) }
	good := sign(goodClaims(now))
	pubDER, err := x509.MarshalPKIXPublicKey(rsaAgent.signer.Public())
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	otherClaims := strings.Split(sign(with(func(c *notaryClaims) { c.TaskID = "t2" })), ".")[1]
	keys := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{agent.jwk(), rsaAgent.jwk()}}

	tests := []struct {
		name      string
		signature string
		body      []byte
		issuers   []string
		want      error // nil for a valid notification
	}{
		{name: "genuine", signature: good, body: hookBody},
		{name: "genuine, issuer listed", signature: good, body: hookBody, issuers: []string{"x", "https://agent.example.com"}},
		{name: "genuine RSA", signature: forge(t, jose.RS256, rsaAgent.signer, "r1", goodClaims(now), nil), body: hookBody},
		{name: "expired within leeway", body: hookBody, signature: sign(with(func(c *notaryClaims) {
			c.IssuedAt, c.Expiry = jwt.NewNumericDate(now.Add(-5*time.Minute-30*time.Second)), jwt.NewNumericDate(now.Add(-30*time.Second))
		}))},
		{name: "unsigned", body: hookBody, want: ErrUnsigned},
		{name: "expired", body: hookBody, want: ErrExpired, signature: sign(with(func(c *notaryClaims) {
			c.IssuedAt, c.Expiry = jwt.NewNumericDate(now.Add(-10*time.Minute)), jwt.NewNumericDate(now.Add(-5*time.Minute))
		}))},
		{name: "issued in the future", body: hookBody, want: ErrExpired, signature: sign(with(func(c *notaryClaims) {
			c.IssuedAt, c.Expiry = jwt.NewNumericDate(now.Add(10*time.Minute)), jwt.NewNumericDate(now.Add(15*time.Minute))
		}))},
		{name: "wrong audience", body: hookBody, want: ErrAudience, signature: sign(with(func(c *notaryClaims) {
			c.Audience = jwt.Audience{"https://other.example.com/hook"}
		}))},
		{name: "audience a prefix", body: hookBody, want: ErrAudience, signature: sign(with(func(c *notaryClaims) {
			c.Audience = jwt.Audience{hookURL + "/x"}
		}))},
		{name: "unexpected issuer", signature: good, body: hookBody, issuers: []string{"https://other.example.com"}, want: ErrIssuer},
		{name: "tampered body", signature: good, body: []byte(strings.Replace(string(hookBody), "COMPLETED", "FAILED", 1)), want: ErrBodyMismatch},
		{name: "empty body", signature: good, body: nil, want: ErrBodyMismatch},
		{name: "body with trailing space", signature: good, body: append(append([]byte{}, hookBody...), ' '), want: ErrBodyMismatch},
		{name: "unknown kid", signature: forge(t, jose.EdDSA, agent.signer, "k9", goodClaims(now), nil), body: hookBody, want: ErrUnknownKey},
		{name: "no kid", signature: forge(t, jose.EdDSA, agent.signer, "", goodClaims(now), nil), body: hookBody, want: ErrBadSignature},
		{name: "another key, the agent's kid", signature: forge(t, jose.EdDSA, other.signer, "k1", goodClaims(now), nil), body: hookBody, want: ErrBadSignature},
		{
			// The forger embeds its own key and points jku at its own
			// set: neither is followed.
			name: "own key embedded, own jku", body: hookBody, want: ErrBadSignature,
			signature: forge(t, jose.EdDSA, other.signer, "k1", goodClaims(now), map[jose.HeaderKey]any{
				"jku": "https://forger.example.com/jwks.json",
				"jwk": jose.JSONWebKey{Key: other.signer.Public(), KeyID: "k1"},
			}),
		},
		{name: "alg none", signature: unsigned(goodClaims(now)), body: hookBody, want: ErrBadSignature},
		{name: "alg none, signature kept", signature: unsigned(goodClaims(now)) + parts[2], body: hookBody, want: ErrBadSignature},
		{name: "HS256 with the RSA public key's bytes", signature: forge(t, jose.HS256, pubDER, "r1", goodClaims(now), nil), body: hookBody, want: ErrBadSignature},
		{name: "HS256 with the Ed25519 public key's bytes", signature: forge(t, jose.HS256, []byte(agent.signer.Public().(ed25519.PublicKey)), "k1", goodClaims(now), nil), body: hookBody, want: ErrBadSignature},
		{name: "RSA key, algorithm PS256", signature: forge(t, jose.PS256, rsaAgent.signer, "r1", goodClaims(now), nil), body: hookBody, want: ErrBadSignature},
		{name: "claims swapped", signature: parts[0] + "." + otherClaims + "." + parts[2], body: hookBody, want: ErrBadSignature},
		{name: "signature cut", signature: parts[0] + "." + parts[1] + "." + parts[2][:10], body: hookBody, want: ErrBadSignature},
		{name: "not a JWT", signature: "Bearer abc", body: hookBody, want: ErrBadSignature},
		{name: "JSON serialization", signature: `{"payload":"` + parts[1] + `","protected":"` + parts[0] + `","signature":"` + parts[2] + `"}`, body: hookBody, want: ErrBadSignature},
		{name: "no body hash", body: hookBody, want: ErrBadSignature, signature: sign(with(func(c *notaryClaims) { c.BodySHA256 = "" }))},
		{name: "no expiry", body: hookBody, want: ErrBadSignature, signature: sign(with(func(c *notaryClaims) { c.Expiry = nil }))},
		{name: "no jti", body: hookBody, want: ErrBadSignature, signature: sign(with(func(c *notaryClaims) { c.ID = "" }))},
		{name: "claims not an object", body: hookBody, want: ErrBadSignature, signature: sign([]byte(`["iss"]`))},
		{name: "claims not JSON", body: hookBody, want: ErrBadSignature, signature: sign([]byte(`iss`))},
		{name: "claims with a name in another case", body: hookBody, want: ErrBadSignature, signature: sign([]byte(
			`{"ISS":"https://agent.example.com","aud":"` + hookURL + `","iat":` + strconv.FormatInt(now.Unix(), 10) +
				`,"exp":` + strconv.FormatInt(now.Add(time.Minute).Unix(), 10) + `,"jti":"n-1","taskId":"t1","request_body_sha256":"` + bodyDigest(hookBody) + `"}`))},
		{name: "body hash in upper case", body: hookBody, want: ErrBodyMismatch, signature: sign(with(func(c *notaryClaims) { c.BodySHA256 = strings.ToUpper(c.BodySHA256) }))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &Verifier{Keys: keys, Audience: []string{"https://elsewhere.example.com", hookURL}, Issuers: tt.issuers}
			r, err := http.NewRequest(http.MethodPost, hookURL, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.signature != "" {
				r.Header.Set(SignatureHeader, tt.signature)
			}
			c, err := v.VerifyRequest(r, tt.body)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("VerifyRequest = %v, want success", err)
				}
				if c.TaskID != "t1" || c.ID != "n-1" {
					t.Fatalf("claims %+v", c)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("VerifyRequest = %v, want %v", err, tt.want)
			}
			for _, e := range verifyErrors {
				if e != tt.want && errors.Is(err, e) {
					t.Fatalf("VerifyRequest = %v matches %v as well as %v", err, e, tt.want)
				}
			}
		})
	}
}

var verifyErrors = []error{ErrUnsigned, ErrBadSignature, ErrUnknownKey, ErrExpired, ErrAudience, ErrIssuer, ErrBodyMismatch}

func TestVerifierKeySelection(t *testing.T) {
	agent := newECDSA(t, "k1", elliptic.P256(), jose.ES256)
	tok := forge(t, jose.ES256, agent.signer, "k1", goodClaims(time.Now()), nil)
	pub := agent.signer.Public()
	tests := []struct {
		name string
		keys []jose.JSONWebKey
		want error
	}{
		{"public key", []jose.JSONWebKey{{Key: pub, KeyID: "k1"}}, nil},
		{"private key in the set", []jose.JSONWebKey{{Key: agent.signer, KeyID: "k1"}}, nil},
		{"rotated: old and new under other kids", []jose.JSONWebKey{{Key: newEd25519(t, "").signer.Public(), KeyID: "k0"}, {Key: pub, KeyID: "k1"}}, nil},
		{"two keys under one kid", []jose.JSONWebKey{{Key: newEd25519(t, "").signer.Public(), KeyID: "k1"}, {Key: pub, KeyID: "k1"}}, nil},
		{"key for another algorithm", []jose.JSONWebKey{{Key: pub, KeyID: "k1", Algorithm: "ES384"}}, ErrBadSignature},
		{"key for encryption", []jose.JSONWebKey{{Key: pub, KeyID: "k1", Use: "enc"}}, ErrBadSignature},
		{"symmetric key", []jose.JSONWebKey{{Key: []byte("secret"), KeyID: "k1"}}, ErrBadSignature},
		{"kid differs", []jose.JSONWebKey{{Key: pub, KeyID: "K1"}}, ErrUnknownKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := &Verifier{Keys: &jose.JSONWebKeySet{Keys: tt.keys}, Audience: []string{hookURL}}
			_, err := v.Verify(context.Background(), tok, hookBody)
			if tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestVerifierMisconfigured(t *testing.T) {
	agent := newEd25519(t, "k1")
	tok := forge(t, jose.EdDSA, agent.signer, "k1", goodClaims(time.Now()), nil)
	for _, v := range []*Verifier{
		{Audience: []string{hookURL}},
		{Keys: &jose.JSONWebKeySet{}, Audience: []string{hookURL}},
		{Keys: agent.keySet()},
	} {
		_, err := v.Verify(context.Background(), tok, hookBody)
		if err == nil || !strings.Contains(err.Error(), "Verifier has no") {
			t.Fatalf("Verify with %+v = %v, want a configuration error", v, err)
		}
		for _, e := range verifyErrors {
			if errors.Is(err, e) {
				t.Fatalf("Verify with %+v = %v, which matches %v: a misconfiguration is not the request's fault", v, err, e)
			}
		}
	}
}

func TestVerifyLeeway(t *testing.T) {
	agent := newEd25519(t, "k1")
	now := time.Now()
	c := goodClaims(now.Add(-signatureLifetime - 2*time.Minute)) // expired 2 minutes ago
	tok := forge(t, jose.EdDSA, agent.signer, "k1", c, nil)
	tests := []struct {
		leeway time.Duration
		want   error
	}{
		{0, ErrExpired}, // one minute
		{time.Second, ErrExpired},
		{3 * time.Minute, nil},
	}
	for _, tt := range tests {
		v := &Verifier{Keys: agent.keySet(), Audience: []string{hookURL}, Leeway: tt.leeway}
		if _, err := v.Verify(context.Background(), tok, hookBody); tt.want == nil && err != nil || tt.want != nil && !errors.Is(err, tt.want) {
			t.Errorf("Leeway %v: Verify = %v, want %v", tt.leeway, err, tt.want)
		}
	}
}

// FuzzVerifyRequest: Verify never panics, and accepts only what the agent
// signed: a notification it accepts has the claims and the body of one the
// seeds signed.
func FuzzVerifyRequest(f *testing.F) {
	agent := newEd25519(f, "k1")
	rsaAgent := newRSA(f, "r1", 2048)
	keys := &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{agent.jwk(), rsaAgent.jwk()}}
	v := &Verifier{Keys: keys, Audience: []string{hookURL}}
	now := time.Now()
	// genuine maps each genuine notification's jti to its body and claims.
	type notification struct {
		body   string
		claims notaryClaims
	}
	genuine := map[string]notification{}
	addGenuine := func(id string, body []byte, key agentKey) string {
		c := goodClaims(now)
		c.ID, c.BodySHA256 = id, bodyDigest(body)
		genuine[id] = notification{string(body), c}
		return forge(f, key.alg, key.signer, key.kid, c, nil)
	}
	ed := addGenuine("n-1", hookBody, agent)
	f.Add(ed, hookBody)
	f.Add(addGenuine("n-2", []byte(`{"task":{"id":"t1"}}`), rsaAgent), []byte(`{"task":{"id":"t1"}}`))
	f.Add(addGenuine("n-3", nil, agent), []byte{})
	f.Add(ed, []byte(`{"statusUpdate":{}}`))
	f.Add(unsigned(goodClaims(now)), hookBody)
	pubDER, err := x509.MarshalPKIXPublicKey(rsaAgent.signer.Public())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(forge(f, jose.HS256, pubDER, "r1", goodClaims(now), nil), hookBody)
	f.Add(forge(f, jose.EdDSA, newEd25519(f, "").signer, "k1", goodClaims(now), nil), hookBody)
	f.Add("", hookBody)
	f.Add("..", []byte("{}"))
	f.Fuzz(func(t *testing.T, signature string, body []byte) {
		c, err := v.Verify(context.Background(), signature, body)
		if err != nil {
			for _, e := range verifyErrors {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("Verify = %v, which matches none of the documented errors", err)
		}
		g, ok := genuine[c.ID]
		if !ok {
			t.Fatalf("Verify accepted a notification the agent never signed: %+v", c)
		}
		if string(body) != g.body {
			t.Fatalf("Verify accepted notification %s with body %q, signed with %q", c.ID, body, g.body)
		}
		if c.Issuer != g.claims.Issuer || c.TaskID != g.claims.TaskID || !c.IssuedAt.Equal(g.claims.IssuedAt.Time()) ||
			!c.Expiry.Equal(g.claims.Expiry.Time()) || len(c.Audience) != 1 || c.Audience[0] != hookURL {
			t.Fatalf("Verify accepted claims %+v, the agent signed %+v", c, g.claims)
		}
	})
}
