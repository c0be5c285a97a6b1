package localcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/a2amesh/a2amesh/deploy/k8s/render"
)

func TestMain(m *testing.M) {
	MaybeInit()
	os.Exit(m.Run())
}

// objects renders manifests (YAML documents) as a kustomization with a
// namespace would, through the same path as the real overlays.
func objects(t *testing.T, ns, manifests string) *render.Objects {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	kust := "resources: [objects.yaml]\nnamespace: " + ns + "\n"
	if err := fsys.WriteFile("/k/kustomization.yaml", []byte(kust)); err != nil {
		t.Fatal(err)
	}
	if err := fsys.WriteFile("/k/objects.yaml", []byte(manifests)); err != nil {
		t.Fatal(err)
	}
	o, err := render.Build(fsys, "/k")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// poddImage builds testdata/podd into an image root of its own.
func poddImage(t *testing.T) Image {
	t.Helper()
	root := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(root, "podd"), "./testdata/podd")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build podd: %v\n%s", err, out)
	}
	return Image{Root: root, Entrypoint: []string{"/podd"}, UID: 0, GID: 0}
}

// needRoot fails the test unless it runs as root, which network
// namespaces, mounts and chroot need (CI and this project's machines run
// the tests as root), or A2AMESH_ALLOW_SKIP names root: then it skips.
func needRoot(t *testing.T) {
	if os.Geteuid() == 0 {
		return
	}
	if strings.Contains(os.Getenv("A2AMESH_ALLOW_SKIP"), "root") {
		t.Skip("not root, and A2AMESH_ALLOW_SKIP names root")
	}
	t.Fatal("localcluster runs pods only as root (or set A2AMESH_ALLOW_SKIP=root to skip this)")
}

const testObjects = `
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"conf"},"data":{"greeting":"hello","file.txt":"from a configmap"}}
---
{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{
  "replicas":2,
  "strategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}},
  "selector":{"matchLabels":{"app":"web"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{
    "terminationGracePeriodSeconds":20,
    "securityContext":{"runAsNonRoot":true,"runAsUser":65532,"runAsGroup":65532},
    "volumes":[{"name":"conf","configMap":{"name":"conf"}},{"name":"tmp","emptyDir":{}}],
    "containers":[{"name":"web","image":"example.com/podd:1.0",
      "ports":[{"name":"http","containerPort":8080}],
      "env":[{"name":"PORT","value":"8080"},
        {"name":"GREETING","valueFrom":{"configMapKeyRef":{"name":"conf","key":"greeting"}}},
        {"name":"POD","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
        {"name":"MEMLIMIT","valueFrom":{"resourceFieldRef":{"resource":"limits.memory","divisor":"1Mi"}}},
        {"name":"SAY","value":"$(GREETING) from $(POD)"}],
      "resources":{"limits":{"memory":"64Mi","cpu":"500m"}},
      "volumeMounts":[{"name":"conf","mountPath":"/etc/conf","readOnly":true},{"name":"tmp","mountPath":"/tmp"}],
      "securityContext":{"readOnlyRootFilesystem":true},
      "readinessProbe":{"httpGet":{"path":"/readyz","port":"http"},"periodSeconds":1},
      "livenessProbe":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":1}}]}}}}
---
{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80,"targetPort":"http"}]}}
`

func TestPodsServicesAndRollout(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Start(ctx, Config{
		Objects: objects(t, "demo", testObjects),
		Images:  map[string]Image{"example.com/podd": poddImage(t)},
		Dir:     t.TempDir(),
	})
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
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	addr, err := c.ServiceAddr("web", 80)
	if err != nil {
		t.Fatal(err)
	}
	// A new connection per request: a Service balances connections.
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(query string) (map[string]any, error) {
		resp, err := hc.Get("http://" + addr + "/?" + query)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, err
		}
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			return nil, fmt.Errorf("%s: %w", body, err)
		}
		return out, nil
	}

	t.Run("the container sees its spec", func(t *testing.T) {
		got, err := get("env=GREETING&env=MEMLIMIT&env=SAY&read=/etc/conf/file.txt&write=/tmp/x&write=/x&write=/etc/conf/y")
		if err != nil {
			t.Fatal(err)
		}
		host := got["hostname"].(string)
		if !strings.HasPrefix(host, "web-") || got["env:HOSTNAME"] != host {
			t.Errorf("the pod's host name is %q (HOSTNAME %q), want its name", host, got["env:HOSTNAME"])
		}
		want := map[string]any{
			"uid": 65532.0, "gid": 65532.0,
			"env:GREETING": "hello", "env:MEMLIMIT": "64", "env:SAY": "hello from " + host,
			"read:/etc/conf/file.txt": "from a configmap",
			"write:/tmp/x":            "",
			"write:/x":                "error: open /x: read-only file system",
			"write:/etc/conf/y":       "error: open /etc/conf/y: read-only file system",
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %v, want %v", k, got[k], v)
			}
		}
	})

	t.Run("the service balances over both pods", func(t *testing.T) {
		seen := map[string]bool{}
		for range 6 {
			got, err := get("")
			if err != nil {
				t.Fatal(err)
			}
			seen[got["hostname"].(string)] = true
		}
		if len(seen) != 2 {
			t.Errorf("answered by %v, want both pods", seen)
		}
	})

	t.Run("a rollout under load fails no request", func(t *testing.T) {
		// The pods' gateway keeps its MAC address as pods come and go (a
		// bridge's own would follow its ports, and the pods' ARP entries
		// would go stale).
		mac := func() string {
			b, err := os.ReadFile(filepath.Join("/sys/class/net", c.net.bridge, "address"))
			if err != nil {
				t.Fatal(err)
			}
			return strings.TrimSpace(string(b))
		}
		macBefore := mac()
		defer func() {
			if after := mac(); after != macBefore {
				t.Errorf("the bridge's MAC went from %s to %s", macBefore, after)
			}
		}()
		before := c.Pods("web")
		var rollErr error
		ok, failed, firstErr := underLoad(func() error {
			_, err := get("sleep=20ms")
			return err
		}, func() { rollErr = c.Rollout(ctx, "web") })
		if rollErr != nil {
			t.Fatal(rollErr)
		}
		after := c.Pods("web")
		if len(after) != 2 || after[0].Name == before[0].Name || after[1].Name == before[1].Name {
			t.Errorf("pods after the rollout: %v, before: %v", names(after), names(before))
		}
		t.Logf("%d requests during the rollout", ok+failed)
		if failed > 0 || ok == 0 {
			t.Errorf("%d requests failed (the first: %v), %d succeeded", failed, firstErr, ok)
		}
	})

	t.Run("a lost node's pods are replaced elsewhere", func(t *testing.T) {
		victim := c.Pods("web")[0]
		if err := c.LoseNode(ctx, victim.Node); err != nil {
			t.Fatal(err)
		}
		if err := c.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range c.Pods("web") {
			if p.Node == victim.Node {
				t.Errorf("%s runs on the lost %s", p.Name, p.Node)
			}
		}
		if _, err := get(""); err != nil {
			t.Error(err)
		}
	})
}

func names(pods []*Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// TestRolloutCatchesAnAbruptExit is the rollout check's negative case: a
// server that exits the moment SIGTERM arrives, while the Service still
// sends it connections, fails requests, and the load sees them.
func TestRolloutCatchesAnAbruptExit(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	objs := objects(t, "demo", testObjects)
	env := &objs.Deployments[0].Spec.Template.Spec.Containers[0].Env
	*env = append(*env, corev1.EnvVar{Name: "NODRAIN", Value: "1"})
	c, err := Start(ctx, Config{Objects: objs, Images: map[string]Image{"example.com/podd": poddImage(t)}, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	addr, err := c.ServiceAddr("web", 80)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	_, failed, _ := underLoad(func() error {
		resp, err := hc.Get("http://" + addr + "/")
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}, func() {
		_ = c.Rollout(ctx, "web") // its pods exit 0; the requests tell
	})
	if failed == 0 {
		t.Error("no request failed while pods exited without draining")
	}
}

// underLoad runs call from four goroutines, over and over (a bounded
// number of times), while during runs, and counts the calls that
// succeeded and failed.
func underLoad(call func() error, during func()) (ok, failed int64, first error) {
	var nOK, nFailed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100000; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := call(); err != nil {
					nFailed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				} else {
					nOK.Add(1)
				}
			}
		}()
	}
	during()
	close(stop)
	wg.Wait()
	first, _ = firstErr.Load().(error)
	return nOK.Load(), nFailed.Load(), first
}

func TestAllowed(t *testing.T) {
	objs := objects(t, "mesh", `
{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"math"},"spec":{"podSelector":{"matchLabels":{"app":"math"}},"policyTypes":["Ingress"],
  "ingress":[{"from":[{"podSelector":{"matchLabels":{"app":"gateway"}}},{"podSelector":{"matchLabels":{"app":"planner"}}}],"ports":[{"port":"http"}]}]}},
---
{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"gateway"},"spec":{"podSelector":{"matchLabels":{"app":"gateway"}},"policyTypes":["Ingress"],
  "ingress":[{"from":[{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"ingress-nginx"}}}]}]}},
---
{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"planner-egress"},"spec":{"podSelector":{"matchLabels":{"app":"planner"}},"policyTypes":["Egress"],
  "egress":[{"to":[{"podSelector":{"matchLabels":{"app":"math"}}}]}]}}
`)
	c := &Cluster{objs: objs, ns: "mesh"}
	pod := func(app string) *Pod {
		return &Pod{Name: app, Labels: map[string]string{"app": app}, ctrs: []*container{{spec: corev1.Container{
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 9104}}}}}}
	}
	math, gateway, planner, weather := pod("math"), pod("gateway"), pod("planner"), pod("weather")
	for _, tc := range []struct {
		name     string
		src, dst *Pod
		port     int
		want     bool
	}{
		{"the gateway calls math", gateway, math, 9104, true},
		{"the planner calls math", planner, math, 9104, true},
		{"weather may not call math", weather, math, 9104, false},
		{"only the named port", gateway, math, 9999, false},
		{"the planner's egress stops it calling weather", planner, weather, 9104, false},
		{"weather has no policy", math, weather, 9104, true},
		{"the ingress controller reaches the gateway", nil, gateway, 9104, true},
		{"a pod of the mesh does not reach the gateway", math, gateway, 9104, false},
		{"nor does anything outside reach math", nil, math, 9104, false},
	} {
		if got := c.Allowed(tc.src, tc.dst, tc.port); got != tc.want {
			t.Errorf("%s: Allowed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
