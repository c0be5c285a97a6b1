// Package localcluster runs rendered Kubernetes workloads as local
// processes, so that manifests are proven on a machine without a cluster.
//
// It plays the parts a cluster's nodes play, and only those a test of the
// manifests needs: a pod is a network namespace with an address of its
// own on a bridge, its containers are processes started from the
// container's command, arguments and environment (downward API, ConfigMap
// and Secret references resolved) in a root of their own (an overlay on
// the image's exported filesystem, read-only when the spec says so, with
// the pod's volumes mounted where the spec mounts them) as the spec's
// user; the kubelet's probes, restarts, preStop hooks and grace periods
// are honoured; a Service is a proxy on an address of its own that sends
// each new connection to a ready endpoint and applies the NetworkPolicies
// to it; Deployments and StatefulSets are scaled, spread over nodes and
// rolled as their strategies say.
//
// It needs root (network namespaces, mounts, chroot) and Linux. What it
// leaves out: cgroups (resource limits are not enforced, though the
// downward API reports them), DNS (every pod's /etc/hosts names the
// Services and the StatefulSet pods instead), NetworkPolicies on traffic
// that goes pod to pod without a Service, init containers, and the
// scheduler's finer points (pods are spread evenly over nodes).
package localcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/a2amesh/a2amesh/deploy/k8s/render"
)

// Image is an image's exported root filesystem and the parts of its
// configuration a container runtime reads.
type Image struct {
	Root                 string
	Entrypoint, Cmd, Env []string
	// WorkDir is where the command starts unless the container's
	// workingDir says otherwise; / when empty.
	WorkDir string
	// UID and GID are the image's user, for containers whose spec names
	// none.
	UID, GID int
}

// Config configures a Cluster.
type Config struct {
	// Objects are the rendered manifests: their Services, Deployments
	// and StatefulSets run; ConfigMaps, Secrets and NetworkPolicies are
	// read.
	Objects *render.Objects
	// Images are the images containers may run, by name without tag or
	// digest ("ghcr.io/a2amesh/a2amesh").
	Images map[string]Image
	// Nodes is how many nodes pods are spread over; 3 when zero.
	Nodes int
	// Dir holds the pods' volumes, writable layers and logs.
	Dir string
	// EndpointsDelay is how long after a pod's deletion the Services
	// still send it new connections: the time a cluster takes to carry
	// an endpoint's removal to every kube-proxy and ingress, which a
	// pod's preStop hook is there to cover. 1 s when zero; negative:
	// none.
	EndpointsDelay time.Duration
}

// Cluster is a running set of workloads. Make it with Start; Close it.
type Cluster struct {
	cfg   Config
	objs  *render.Objects
	ns    string // the workloads' namespace
	dir   string
	net   *network
	probe *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	seq      int
	pods     map[string]*Pod
	services map[string]*service
	// stable are the StatefulSet pods' addresses, by pod name.
	stable  map[string]netip.Addr
	nodes   []string
	lost    map[string]bool
	deploys map[string]*deployment
	sets    map[string]*statefulSet
	// gonePods are the pods that were terminated or lost, kept for their
	// logs.
	gonePods []*Pod

	connSeq atomic.Int64
	logMu   sync.Mutex
	conns   bytes.Buffer // the Service connections' log
}

// Start runs every Service, StatefulSet and Deployment of cfg.Objects, all
// at once as a cluster would, and returns without waiting for readiness
// (see WaitReady).
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("localcluster: needs root (network namespaces, mounts, chroot)")
	}
	if cfg.Nodes <= 0 {
		cfg.Nodes = 3
	}
	if cfg.EndpointsDelay == 0 {
		cfg.EndpointsDelay = time.Second
	}
	n, err := newNetwork(ctx)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	c := &Cluster{
		cfg: cfg, objs: cfg.Objects, ns: namespace(cfg.Objects), dir: cfg.Dir, net: n,
		probe: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}},
		ctx:   runCtx, cancel: cancel,
		pods: map[string]*Pod{}, services: map[string]*service{}, stable: map[string]netip.Addr{},
		lost: map[string]bool{}, deploys: map[string]*deployment{}, sets: map[string]*statefulSet{},
	}
	for i := range cfg.Nodes {
		c.nodes = append(c.nodes, fmt.Sprintf("node-%d", i))
	}
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	for _, w := range c.objs.Workloads() {
		if w.Kind != "StatefulSet" {
			continue
		}
		for i := range w.Replicas {
			a, err := n.addr()
			if err != nil {
				return nil, err
			}
			c.stable[fmt.Sprintf("%s-%d", w.Name, i)] = a
		}
	}
	for _, s := range c.objs.Services {
		if err := c.startService(ctx, s); err != nil {
			return nil, err
		}
	}
	for _, w := range c.objs.Workloads() {
		switch w.Kind {
		case "StatefulSet":
			ss := &statefulSet{w: w, s: w.Object.(*appsv1.StatefulSet)}
			c.sets[w.Name] = ss
			for i := range int(w.Replicas) {
				p, err := c.startStatefulPod(ctx, ss, i)
				if err != nil {
					return nil, err
				}
				ss.pods = append(ss.pods, p)
			}
		case "Deployment":
			dep := &deployment{w: w, d: w.Object.(*appsv1.Deployment), rev: 1}
			c.deploys[w.Name] = dep
			for range w.Replicas {
				p, err := c.startDeploymentPod(ctx, dep)
				if err != nil {
					return nil, err
				}
				dep.pods = append(dep.pods, p)
			}
		}
	}
	return c, nil
}

// namespace is the workloads' namespace: the manifests put everything in
// one.
func namespace(o *render.Objects) string {
	for _, w := range o.Workloads() {
		if w.Namespace != "" {
			return w.Namespace
		}
	}
	return "default"
}

// Close kills every pod and removes the network.
func (c *Cluster) Close() error {
	c.cancel()
	c.mu.Lock()
	svcs := make([]*service, 0, len(c.services))
	for _, s := range c.services {
		svcs = append(svcs, s)
	}
	c.mu.Unlock()
	for _, s := range svcs {
		s.close()
	}
	c.wg.Wait()
	return c.net.close()
}

// WaitReady waits until every workload has as many ready pods as it asks
// for, and reports which don't when ctx ends first.
func (c *Cluster) WaitReady(ctx context.Context) error {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		missing := c.unready()
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("localcluster: not ready: %s: %w", strings.Join(missing, ", "), ctx.Err())
		}
	}
}

func (c *Cluster) unready() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for name, d := range c.deploys {
		if want, n := int(d.w.Replicas), countReady(d.pods); n < want {
			out = append(out, fmt.Sprintf("deployment/%s %d/%d", name, n, want))
		}
	}
	for name, s := range c.sets {
		if want, n := int(s.w.Replicas), countReady(s.pods); n < want {
			out = append(out, fmt.Sprintf("statefulset/%s %d/%d", name, n, want))
		}
	}
	sort.Strings(out)
	return out
}

func countReady(pods []*Pod) int {
	n := 0
	for _, p := range pods {
		if p.Ready() {
			n++
		}
	}
	return n
}

// Pods returns the running pods of a workload (a Deployment or a
// StatefulSet), or every pod for "".
func (c *Cluster) Pods(owner string) []*Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Pod
	for _, p := range c.pods {
		if owner == "" || p.Owner == owner {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// connLog notes a Service connection that ended, for Logs.
func (c *Cluster) connLog(format string, args ...any) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	fmt.Fprintf(&c.conns, format, args...)
}

// Logs returns every pod's log, terminated ones included, and every
// Service connection, for a failed test to print.
func (c *Cluster) Logs() string {
	var b strings.Builder
	c.logMu.Lock()
	b.WriteString("--- Service connections\n")
	b.Write(c.conns.Bytes())
	c.logMu.Unlock()
	for _, p := range c.allPods() {
		b.WriteString(p.Log())
	}
	return b.String()
}

func (c *Cluster) allPods() []*Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Pod, 0, len(c.pods))
	for _, p := range c.pods {
		out = append(out, p)
	}
	for _, p := range c.gonePods {
		out = append(out, p)
	}
	return out
}

// schedule picks a node for a new pod of owner: the live node with the
// fewest of owner's pods, then the fewest pods, which keeps a topology
// spread over hostnames with a skew of at most one.
func (c *Cluster) schedule(owner string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestOwn, bestAll := "", 0, 0
	for _, node := range c.nodes {
		if c.lost[node] {
			continue
		}
		own, all := 0, 0
		for _, p := range c.pods {
			if p.Node != node || p.isTerminating() {
				continue
			}
			all++
			if p.Owner == owner {
				own++
			}
		}
		if best == "" || own < bestOwn || own == bestOwn && all < bestAll {
			best, bestOwn, bestAll = node, own, all
		}
	}
	if best == "" {
		return "", errors.New("localcluster: no node left")
	}
	return best, nil
}

// hostsFile is a pod's /etc/hosts: itself, every Service under each name a
// pod's DNS search path would resolve, and every StatefulSet pod under its
// stable name.
func (c *Cluster) hostsFile(p *Pod) []byte {
	ns := c.ns
	var b strings.Builder
	fmt.Fprintf(&b, "127.0.0.1\tlocalhost\n::1\tlocalhost\n%s\t%s\n", p.IP, p.Name)
	c.mu.Lock()
	defer c.mu.Unlock()
	names := func(svc string) string {
		return fmt.Sprintf("%s %s.%s %s.%s.svc %s.%s.svc.cluster.local", svc, svc, ns, svc, ns, svc, ns)
	}
	svcNames := make([]string, 0, len(c.services))
	for name := range c.services {
		svcNames = append(svcNames, name)
	}
	sort.Strings(svcNames)
	for _, name := range svcNames {
		s := c.services[name]
		if s.ip.IsValid() {
			fmt.Fprintf(&b, "%s\t%s\n", s.ip, names(name))
		}
	}
	for _, w := range c.objs.Workloads() {
		if w.Kind != "StatefulSet" {
			continue
		}
		for i := range int(w.Replicas) {
			pod := fmt.Sprintf("%s-%d", w.Name, i)
			sub := w.Object.(*appsv1.StatefulSet).Spec.ServiceName
			fmt.Fprintf(&b, "%s\t%s.%s\n", c.stable[pod], pod, names(sub))
			if c.isHeadless(sub) {
				// A headless Service's own name resolves to its pods.
				fmt.Fprintf(&b, "%s\t%s\n", c.stable[pod], names(sub))
			}
		}
	}
	return []byte(b.String())
}

func (c *Cluster) isHeadless(name string) bool {
	for _, s := range c.objs.Services {
		if s.Name == name {
			return s.Spec.ClusterIP == corev1.ClusterIPNone
		}
	}
	return false
}

// LoseNode cuts a node off: its pods' links go down, so connections to
// them hang as they would, and their processes are killed. The
// controllers replace the Deployments' pods on the other nodes at once;
// a StatefulSet's pod comes back, on another node, when the test calls
// RestartStatefulPod, as an operator would after deleting it by force.
func (c *Cluster) LoseNode(ctx context.Context, node string) error {
	c.mu.Lock()
	c.lost[node] = true
	var victims []*Pod
	for _, p := range c.pods {
		if p.Node == node {
			victims = append(victims, p)
		}
	}
	c.mu.Unlock()
	for _, p := range victims {
		p.mu.Lock()
		p.gone = true
		p.mu.Unlock()
		if err := c.net.cut(ctx, p.ns, true); err != nil {
			return err
		}
		p.kill()
	}
	for _, p := range victims {
		<-p.done
		c.forget(p)
	}
	var errs []error
	for _, d := range c.deploysOf(victims) {
		errs = append(errs, c.replace(ctx, d, victims))
	}
	return errors.Join(errs...)
}

func (c *Cluster) deploysOf(pods []*Pod) []*deployment {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*deployment
	for _, p := range pods {
		if d, ok := c.deploys[p.Owner]; ok && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// forget removes a pod that is gone from the cluster's view; its network
// namespace goes too.
func (c *Cluster) forget(p *Pod) {
	c.mu.Lock()
	if c.pods[p.Name] == p {
		delete(c.pods, p.Name)
		c.gonePods = append(c.gonePods, p)
	}
	c.mu.Unlock()
	_ = c.net.delNetns(p.ns) // its processes are gone; a failure leaves a namespace Close removes
}
