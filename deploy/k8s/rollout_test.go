//go:build linux

package k8s_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/cardsign"
	"github.com/a2amesh/a2amesh/a2a/client"
	"github.com/a2amesh/a2amesh/a2a/credentials"
	"github.com/a2amesh/a2amesh/deploy/k8s/internal/localcluster"
	"github.com/a2amesh/a2amesh/deploy/k8s/render"
)

// The prod overlay, run: its Deployments, its NATS cluster and its
// Services as local pods (localcluster: a network namespace each, the
// image's files as a read-only root, the spec's user, command, arguments
// and environment, its probes and grace periods, its NetworkPolicies on
// every Service connection), spread over three nodes. Seed questions
// stream through the gateway, as a client behind the Ingress asks them,
// while every Deployment rolls as `kubectl rollout restart` would roll it
// (all at once, each by its maxSurge and maxUnavailable): no request may
// fail, no stream may lose or repeat an event, every old pod must exit 0,
// and a task interrupted before the rollout must resume after it. The
// Secrets the manifests reference are created as docs/deploy.md says,
// with values of the test's own: the clients send the client key, and the
// gateway and the agents refuse a call without their keys.
func TestRollingRestartLosesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		// Network namespaces, mounts and chroot: CI and this project's
		// machines run the tests as root.
		if strings.Contains(os.Getenv("A2AMESH_ALLOW_SKIP"), "root") {
			t.Skip("not root, and A2AMESH_ALLOW_SKIP names root")
		}
		t.Fatal("the manifests run as local pods only as root (or set A2AMESH_ALLOW_SKIP=root to skip this)")
	}
	if testing.Short() {
		t.Skip("a cluster's worth of processes; not under -short")
	}
	o, err := render.Overlay("prod")
	if err != nil {
		t.Fatal(err)
	}
	keys := createSecrets(t, o)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c, err := localcluster.Start(ctx, localcluster.Config{Objects: o, Images: localImages(t), Dir: t.TempDir(), Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(c.Logs())
		}
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	started := time.Now()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("every pod ready %v after the start", time.Since(started).Round(time.Millisecond))

	checkStreamReplicas(t, ctx, c, 3, keys.nats)
	hc, gatewayURL := ingress(t, c, o)
	checkKeysRequired(t, ctx, c, o, hc, gatewayURL, keys)
	cl, err := client.New(ctx, gatewayURL, client.Config{HTTPClient: hc, Credentials: credentials.APIKey("", keys.client)})
	if err != nil {
		t.Fatalf("the gateway behind the ingress: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	checkSignedCard(t, ctx, cl.Card(), hc, gatewayURL)

	// A task left waiting for its user before the rollout.
	first, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, "Ask me who the report is for, then write it")})
	if err != nil {
		t.Fatal(err)
	}
	waiting, ok := first.(*a2a.Task)
	if !ok || waiting.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the gateway answered %+v, want an INPUT_REQUIRED task", first)
	}

	load := startLoad(ctx, cl, 4)
	var deploys []string
	for _, w := range o.Workloads() {
		if w.Kind == "Deployment" {
			deploys = append(deploys, w.Name)
		}
	}
	rolled := time.Now()
	errs := make([]error, len(deploys))
	var wg sync.WaitGroup
	for i, name := range deploys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Rollout(ctx, name)
		}()
	}
	wg.Wait()
	rollTime := time.Since(rolled)
	res := load.stop()
	for i, err := range errs {
		if err != nil {
			t.Errorf("rollout of %s: %v", deploys[i], err)
		}
	}
	t.Logf("rolled %d Deployments (%d pods replaced) in %v under load: %d streams, %d events, %d retried after a retryable refusal (%d requests past the gateway's rate limit), %d failed",
		len(deploys), podCount(c, deploys), rollTime.Round(time.Millisecond), res.streams, res.events, res.retried,
		strings.Count(c.Logs(), "limit is reached"), len(res.failures))
	for i, f := range res.failures {
		if i == 10 {
			t.Errorf("... and %d more", len(res.failures)-10)
			break
		}
		t.Error(f)
	}
	if res.streams == 0 {
		t.Error("no stream ran during the rollout")
	}
	for _, p := range c.Pods("") {
		if n := p.Restarts(); n > 0 && p.Owner != "nats" {
			t.Errorf("%s restarted %d times", p.Name, n)
		}
	}

	// The interrupted task resumes on pods that were not there when it
	// stopped.
	reply := a2a.NewTextMessage(a2a.RoleUser, "the board")
	reply.TaskID, reply.ContextID = waiting.ID, waiting.ContextID
	var second a2a.Event
	err = retrying(ctx, func() error {
		second, err = cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply})
		return err
	})
	if err != nil {
		t.Fatalf("resume after the rollout: %v", err)
	}
	done, ok := second.(*a2a.Task)
	if !ok || done.Status.State != a2a.TaskStateCompleted {
		why := ""
		if ok && done.Status.Message != nil {
			why = done.Status.Message.Text()
		}
		t.Fatalf("resume after the rollout: %T %s: %s", second, done.Status.State, why)
	}
	if text := taskText(done); !strings.Contains(text, "the person answered: the board") {
		t.Errorf("the resumed task's answer: %q", text)
	}
}

// localImages stages the images the overlay names: a2amesh's files as
// `make image-context` stages them for deploy/image/Containerfile, and
// NATS as a static nats-server (the module's own) on an empty root.
func localImages(t *testing.T) map[string]localcluster.Image {
	t.Helper()
	repo := filepath.Join(render.Dir(), "..", "..")
	ctxDir := t.TempDir()
	mk := exec.Command("make", "-s", "image-context", "IMAGE_DIR="+ctxDir)
	mk.Dir = repo
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make image-context: %v\n%s", err, out)
	}
	// The Containerfile's COPY rootfs/ / and COPY --chown=65532:65532 data/ /data/.
	root := filepath.Join(ctxDir, "rootfs")
	if err := os.MkdirAll(filepath.Join(root, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(root, "data"), 65532, 65532); err != nil {
		t.Fatal(err)
	}
	bin, err := natsServer()
	if err != nil {
		t.Fatal(err)
	}
	natsRoot := t.TempDir()
	if err := os.MkdirAll(filepath.Join(natsRoot, "usr/local/bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", bin, filepath.Join(natsRoot, "usr/local/bin/nats-server")).CombinedOutput(); err != nil {
		t.Fatalf("copy nats-server: %v: %s", err, out)
	}
	return map[string]localcluster.Image{
		a2ameshImage: {Root: root, Entrypoint: []string{"/a2amesh"}, Cmd: []string{"help"}, UID: 65532, GID: 65532, WorkDir: "/data"},
		"nats":       {Root: natsRoot, Entrypoint: []string{"nats-server"}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}},
	}
}

// ingress is how a client outside the cluster reaches the gateway as the
// prod overlay's Ingress publishes it: at its public URL (returned), over
// TLS ended by a reverse proxy that sends each request to one of the
// Service's ready endpoints, as ingress-nginx does (it balances requests
// over endpoints, not connections over a Service address).
func ingress(t *testing.T, c *localcluster.Cluster, o *render.Objects) (*http.Client, string) {
	t.Helper()
	ing := o.Ingresses[0]
	host := ing.Spec.Rules[0].Host
	backend := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	svc := o.Service(backend.Name)
	port := int(backend.Port.Number)
	if backend.Port.Name != "" {
		for _, sp := range svc.Spec.Ports {
			if sp.Name == backend.Port.Name {
				port = int(sp.Port)
			}
		}
	}
	var next atomic.Uint64
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			eps, err := c.Endpoints(backend.Name, port)
			if err != nil || len(eps) == 0 {
				// No endpoint: the proxy answers 502, as an ingress does.
				r.Out.URL.Host = "127.0.0.1:1"
			} else {
				r.Out.URL.Host = eps[next.Add(1)%uint64(len(eps))]
			}
			r.Out.URL.Scheme = "http"
			r.Out.Host = r.In.Host
		},
		FlushInterval: -1, // SSE
	}
	front := httptest.NewUnstartedServer(proxy)
	front.EnableHTTP2 = false
	front.StartTLS()
	t.Cleanup(front.Close)
	tr := front.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.ServerName = host
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, front.Listener.Addr().String())
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, "https://" + host + "/"
}

// testKeys are the secrets the test gave the mesh.
type testKeys struct {
	mesh, client staticSecret
	// nats is the NATS password of the mesh's user.
	nats string
}

// staticSecret is a secret the test holds.
type staticSecret string

func (s staticSecret) Value() (string, error) { return string(s), nil }

// createSecrets adds to o the Secrets its manifests reference and the
// operator creates (docs/deploy.md#security): the mesh key, the client
// key, the gateway's signing key, the NATS passwords, random each run.
func createSecrets(t *testing.T, o *render.Objects) testKeys {
	t.Helper()
	random := func() string {
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(b)
	}
	keys := testKeys{mesh: staticSecret(random()), client: staticSecret(random())}
	signer, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(signer)
	if err != nil {
		t.Fatal(err)
	}
	// The others (the NATS passwords) random too, as the operator makes
	// them.
	data := map[string]map[string][]byte{
		"a2amesh-mesh-key":    {"key": []byte(keys.mesh)},
		"a2amesh-client-keys": {"client": []byte(keys.client)},
		"a2amesh-signing-key": {"key.pem": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})},
	}
	for name, ks := range operatorSecrets {
		for _, k := range ks {
			if data[name] == nil {
				data[name] = map[string][]byte{}
			}
			if data[name][k] == nil {
				b := make([]byte, 32)
				if _, err := rand.Read(b); err != nil {
					t.Fatal(err)
				}
				data[name][k] = []byte(hex.EncodeToString(b)) // openssl rand -hex 32
			}
			if name == "a2amesh-nats" && k == "password" {
				keys.nats = string(data[name][k])
			}
		}
	}
	ns := o.Namespaces[0].Name
	for name, d := range data {
		o.Secrets = append(o.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: d})
	}
	return keys
}

// checkKeysRequired sends a message to the gateway, and to an agent
// directly, with each key and with none: the gateway takes the client key
// only, the agent the mesh key only; the others are refused with 401 and
// a challenge naming the header.
func checkKeysRequired(t *testing.T, ctx context.Context, c *localcluster.Cluster, o *render.Objects, hc *http.Client, gatewayURL string, keys testKeys) {
	t.Helper()
	var weather container
	for _, ct := range containers(o) {
		if ct.w.Name == "weather" && isA2amesh(ct.c) {
			weather = ct
		}
	}
	card, err := publicURL(o, weather)
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(card)
	if err != nil {
		t.Fatal(err)
	}
	pods := c.Pods("weather")
	if len(pods) == 0 {
		t.Fatal("no weather pod")
	}
	// Straight to the pod, as its card's host (the agent refuses another).
	agentURL := "http://" + net.JoinHostPort(pods[0].IP.String(), u.Port()) + "/"
	direct := &http.Client{Timeout: 30 * time.Second}
	for _, tc := range []struct {
		to, with     string
		hc           *http.Client
		url, host    string
		key          staticSecret
		wantAdmitted bool
	}{
		{"the gateway", "no key", hc, gatewayURL, "", "", false},
		{"the gateway", "the mesh key", hc, gatewayURL, "", keys.mesh, false},
		{"the gateway", "the client key", hc, gatewayURL, "", keys.client, true},
		{"an agent", "no key", direct, agentURL, u.Host, "", false},
		{"an agent", "the client key", direct, agentURL, u.Host, keys.client, false},
		{"an agent", "the mesh key", direct, agentURL, u.Host, keys.mesh, true},
	} {
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"keys-1","role":"ROLE_USER","parts":[{"text":"What's the weather in Oslo?"}]}}}`
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		if tc.host != "" {
			req.Host = tc.host
		}
		if tc.key != "" {
			req.Header.Set("X-API-Key", string(tc.key))
		}
		resp, err := tc.hc.Do(req)
		if err != nil {
			t.Fatalf("%s with %s: %v", tc.to, tc.with, err)
		}
		reply, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		switch {
		case tc.wantAdmitted && (resp.StatusCode != http.StatusOK || strings.Contains(string(reply), `"error"`)):
			t.Errorf("%s with %s: %s %s, want an answer", tc.to, tc.with, resp.Status, reply)
		case !tc.wantAdmitted && resp.StatusCode != http.StatusUnauthorized:
			t.Errorf("%s with %s: %s %s, want 401", tc.to, tc.with, resp.Status, reply)
		case !tc.wantAdmitted && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `header="X-API-Key"`):
			t.Errorf("%s with %s: 401 with the challenge %q, want one naming X-API-Key", tc.to, tc.with, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

// checkSignedCard verifies the gateway's card as a team importing it
// would: against the key its JWKS publishes. The card declares the key
// it takes.
func checkSignedCard(t *testing.T, ctx context.Context, card *a2a.AgentCard, hc *http.Client, gatewayURL string) {
	t.Helper()
	if len(card.Signatures) == 0 {
		t.Fatal("the gateway's card is not signed")
	}
	v, err := cardsign.NewVerifier(cardsign.VerifierConfig{JWKSURL: gatewayURL + ".well-known/jwks.json", HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Verify(ctx, card); err != nil {
		t.Errorf("the gateway's card does not verify against its JWKS: %v", err)
	}
	if len(card.SecurityRequirements) == 0 || card.SecuritySchemes["apiKey"].APIKey == nil {
		t.Errorf("the gateway's card declares no API key: schemes %v, requirements %v", card.SecuritySchemes, card.SecurityRequirements)
	}
}

// seedQuestions are questions the offline model routes to each kind of
// agent, all of which complete.
var seedQuestions = []string{
	"What's the weather in Beijing?",
	"Book me a flight",
	"Research checkpoints and write a report",
	"Plan: calculate 2 + 3, then calculate 4 * 5",
	"Calculate 6 * 7",
}

type load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	res    loadResult
}

type loadResult struct {
	streams, events int
	// retried counts the streams refused for now (a retryable error:
	// a replica draining, the stores out of reach) and asked again after
	// the wait the refusal named, as the protocol asks a client to.
	retried  int
	failures []string
}

// startLoad streams seed questions through cl from n workers until stop,
// checking each stream: it ends COMPLETED, and its events are numbered
// 1, 2, 3... with none missing or repeated, resumed streams included.
func startLoad(ctx context.Context, cl *client.Client, n int) *load {
	ctx, cancel := context.WithCancel(ctx)
	l := &load{cancel: cancel}
	for w := range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; i < 100000 && ctx.Err() == nil; i++ {
				q := seedQuestions[(w+i)%len(seedQuestions)]
				start := time.Now()
				var events, tries int
				err := retrying(ctx, func() error {
					tries++
					var err error
					events, err = streamOnce(ctx, cl, q)
					return err
				})
				if ctx.Err() != nil && err != nil {
					return // stopped mid-stream: not a failure of the mesh
				}
				l.mu.Lock()
				l.res.streams++
				l.res.events += events
				l.res.retried += tries - 1
				if err != nil {
					l.res.failures = append(l.res.failures, fmt.Sprintf("%s+%v %q: %v", start.Format("15:04:05.000"), time.Since(start).Round(time.Millisecond), q, err))
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func (l *load) stop() loadResult {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.res
}

// retrying calls fn again while it fails with a retryable refusal (an
// a2a.Error with RetryAfter) and nothing else, waiting as the refusal
// asks (at most 5 s), up to 5 tries.
func retrying(ctx context.Context, fn func() error) error {
	for try := 1; ; try++ {
		err := fn()
		if err == nil || try == 5 {
			return err
		}
		var e *a2a.Error
		if !errors.As(err, &e) || e.RetryAfter <= 0 {
			return err
		}
		select {
		case <-time.After(min(e.RetryAfter, 5*time.Second)):
		case <-ctx.Done():
			return err
		}
	}
}

func streamOnce(ctx context.Context, cl *client.Client, q string) (events int, err error) {
	var ids []int
	var final a2a.TaskState
	var why string
	for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, q)}) {
		if err != nil {
			return events, err
		}
		events++
		if ev.ID != "" {
			id, err := strconv.Atoi(ev.ID)
			if err != nil {
				return events, fmt.Errorf("event id %q", ev.ID)
			}
			ids = append(ids, id)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			final = e.Status.State
			if e.Status.Message != nil {
				why = e.Status.Message.Text()
			}
		case *a2a.TaskStatusUpdateEvent:
			final = e.Status.State
			if e.Status.Message != nil {
				why = e.Status.Message.Text()
			}
		}
	}
	for i, id := range ids {
		if id != ids[0]+i {
			return events, fmt.Errorf("event ids %v: lost or repeated", ids)
		}
	}
	if final != a2a.TaskStateCompleted {
		return events, fmt.Errorf("ended %s: %s", final, why)
	}
	return events, nil
}

func podCount(c *localcluster.Cluster, owners []string) int {
	n := 0
	for _, p := range c.Pods("") {
		if slices.Contains(owners, p.Owner) {
			n++
		}
	}
	return n
}

func taskText(t *a2a.Task) string {
	var b strings.Builder
	for _, art := range t.Artifacts {
		for _, p := range art.Parts {
			b.WriteString(p.Text)
		}
	}
	if t.Status.Message != nil {
		b.WriteString(t.Status.Message.Text())
	}
	return b.String()
}

// checkStreamReplicas checks that every JetStream stream the services
// made (their KV buckets are streams too) is held by want servers, asking
// a NATS pod directly, as the mesh's user: NATS refuses a client without
// a credential.
func checkStreamReplicas(t *testing.T, ctx context.Context, c *localcluster.Cluster, want int, password string) {
	t.Helper()
	pods := c.Pods("nats")
	if len(pods) == 0 {
		t.Fatal("no NATS pod")
	}
	u := "nats://" + net.JoinHostPort(pods[0].IP.String(), "4222")
	if nc, err := nats.Connect(u); !errors.Is(err, nats.ErrAuthorization) {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("NATS without a credential: %v, want an authorization violation", err)
	}
	nc, err := nats.Connect(u, nats.UserInfo("a2amesh", password))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	streams := js.ListStreams(ctx)
	for info := range streams.Info() {
		n++
		if info.Config.Replicas != want {
			t.Errorf("stream %s is held by %d servers, want %d", info.Config.Name, info.Config.Replicas, want)
		}
	}
	if err := streams.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no stream on NATS")
	}
}
