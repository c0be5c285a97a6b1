//go:build linux

package k8s_test

import (
	"context"
	"crypto/tls"
	"fmt"
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
	"testing"
	"time"

	"github.com/a2amesh/a2amesh/a2a"
	"github.com/a2amesh/a2amesh/a2a/client"
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
// and a task interrupted before the rollout must resume after it.
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

	cl := ingressClient(t, ctx, c, o)

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
	t.Logf("rolled %d Deployments (%d pods replaced) in %v under load: %d streams, %d events, %d failed",
		len(deploys), podCount(c, deploys), rollTime.Round(time.Millisecond), res.streams, res.events, len(res.failures))
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
	second, err := cl.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply})
	if err != nil {
		t.Fatalf("resume after the rollout: %v", err)
	}
	done, ok := second.(*a2a.Task)
	if !ok || done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("resume after the rollout: %+v", second)
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
	natsRoot := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(natsRoot, "usr/local/bin/nats-server"), "github.com/nats-io/nats-server/v2")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build nats-server: %v\n%s", err, out)
	}
	return map[string]localcluster.Image{
		a2ameshImage: {Root: root, Entrypoint: []string{"/a2amesh"}, Cmd: []string{"help"}, UID: 65532, GID: 65532, WorkDir: "/data"},
		"nats":       {Root: natsRoot, Entrypoint: []string{"nats-server"}, Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}},
	}
}

// ingressClient is a client outside the cluster that reaches the gateway
// as the prod overlay's Ingress publishes it: at its public URL, over TLS
// ended by a reverse proxy in front of the gateway's Service, as an
// ingress controller ends it.
func ingressClient(t *testing.T, ctx context.Context, c *localcluster.Cluster, o *render.Objects) *client.Client {
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
	addr, err := c.ServiceAddr(backend.Name, port)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: addr})
	proxy.FlushInterval = -1 // SSE
	front := httptest.NewUnstartedServer(proxy)
	front.EnableHTTP2 = false
	front.StartTLS()
	t.Cleanup(front.Close)
	tr := front.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: front.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: host}
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, front.Listener.Addr().String())
	}
	hc := &http.Client{Transport: tr}
	t.Cleanup(tr.CloseIdleConnections)
	cl, err := client.New(ctx, "https://"+host+"/", client.Config{HTTPClient: hc})
	if err != nil {
		t.Fatalf("the gateway behind the ingress: %v", err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	return cl
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
	failures        []string
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
				events, fail := streamOnce(ctx, cl, q)
				if ctx.Err() != nil && fail != "" {
					return // stopped mid-stream: not a failure of the mesh
				}
				l.mu.Lock()
				l.res.streams++
				l.res.events += events
				if fail != "" {
					l.res.failures = append(l.res.failures, fmt.Sprintf("%q: %s", q, fail))
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

func streamOnce(ctx context.Context, cl *client.Client, q string) (events int, failure string) {
	var ids []int
	var final a2a.TaskState
	for ev, err := range cl.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewTextMessage(a2a.RoleUser, q)}) {
		if err != nil {
			return events, err.Error()
		}
		events++
		if ev.ID != "" {
			id, err := strconv.Atoi(ev.ID)
			if err != nil {
				return events, fmt.Sprintf("event id %q", ev.ID)
			}
			ids = append(ids, id)
		}
		switch e := ev.Event.(type) {
		case *a2a.Task:
			final = e.Status.State
		case *a2a.TaskStatusUpdateEvent:
			final = e.Status.State
		}
	}
	for i, id := range ids {
		if id != ids[0]+i {
			return events, fmt.Sprintf("event ids %v: lost or repeated", ids)
		}
	}
	if final != a2a.TaskStateCompleted {
		return events, fmt.Sprintf("ended %s", final)
	}
	return events, ""
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
