package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// The issuer and audience of the tokens authCmd mints.
const (
	benchIssuer   = "https://a2aload.invalid"
	benchAudience = "a2amesh-echo"
)

// authCmd measures what authenticating every request costs the echo
// server: the same load against it open, with an API key, and with a
// bearer JWT signed by RS256 and by ES256 (keys pinned in a JWKS file).
// The four servers run side by side, and each scenario and binding loads
// them in turn for a short slice, round after round, the order rotating:
// on a shared machine whose speed drifts by tens of percent within
// seconds, only slices this close together compare. It reports each gated
// server's throughput, latency and CPU per request as the median of its
// per-round ratios to the open server's.
func authCmd(args []string) error {
	fs := flag.NewFlagSet("auth", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command (given --addr, --grpc-addr and --auth-config)")
	lf := addLoadFlags(fs, 12, 2*time.Second, "the servers", "of each server before each scenario and binding")
	if err := fs.Parse(args); err != nil {
		return err
	}
	load, err := lf.load("auth")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "a2aload-auth-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	variants, err := authVariants(dir, time.Now())
	if err != nil {
		return err
	}
	for i := range variants {
		variants[i].bin = *ours
	}
	bindings := []string{bindingJSONRPC, bindingGRPC}
	results, err := load.run(ctx, variants, bindings, 19131)
	if err != nil {
		return err
	}
	fmt.Printf("Four `%s` processes side by side, --log-level warn (admissions are not logged). For each scenario and binding: %v of warm-up each, then %d round(s) of %v on each server in turn, the order rotating; %d concurrent requests (HTTP: one connection each; gRPC: calls over %d connections). Absolute figures are the median round's; ratios are to the open server, the median of the per-round ratios.\n\n",
		*ours, load.warm, load.rounds, load.d, load.b.conns, load.b.grpcConns)
	for _, key := range []string{"send", "stream"} {
		for _, bd := range bindings {
			reportAuth(os.Stdout, scenarios[key], bd, variants, results[key][bd])
		}
	}
	return nil
}

// authVariants writes into dir what the gated servers need (an API key
// file; an RSA 2048 and an EC P-256 key's public halves in a JWKS file;
// the auth configs) and returns the variants, the open server first. The
// tokens are valid for a day from now, the longest a run could take.
func authVariants(dir string, now time.Time) ([]variant, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	apiKey := hex.EncodeToString(secret)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &rsaKey.PublicKey, KeyID: "rs256", Algorithm: string(jose.RS256), Use: "sig"},
		{Key: &ecKey.PublicKey, KeyID: "es256", Algorithm: string(jose.ES256), Use: "sig"},
	}}
	files := map[string]any{
		"jwks.json": set,
		"apikey.json": map[string]any{"apiKeys": map[string]any{"keys": []any{
			map[string]any{"name": "a2aload", "keyFile": filepath.Join(dir, "apikey")}}}},
		"jwt.json": map[string]any{"jwt": []any{
			map[string]any{"issuer": benchIssuer, "audience": benchAudience, "keysFile": filepath.Join(dir, "jwks.json")}}},
	}
	for name, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "apikey"), []byte(apiKey+"\n"), 0o600); err != nil {
		return nil, err
	}
	claims := benchClaims(now)
	rs, err := mintToken(jose.RS256, rsaKey, "rs256", claims)
	if err != nil {
		return nil, err
	}
	es, err := mintToken(jose.ES256, ecKey, "es256", claims)
	if err != nil {
		return nil, err
	}
	jwtConfig := filepath.Join(dir, "jwt.json")
	return []variant{
		{name: "open"},
		{name: "API key", config: filepath.Join(dir, "apikey.json"), headers: []header{{"X-API-Key", apiKey}}},
		{name: "JWT RS256", config: jwtConfig, headers: []header{{"Authorization", "Bearer " + rs}}},
		{name: "JWT ES256", config: jwtConfig, headers: []header{{"Authorization", "Bearer " + es}}},
	}, nil
}

// benchClaims are the claims of the benchmark's tokens: those an
// identity provider's access token usually carries.
func benchClaims(now time.Time) map[string]any {
	return map[string]any{
		"iss":   benchIssuer,
		"aud":   benchAudience,
		"sub":   "a2aload",
		"iat":   now.Unix(),
		"nbf":   now.Unix(),
		"exp":   now.Add(24 * time.Hour).Unix(),
		"jti":   "a2aload-bench",
		"scope": "a2a:send a2a:read",
	}
}

// mintToken signs claims with key by alg, naming kid, as a compact JWT.
func mintToken(alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// maxAuthCost is the bound: a bearer JWT verified per request
// costs at most 10 % of throughput.
const maxAuthCost = 0.10

// reportAuth writes one scenario and binding's table: each variant's
// median round, and its ratios to the open server.
func reportAuth(w io.Writer, sc scenario, binding string, variants []variant, res map[string][]measurement) {
	fmt.Fprintf(w, "## %s over %s\n\n", sc.name, binding)
	fmt.Fprintln(w, "| server | req/s | × open | p50 | × open | p99 | × open | server CPU / req | × open |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	open := res[variants[0].name]
	var verdicts []string
	for _, v := range variants {
		ms := res[v.name]
		if len(ms) == 0 {
			continue
		}
		m, x := median(ms), ratiosTo(open, ms)
		fmt.Fprintf(w, "| %s | %.0f | %.2f× | %v | %.2f× | %v | %.2f× | %v | %.2f× |\n", v.name,
			m.res.rate(), x.rate, m.res.pct(.5).Round(time.Microsecond), x.p50,
			m.res.pct(.99).Round(time.Microsecond), x.p99, m.cpuPerReq().Round(100*time.Nanosecond), x.cpu)
		if strings.HasPrefix(v.name, "JWT") {
			verdicts = append(verdicts, fmt.Sprintf("%s %.2f× (%s)", v.name, x.rate, verdict(x.rate >= 1-maxAuthCost)))
		}
	}
	fmt.Fprintln(w)
	if len(verdicts) > 0 {
		fmt.Fprintf(w, "Target, a bearer JWT costs at most %.0f %% of throughput (≥ %.2f× open): %s.\n\n", 100*maxAuthCost, 1-maxAuthCost, strings.Join(verdicts, ", "))
	}
}
