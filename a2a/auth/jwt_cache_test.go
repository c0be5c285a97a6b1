package auth_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/a2amesh/a2amesh/a2a/auth"
)

// TestJWTCachedTokenExpires has a token cached, then waits for its exp
// to pass (by the real clock): the cache refuses it as expired, as a
// verification would, and drops it.
func TestJWTCachedTokenExpires(t *testing.T) {
	k := newTestKeys(t)
	const skew = time.Millisecond
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, Skew: skew, Keys: jwks(map[string]any{"ec": k.ec.Public()})})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Unix(time.Now().Add(3*time.Second).Unix(), 0)
	token := mint(t, jose.ES256, k.ec, "ec", claims(map[string]any{"exp": exp.Unix()}))
	for range 2 {
		if _, err := a.Authenticate(context.Background(), bearer("Bearer "+token)); err != nil {
			t.Fatalf("before exp: %v", err)
		}
	}
	if !a.Cached(token) {
		t.Fatal("the admitted token is not cached")
	}
	for i := 0; i < 100 && !time.Now().After(exp.Add(skew)); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !time.Now().After(exp.Add(skew)) {
		t.Fatal("exp did not pass in 5s")
	}
	_, err = a.Authenticate(context.Background(), bearer("Bearer "+token))
	if !errors.Is(err, auth.ErrInvalidCredentials) || reasonOf(err) != "token expired" {
		t.Fatalf("after exp: %v, want the token refused as expired", err)
	}
	if a.Cached(token) {
		t.Error("the expired token is still cached")
	}
}

// TestJWTCacheFollowsJWKS caches tokens of two keys, then has the JWKS
// refreshed (every request refreshes it here) without one of them, or
// with it changed under its kid, or with a key added: a token of a key
// no longer published is refused at the first request after the refresh;
// the other tokens stay admitted, and a refresh that drops nothing keeps
// them cached.
func TestJWTCacheFollowsJWKS(t *testing.T) {
	a1, b, c, a2 := newTestKeys(t), newTestKeys(t), newTestKeys(t), newTestKeys(t)
	tokA := mint(t, jose.RS256, a1.rsa, "a", claims(nil))
	tokB := mint(t, jose.ES256, b.ec, "b", claims(nil))
	for _, tc := range []struct {
		name   string
		next   *jose.JSONWebKeySet
		reason string // of tokA after the refresh; "" admitted
		kept   bool   // tokens stay cached through the refresh
	}{
		{"key dropped", jwks(map[string]any{"b": b.ec.Public()}), "unknown key id", false},
		{"key changed under its kid", jwks(map[string]any{"a": &a2.rsa.PublicKey, "b": b.ec.Public()}), "bad signature", false},
		{"key added", jwks(map[string]any{"a": &a1.rsa.PublicKey, "b": b.ec.Public(), "c": c.ed.Public()}), "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newJWKSServer(t, jwks(map[string]any{"a": &a1.rsa.PublicKey, "b": b.ec.Public()}))
			a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL,
				RefreshInterval: time.Nanosecond, MinRefreshInterval: time.Nanosecond})
			if err != nil {
				t.Fatal(err)
			}
			authn := func(token string) error {
				_, err := a.Authenticate(context.Background(), bearer("Bearer "+token))
				return err
			}
			for _, tok := range []string{tokA, tokB, tokA, tokB} {
				if err := authn(tok); err != nil {
					t.Fatal(err)
				}
			}
			if !a.Cached(tokA) || !a.Cached(tokB) {
				t.Fatal("the admitted tokens are not cached")
			}
			srv.serve(t, tc.next)
			before := srv.hits.Load()
			err = authn(tokA)
			if srv.hits.Load() == before {
				t.Fatal("the request did not refresh the JWKS")
			}
			if tc.reason == "" && err != nil || tc.reason != "" && reasonOf(err) != tc.reason {
				t.Fatalf("tokA after the refresh: %v, want %q", err, tc.reason)
			}
			if tc.reason != "" && a.Cached(tokA) {
				t.Error("the refused token is still cached")
			}
			if got := a.Cached(tokB); got != tc.kept {
				t.Errorf("tokB cached %v after the refresh, want %v", got, tc.kept)
			}
			if err := authn(tokB); err != nil {
				t.Errorf("tokB after the refresh: %v", err)
			}
		})
	}
}

// TestJWTCacheRefused checks that no refused token is cached.
func TestJWTCacheRefused(t *testing.T) {
	k := newTestKeys(t)
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, Keys: jwks(map[string]any{"ec": k.ec.Public()})})
	if err != nil {
		t.Fatal(err)
	}
	valid := mint(t, jose.ES256, k.ec, "ec", claims(nil))
	for name, token := range map[string]string{
		"wrong audience":   mint(t, jose.ES256, k.ec, "ec", claims(map[string]any{"aud": "elsewhere"})),
		"expired":          mint(t, jose.ES256, k.ec, "ec", claims(map[string]any{"exp": time.Now().Add(-time.Hour).Unix()})),
		"not yet valid":    mint(t, jose.ES256, k.ec, "ec", claims(map[string]any{"nbf": time.Now().Add(time.Hour).Unix()})),
		"tampered payload": swapPayload(valid, mint(t, jose.ES256, k.ec, "ec", claims(map[string]any{"sub": "mallory"}))),
	} {
		for range 2 {
			if _, err := a.Authenticate(context.Background(), bearer("Bearer "+token)); !errors.Is(err, auth.ErrInvalidCredentials) {
				t.Fatalf("%s: %v, want refused", name, err)
			}
		}
		if a.Cached(token) {
			t.Errorf("%s: the refused token is cached", name)
		}
	}
	if n := a.CachedTokens(); n != 0 {
		t.Errorf("%d tokens cached, want none", n)
	}
}

// TestJWTCacheConcurrent has many requests present a few tokens, some
// refused, at once (under -race), the JWKS refreshed under them: each is
// answered as alone, and only the admitted tokens are cached.
func TestJWTCacheConcurrent(t *testing.T) {
	k := newTestKeys(t)
	srv := newJWKSServer(t, jwks(map[string]any{"rsa": &k.rsa.PublicKey, "ec": k.ec.Public(), "ed": k.ed.Public()}))
	a, err := auth.NewJWT(auth.JWTConfig{Issuer: testIssuer, Audience: testAudience, JWKSURL: srv.URL,
		RefreshInterval: time.Millisecond, MinRefreshInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	type tok struct {
		token, sub string // sub "": refused
	}
	var toks []tok
	for i, m := range []struct {
		alg jose.SignatureAlgorithm
		key any
		kid string
	}{{jose.RS256, k.rsa, "rsa"}, {jose.ES256, k.ec, "ec"}, {jose.EdDSA, k.ed, "ed"}} {
		sub := fmt.Sprintf("caller-%d", i)
		toks = append(toks, tok{mint(t, m.alg, m.key, m.kid, claims(map[string]any{"sub": sub})), sub},
			tok{mint(t, m.alg, m.key, m.kid, claims(map[string]any{"sub": sub, "iss": "https://other.test"})), ""})
	}
	const workers, rounds = 8, 40
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				tk := toks[(w+r)%len(toks)]
				p, err := a.Authenticate(context.Background(), bearer("Bearer "+tk.token))
				switch {
				case tk.sub == "" && !errors.Is(err, auth.ErrInvalidCredentials):
					errs[w] = fmt.Errorf("a token of the wrong issuer: %v, want refused", err)
				case tk.sub != "" && (err != nil || p.Subject != tk.sub):
					errs[w] = fmt.Errorf("token of %s: %+v, %v", tk.sub, p, err)
				}
				if errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, tk := range toks {
		if tk.sub == "" && a.Cached(tk.token) {
			t.Errorf("a refused token is cached")
		}
	}
	if n := a.CachedTokens(); n > 3 {
		t.Errorf("%d tokens cached, want the 3 admitted at most", n)
	}
}
