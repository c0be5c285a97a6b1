package localcluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/a2amesh/a2amesh/deploy/k8s/render"
)

// Pod is one running pod: a network namespace with an address of its own
// and a process per container, started the way a kubelet would start them
// from the pod's spec.
type Pod struct {
	Name   string
	Labels map[string]string
	Node   string
	IP     netip.Addr
	// Owner names the Deployment or StatefulSet the pod belongs to.
	Owner string

	c    *Cluster
	w    render.Workload
	spec corev1.PodSpec
	ns   string
	dir  string
	ctrs []*container

	mu          sync.Mutex
	ready       bool
	terminating bool
	// deleted is when the pod's termination began; the Services stop
	// sending it connections Config.EndpointsDelay later.
	deleted time.Time
	gone    bool // its node is lost: no packet reaches it
	// done is closed when every container has exited for good.
	done chan struct{}
}

type container struct {
	pod      *Pod
	spec     corev1.Container
	init     initSpec
	log      *os.File
	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	restarts int
	stopping bool
}

// Ready reports whether the pod's readiness probes pass and its
// termination, if it began, is not yet known to the Services: whether a
// Service sends it new connections.
func (p *Pod) Ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminating && time.Since(p.deleted) >= p.c.cfg.EndpointsDelay {
		return false
	}
	return p.ready && !p.gone
}

// Restarts is how many times the pod's containers were restarted after
// exiting on their own or failing their liveness probes.
func (p *Pod) Restarts() int {
	n := 0
	for _, c := range p.ctrs {
		c.mu.Lock()
		n += c.restarts
		c.mu.Unlock()
	}
	return n
}

// Log returns what the pod's containers wrote to stdout and stderr.
func (p *Pod) Log() string {
	var b strings.Builder
	for _, c := range p.ctrs {
		data, _ := os.ReadFile(c.log.Name())
		fmt.Fprintf(&b, "--- %s/%s\n%s", p.Name, c.spec.Name, data)
	}
	return b.String()
}

// startPod does what a kubelet does for a pod that was scheduled on node:
// the sandbox (a network namespace), the volumes, the environment, then
// every container and its probes.
func (c *Cluster) startPod(ctx context.Context, name string, w render.Workload, node string, meta map[string]string, fixedIP netip.Addr) (*Pod, error) {
	spec := w.Template.Spec
	if len(spec.InitContainers) > 0 {
		return nil, fmt.Errorf("pod %s: init containers are not supported", name)
	}
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	p := &Pod{Name: name, Labels: meta, Node: node, Owner: w.Name, c: c, w: w, spec: spec, done: make(chan struct{})}
	p.dir = filepath.Join(c.dir, "pods", fmt.Sprintf("%s-%d", name, seq))
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	ns, ip, err := c.net.podNetns(ctx, seq, fixedIP)
	if err != nil {
		return nil, err
	}
	p.ns, p.IP = ns, ip
	volumes, err := c.volumes(p)
	if err != nil {
		_ = c.net.delNetns(ns)
		return nil, err
	}
	hosts := filepath.Join(p.dir, "hosts")
	if err := os.WriteFile(hosts, c.hostsFile(p), 0o644); err != nil {
		_ = c.net.delNetns(ns)
		return nil, err
	}
	for _, cs := range spec.Containers {
		ctr, err := c.container(p, cs, volumes, hosts)
		if err != nil {
			_ = c.net.delNetns(ns)
			return nil, err
		}
		p.ctrs = append(p.ctrs, ctr)
	}
	for _, ctr := range p.ctrs {
		if err := ctr.start(); err != nil {
			p.kill()
			_ = c.net.delNetns(ns)
			return nil, err
		}
	}
	c.mu.Lock()
	c.pods[p.Name] = p
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		p.supervise(c.ctx)
	}()
	return p, nil
}

// volumes lays out the pod's volumes as directories: ConfigMaps and
// Secrets as a file per key, emptyDirs empty and writable by anyone, as
// Kubernetes makes them.
func (c *Cluster) volumes(p *Pod) (map[string]string, error) {
	out := map[string]string{}
	// A StatefulSet pod's claims: a directory per claim and pod, which
	// outlives the pod, as a persistent volume does.
	if s, ok := p.w.Object.(*appsv1.StatefulSet); ok {
		for _, claim := range s.Spec.VolumeClaimTemplates {
			dir := filepath.Join(c.dir, "volumes", claim.Name+"-"+p.Name)
			if err := os.MkdirAll(dir, 0o777); err != nil {
				return nil, err
			}
			// Writable by the pod's user, as a provisioned volume with the
			// pod's fsGroup is.
			if err := os.Chmod(dir, 0o777); err != nil {
				return nil, err
			}
			out[claim.Name] = dir
		}
	}
	for _, v := range p.spec.Volumes {
		dir := filepath.Join(p.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		var files map[string][]byte
		var items []corev1.KeyToPath
		switch {
		case v.EmptyDir != nil:
			if err := os.Chmod(dir, 0o777); err != nil {
				return nil, err
			}
		case v.ConfigMap != nil:
			cm := c.objs.ConfigMap(v.ConfigMap.Name)
			if cm == nil {
				if v.ConfigMap.Optional != nil && *v.ConfigMap.Optional {
					break
				}
				return nil, fmt.Errorf("pod %s: volume %s: no ConfigMap %s", p.Name, v.Name, v.ConfigMap.Name)
			}
			files, items = map[string][]byte{}, v.ConfigMap.Items
			for k, s := range cm.Data {
				files[k] = []byte(s)
			}
			for k, b := range cm.BinaryData {
				files[k] = b
			}
		case v.Secret != nil:
			sec := c.objs.Secret(v.Secret.SecretName)
			if sec == nil {
				if v.Secret.Optional != nil && *v.Secret.Optional {
					break
				}
				return nil, fmt.Errorf("pod %s: volume %s: no Secret %s", p.Name, v.Name, v.Secret.SecretName)
			}
			files, items = secretData(sec), v.Secret.Items
		default:
			return nil, fmt.Errorf("pod %s: volume %s: only emptyDir, configMap and secret volumes are supported", p.Name, v.Name)
		}
		if err := writeKeys(dir, files, items); err != nil {
			return nil, fmt.Errorf("pod %s: volume %s: %w", p.Name, v.Name, err)
		}
		out[v.Name] = dir
	}
	return out, nil
}

func writeKeys(dir string, files map[string][]byte, items []corev1.KeyToPath) error {
	if len(items) == 0 {
		for k := range files {
			items = append(items, corev1.KeyToPath{Key: k, Path: k})
		}
	}
	for _, it := range items {
		data, ok := files[it.Key]
		if !ok {
			return fmt.Errorf("no key %q", it.Key)
		}
		dst := filepath.Join(dir, filepath.Clean("/"+it.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func secretData(s *corev1.Secret) map[string][]byte {
	m := map[string][]byte{}
	for k, v := range s.Data {
		m[k] = v
	}
	for k, v := range s.StringData {
		m[k] = []byte(v)
	}
	return m
}

// container resolves a container's command line, environment, user and
// mounts against its image.
func (c *Cluster) container(p *Pod, cs corev1.Container, volumes map[string]string, hosts string) (*container, error) {
	img, ok := c.cfg.Images[imageName(cs.Image)]
	if !ok {
		return nil, fmt.Errorf("pod %s: container %s: no local image for %q", p.Name, cs.Name, cs.Image)
	}
	env, err := c.objs.Env(p.w, cs.Name, p.Name)
	if err != nil {
		return nil, fmt.Errorf("pod %s: %w", p.Name, err)
	}
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	argv := append([]string(nil), img.Entrypoint...)
	args := img.Cmd
	if len(cs.Command) > 0 {
		argv, args = expandAll(cs.Command, vars), nil
	}
	if len(cs.Args) > 0 {
		args = expandAll(cs.Args, vars)
	}
	argv = append(argv, args...)
	mounts := []mount{{Source: hosts, Target: "/etc/hosts", ReadOnly: true}}
	for _, vm := range cs.VolumeMounts {
		src, ok := volumes[vm.Name]
		if !ok {
			return nil, fmt.Errorf("pod %s: container %s: no volume %s", p.Name, cs.Name, vm.Name)
		}
		if vm.SubPath != "" {
			src = filepath.Join(src, filepath.Clean("/"+vm.SubPath))
		}
		mounts = append(mounts, mount{Source: src, Target: vm.MountPath, ReadOnly: vm.ReadOnly})
	}
	uid, gid, roRoot, err := identity(p.spec.SecurityContext, cs.SecurityContext, img)
	if err != nil {
		return nil, fmt.Errorf("pod %s: container %s: %w", p.Name, cs.Name, err)
	}
	logf, err := os.Create(filepath.Join(p.dir, cs.Name+".log"))
	if err != nil {
		return nil, err
	}
	return &container{pod: p, spec: cs, log: logf, init: initSpec{
		Image: img.Root, Dir: filepath.Join(p.dir, "ctr-"+cs.Name), ReadOnlyRoot: roRoot,
		Mounts: mounts, UID: uid, GID: gid, Argv: argv,
		Env: append(append([]string{"HOSTNAME=" + p.Name}, img.Env...), env...), WorkDir: cmp.Or(cs.WorkingDir, img.WorkDir), Hostname: p.Name,
	}}, nil
}

// identity is the user a container runs as. A container that must run as
// non-root and whose image or spec would run it as root is refused, as the
// kubelet refuses it.
func identity(pod *corev1.PodSecurityContext, ctr *corev1.SecurityContext, img Image) (uid, gid int, roRoot bool, err error) {
	uid, gid = img.UID, img.GID
	nonRoot := false
	if pod != nil {
		if pod.RunAsUser != nil {
			uid = int(*pod.RunAsUser)
		}
		if pod.RunAsGroup != nil {
			gid = int(*pod.RunAsGroup)
		}
		nonRoot = pod.RunAsNonRoot != nil && *pod.RunAsNonRoot
	}
	if ctr != nil {
		if ctr.RunAsUser != nil {
			uid = int(*ctr.RunAsUser)
		}
		if ctr.RunAsGroup != nil {
			gid = int(*ctr.RunAsGroup)
		}
		if ctr.RunAsNonRoot != nil {
			nonRoot = *ctr.RunAsNonRoot
		}
		roRoot = ctr.ReadOnlyRootFilesystem != nil && *ctr.ReadOnlyRootFilesystem
	}
	if nonRoot && uid == 0 {
		return 0, 0, false, errors.New("runAsNonRoot, but it would run as root")
	}
	return uid, gid, roRoot, nil
}

func expandAll(in []string, vars map[string]string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = render.Expand(s, vars)
	}
	return out
}

// imageName strips an image reference's digest and tag:
// "ghcr.io/a2amesh/a2amesh:0.1.0" is "ghcr.io/a2amesh/a2amesh".
func imageName(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		ref = ref[:i]
	}
	return ref
}
