package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// authVariant is one way of running the echo server: its --auth-config
// (none: open) and the credentials every request then carries.
type authVariant struct {
	name    string
	config  string // path; "" runs the server open
	headers []header
}

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
	rounds := fs.Int("rounds", 12, "rounds; the order of the servers rotates each round")
	d := fs.Duration("duration", 2*time.Second, "measured load per server, binding, scenario and round")
	warm := fs.Duration("warmup", 2*time.Second, "unmeasured load of each server before each scenario and binding")
	conns := fs.Int("conns", 32, "concurrent requests: HTTP connections, or gRPC calls in flight")
	grpcConns := fs.Int("grpc-conns", 4, "HTTP/2 connections the gRPC calls share")
	maxReq := fs.Int("max", 2_000_000, "request cap per measurement")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rounds < 1 || *conns < 1 || *grpcConns < 1 || *d <= 0 {
		return errors.New("auth: --rounds, --conns, --grpc-conns and --duration must be positive")
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
	bindings := []string{bindingJSONRPC, bindingGRPC}
	servers := make([]*authServer, len(variants))
	for i, v := range variants {
		addr, grpcAddr := fmt.Sprintf("127.0.0.1:%d", 19131+2*i), fmt.Sprintf("127.0.0.1:%d", 19132+2*i)
		t := &target{name: v.name, bin: *ours, addr: addr, also: []string{grpcAddr},
			args: []string{"--addr", addr, "--grpc-addr", grpcAddr, "--retention", "5s", "--log-level", "warn"}}
		if v.config != "" {
			t.args = append(t.args, "--auth-config", v.config)
		}
		defer t.stop()
		if err := t.start(); err != nil {
			return err
		}
		eps, err := cardEndpoints(ctx, addr)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		for _, bd := range bindings {
			if _, ok := eps[bd]; !ok {
				return fmt.Errorf("%s: the card lists no %s interface", v.name, bd)
			}
		}
		servers[i] = &authServer{authVariant: v, t: t, eps: eps,
			b: &bindingsBench{conns: *conns, grpcConns: *grpcConns, maxReq: *maxReq, headers: v.headers}}
	}
	order := []string{"send", "stream"}
	results := map[string]map[string]map[string][]measurement{} // scenario, binding, variant; one per round
	for _, key := range order {
		sc := scenarios[key]
		results[key] = map[string]map[string][]measurement{}
		for _, bd := range bindings {
			res := map[string][]measurement{}
			results[key][bd] = res
			for _, s := range servers {
				if err := s.prepare(ctx, bd, sc, *warm); err != nil {
					return err
				}
			}
			for r := range *rounds {
				for _, s := range rotated(servers, r) {
					m, err := s.t.measureWith(func() (result, error) { return s.run(*d) })
					if err == nil {
						err = ctx.Err() // interrupted: the numbers are cut short
					}
					if err != nil {
						return fmt.Errorf("%s over %s, %s: %w", s.name, bd, sc.name, err)
					}
					res[s.name] = append(res[s.name], m)
					fmt.Fprintf(os.Stderr, "round %d %-14s %-9s %-10s %8.0f req/s  p50 %-10v p99 %-10v cpu %v/req\n",
						r+1, sc.name, bd, s.name, m.res.rate(), m.res.pct(.5), m.res.pct(.99), m.cpuPerReq())
				}
			}
		}
	}
	fmt.Printf("Four `%s` processes side by side, --log-level warn (admissions are not logged). For each scenario and binding: %v of warm-up each, then %d round(s) of %v on each server in turn, the order rotating; %d concurrent requests (HTTP: one connection each; gRPC: calls over %d connections). Absolute figures are the median round's; ratios are to the open server, the median of the per-round ratios.\n\n",
		*ours, *warm, *rounds, *d, *conns, *grpcConns)
	for _, key := range order {
		for _, bd := range bindings {
			reportAuth(os.Stdout, scenarios[key], bd, variants, results[key][bd])
		}
	}
	return nil
}

// authServer is a running server of one variant.
type authServer struct {
	authVariant
	t   *target
	eps map[string]endpoint
	b   *bindingsBench
	// run is the load run of the scenario and binding being measured.
	run func(time.Duration) (result, error)
}

// prepare checks that s answers sc over binding as the echo agent does,
// given the variant's credentials, sets s.run to its load run and warms
// it up for warm.
func (s *authServer) prepare(ctx context.Context, binding string, sc scenario, warm time.Duration) error {
	ep := s.eps[binding]
	if err := verify(ctx, ep, sc, s.headers); err != nil {
		return fmt.Errorf("%s over %s, %s: %w", s.name, binding, sc.name, err)
	}
	run, err := s.b.driver(ctx, ep, sc)
	if err != nil {
		return err
	}
	s.run = run
	if warm > 0 {
		if _, err := s.t.measureWith(func() (result, error) { return run(warm) }); err != nil {
			return fmt.Errorf("%s over %s, warm-up: %w", s.name, binding, err)
		}
	}
	return nil
}

// authVariants writes into dir what the gated servers need (an API key
// file; an RSA 2048 and an EC P-256 key's public halves in a JWKS file;
// the auth configs) and returns the variants, the open server first. The
// tokens are valid for a day from now, the longest a run could take.
func authVariants(dir string, now time.Time) ([]authVariant, error) {
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
	return []authVariant{
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

// authRatios are a variant's per-round ratios to the open server's
// measurement of the same round, each the median over the rounds.
type authRatios struct{ rate, p50, p99, cpu float64 }

func ratiosToOpen(open, ms []measurement) authRatios {
	var rate, p50, p99, cpu []float64
	for i := range min(len(open), len(ms)) {
		o, m := open[i], ms[i]
		rate = append(rate, m.res.rate()/o.res.rate())
		p50 = append(p50, ratio(m.res.pct(.5), o.res.pct(.5)))
		p99 = append(p99, ratio(m.res.pct(.99), o.res.pct(.99)))
		cpu = append(cpu, ratio(m.cpuPerReq(), o.cpuPerReq()))
	}
	return authRatios{medianOf(rate), medianOf(p50), medianOf(p99), medianOf(cpu)}
}

// medianOf returns the median of xs (the upper one of an even count), 0
// for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// maxAuthCost is the bound: a bearer JWT verified per request
// costs at most 10 % of throughput.
const maxAuthCost = 0.10

// reportAuth writes one scenario and binding's table: each variant's
// median round, and its ratios to the open server.
func reportAuth(w io.Writer, sc scenario, binding string, variants []authVariant, res map[string][]measurement) {
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
		m, x := median(ms), ratiosToOpen(open, ms)
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
