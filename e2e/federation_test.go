package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/internal/idptest"
)

// The audiences of the two teams' agents, as their issuers name them.
const (
	researchA = "https://research.team-a.test"
	gatewayB  = "https://gateway.team-b.test"
)

// team is one team's files: its auth config, signing key and secrets.
type team struct {
	t   *testing.T
	dir string
}

func (tm team) file(name, content string) string {
	tm.t.Helper()
	p := filepath.Join(tm.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		tm.t.Fatal(err)
	}
	return p
}

// signingKey writes a new EC key in PEM and returns its path.
func (tm team) signingKey(name string) string {
	tm.t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tm.t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		tm.t.Fatal(err)
	}
	return tm.file(name, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
}

// jwtAuth is an auth config admitting idp's tokens for audience.
func (tm team) jwtAuth(name string, idp *idptest.IdP, audience string) string {
	return tm.file(name, fmt.Sprintf("jwt:\n- {issuer: %q, audience: %q, jwksUrl: %q}\n", idp.Issuer(), audience, idp.JWKSURL()))
}

// TestTwoTeamsFederate: team A and team B run meshes of their own, each
// with its own issuer and keys. B's gateway imports A's research agent by
// URL: it checks A's signed card against A's published keys and calls the
// agent with client credentials A's issuer grants it. A question to B is
// answered through A; A's tasks are B's gateway's, invisible to A's users
// and to B's other users; a card signed with another key, or a credential
// that has expired, fails with an error naming the agent.
func TestTwoTeamsFederate(t *testing.T) {
	idpA := idptest.New(t, idptest.Config{Clients: map[string]string{"team-b-gateway": "b-secret-0123456789"}})
	idpB := idptest.New(t, idptest.Config{Algorithm: "ES256"})
	a, b := team{t, t.TempDir()}, team{t, t.TempDir()}
	meshA, meshB := newMesh(t), newMesh(t)

	// Team A: its research agent, for A's issuer's tokens, card signed.
	_, research := meshA.service("research", "--auth-config", a.jwtAuth("auth.yaml", idpA, researchA), "--signing-key", a.signingKey("key.pem"))
	jwks := strings.TrimSuffix(research, "/") + "/.well-known/jwks.json"

	// Team B: a gateway for B's issuer's tokens, importing A's agent.
	topology := func(keys, credential string) string {
		return b.file(fmt.Sprintf("topology-%d.yaml", time.Now().UnixNano()), fmt.Sprintf(`
version: 1
gateway: {name: TeamB}
imports:
  research: {url: %q, %s, timeout: 20s, rateLimit: {perSecond: 20}}
federation: {allowHosts: [127.0.0.1]}
credentials:
  research: %s
entry: {agent: research}
`, research, keys, credential))
	}
	clientCreds := fmt.Sprintf("{kind: clientCredentials, tokenURL: %q, clientID: team-b-gateway, secretFile: %q, audience: %q}",
		idpA.TokenURL(), b.file("client-secret", "b-secret-0123456789\n"), researchA)
	gwAuth := b.jwtAuth("auth.yaml", idpB, gatewayB)
	gateway := func(topo string) (*process, string) {
		return start(t, "gateway", append([]string{"gateway"}, meshB.args("127.0.0.1:0", "--topology", topo, "--auth-config", gwAuth,
			"--signing-key", b.signingKey(fmt.Sprintf("gw-%d.pem", time.Now().UnixNano())))...)...)
	}
	_, gw := gateway(topology(fmt.Sprintf("jwksUrl: %q", jwks), clientCreds))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := client.New(ctx, gw, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	user := func(idp *idptest.IdP, sub, aud string) client.CallOption {
		return client.BearerToken(idp.Mint(t, map[string]any{"sub": sub, "aud": aud}))
	}
	alice, bob := user(idpB, "alice", gatewayB), user(idpB, "bob", gatewayB)

	// The question is answered through A.
	ev, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "Research the gateway")}, alice)
	if err != nil {
		t.Fatal(err)
	}
	task, ok := ev.(*a2a.Task)
	// The research agent answers from its corpus, citing documents.
	if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) == 0 ||
		task.Artifacts[0].Name != "ResearchAgent" || !strings.Contains(task.Artifacts[0].Text(), "[1] ") {
		t.Fatalf("B's answer: %+v, want a completed task with the research agent's answer", ev)
	}
	if _, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "hi")}); !errors.Is(err, a2a.ErrUnauthenticated) {
		t.Fatalf("B's gateway without a token: %v, want unauthenticated", err)
	}
	if _, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID}, bob); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("bob's GetTask of alice's task at B: %v, want task not found", err)
	}

	// At A, the task is B's gateway's: A's own users do not see it, B's
	// gateway (with its credentials) does.
	ca, err := client.New(ctx, research, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close()
	carol := user(idpA, "carol", researchA)
	if l, err := ca.ListTasks(ctx, &a2a.ListTasksRequest{}, carol); err != nil || len(l.Tasks) != 0 {
		t.Fatalf("A's user lists %v, %v: want none of B's tasks", l, err)
	}
	gwToken := idpA.Mint(t, map[string]any{"sub": "team-b-gateway", "aud": researchA})
	if l, err := ca.ListTasks(ctx, &a2a.ListTasksRequest{}, client.BearerToken(gwToken)); err != nil || len(l.Tasks) != 1 {
		t.Fatalf("B's gateway at A lists %v, %v: want the one task it asked for", l, err)
	}
	if v, err := cardsign.NewVerifier(cardsign.VerifierConfig{JWKSURL: strings.TrimSuffix(gw, "/") + "/.well-known/jwks.json"}); err != nil {
		t.Fatal(err)
	} else if err := v.Verify(ctx, c.Card()); err != nil {
		t.Fatalf("B's own card, which other teams import, does not verify: %v", err)
	}

	// A card signed with another key than A's is refused: the gateway
	// does not start, and says which agent.
	other, err := cardsign.PublicJWKS(cardsign.PublicKey{ID: "other", Key: mustKey(t).Public()})
	if err != nil {
		t.Fatal(err)
	}
	out := failsToStart(t, append([]string{"gateway"}, meshB.args("127.0.0.1:0", "--topology",
		topology(fmt.Sprintf("keysFile: %q", b.file("other.jwks.json", string(other))), clientCreds), "--auth-config", gwAuth)...)...)
	if !strings.Contains(out, "ResearchAgent") || !strings.Contains(out, "card is refused") {
		t.Fatalf("a gateway importing a card signed by another key:\n%s\nwant it refused, naming the agent", out)
	}

	// An expired credential: the answer fails, naming the agent.
	expired := idpA.Mint(t, map[string]any{"sub": "team-b-gateway", "aud": researchA, "exp": time.Now().Add(-time.Hour).Unix()})
	_, gw2 := gateway(topology(fmt.Sprintf("jwksUrl: %q", jwks), fmt.Sprintf("{kind: bearer, secretFile: %q}", b.file("expired-token", expired))))
	c2, err := client.New(ctx, gw2, client.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	ev, err = c2.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "Research the gateway")}, alice)
	if err != nil {
		t.Fatal(err)
	}
	if task, ok := ev.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateFailed || task.Status.Message == nil ||
		!strings.Contains(task.Status.Message.Text(), "ResearchAgent") || !strings.Contains(task.Status.Message.Text(), "expired") {
		t.Fatalf("with an expired credential: %+v, want a failed task naming ResearchAgent and the expiry", ev)
	}
}

func mustKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// failsToStart runs `a2amesh args...`, which must exit with an error
// before it is ready, and returns its output.
func failsToStart(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=", "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("a2amesh %s: %v (want it to fail before it is ready):\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
