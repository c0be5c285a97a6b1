package localcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
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
	spec corev1.PodSpec
	ns   string
	dir  string
	ctrs []*container

	mu          sync.Mutex
	ready       bool
	terminating bool
	gone        bool // its node is lost: no packet reaches it
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

// Ready reports whether the pod's readiness probes pass and it is not
// terminating: whether a Service sends it new connections.
func (p *Pod) Ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready && !p.terminating && !p.gone
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
func (c *Cluster) startPod(ctx context.Context, name, owner, node string, meta map[string]string, spec corev1.PodSpec, fixedIP netip.Addr) (*Pod, error) {
	if len(spec.InitContainers) > 0 {
		return nil, fmt.Errorf("pod %s: init containers are not supported", name)
	}
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.mu.Unlock()
	p := &Pod{Name: name, Labels: meta, Node: node, Owner: owner, c: c, spec: spec, done: make(chan struct{})}
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
			cm, ok := c.objs.configMap(v.ConfigMap.Name)
			if !ok {
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
			sec, ok := c.objs.secret(v.Secret.SecretName)
			if !ok {
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
	env, err := c.env(p, cs)
	if err != nil {
		return nil, fmt.Errorf("pod %s: container %s: %w", p.Name, cs.Name, err)
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
		Env: append(append([]string{"HOSTNAME=" + p.Name}, img.Env...), env...), WorkDir: cs.WorkingDir,
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

// env resolves a container's environment: values, references to the
// pod's fields and resources, ConfigMap and Secret keys, with $(VAR)
// expanded against the variables defined before.
func (c *Cluster) env(p *Pod, cs corev1.Container) ([]string, error) {
	vars := map[string]string{}
	var out []string
	set := func(k, v string) {
		vars[k] = v
		out = append(out, k+"="+v)
	}
	for _, ef := range cs.EnvFrom {
		var data map[string][]byte
		switch {
		case ef.ConfigMapRef != nil:
			cm, ok := c.objs.configMap(ef.ConfigMapRef.Name)
			if !ok {
				if ef.ConfigMapRef.Optional != nil && *ef.ConfigMapRef.Optional {
					continue
				}
				return nil, fmt.Errorf("envFrom: no ConfigMap %s", ef.ConfigMapRef.Name)
			}
			data = map[string][]byte{}
			for k, v := range cm.Data {
				data[k] = []byte(v)
			}
		case ef.SecretRef != nil:
			s, ok := c.objs.secret(ef.SecretRef.Name)
			if !ok {
				if ef.SecretRef.Optional != nil && *ef.SecretRef.Optional {
					continue
				}
				return nil, fmt.Errorf("envFrom: no Secret %s", ef.SecretRef.Name)
			}
			data = secretData(s)
		}
		for k, v := range data {
			set(ef.Prefix+k, string(v))
		}
	}
	for _, e := range cs.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, vars))
			continue
		}
		v, ok, err := c.valueFrom(p, cs, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	return out, nil
}

func (c *Cluster) valueFrom(p *Pod, cs corev1.Container, src *corev1.EnvVarSource) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		switch path := src.FieldRef.FieldPath; {
		case path == "metadata.name":
			return p.Name, true, nil
		case path == "metadata.namespace":
			return c.objs.Namespace, true, nil
		case path == "status.podIP":
			return p.IP.String(), true, nil
		case path == "spec.nodeName":
			return p.Node, true, nil
		case strings.HasPrefix(path, "metadata.labels['"):
			return p.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")], true, nil
		default:
			return "", false, fmt.Errorf("fieldRef %s is not supported", path)
		}
	case src.ResourceFieldRef != nil:
		return resourceValue(cs, src.ResourceFieldRef)
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		cm, ok := c.objs.configMap(ref.Name)
		var v string
		if ok {
			v, ok = cm.Data[ref.Key]
		}
		if !ok {
			if ref.Optional != nil && *ref.Optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("no key %s in ConfigMap %s", ref.Key, ref.Name)
		}
		return v, true, nil
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		s, ok := c.objs.secret(ref.Name)
		var v []byte
		if ok {
			v, ok = secretData(s)[ref.Key]
		}
		if !ok {
			if ref.Optional != nil && *ref.Optional {
				return "", false, nil
			}
			return "", false, fmt.Errorf("no key %s in Secret %s", ref.Key, ref.Name)
		}
		return string(v), true, nil
	}
	return "", false, errors.New("an empty valueFrom")
}

// resourceValue is the downward API's value of a container resource: the
// quantity divided by the divisor, rounded up, as the kubelet computes it.
func resourceValue(cs corev1.Container, ref *corev1.ResourceFieldSelector) (string, bool, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", false, fmt.Errorf("resource %q", ref.Resource)
	}
	list := cs.Resources.Limits
	if kind == "requests" {
		list = cs.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return "", false, fmt.Errorf("resourceFieldRef %s: the container sets no %s", ref.Resource, ref.Resource)
	}
	div := ref.Divisor
	if div.IsZero() {
		div = resource.MustParse("1")
	}
	if name == "cpu" {
		n := (q.MilliValue() + div.MilliValue() - 1) / div.MilliValue()
		return strconv.FormatInt(n, 10), true, nil
	}
	n := (q.Value() + div.Value() - 1) / div.Value()
	return strconv.FormatInt(n, 10), true, nil
}

func expandAll(in []string, vars map[string]string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

// expand replaces $(VAR) with a defined variable's value; $$ escapes a $
// and an undefined reference is left as written, as Kubernetes does.
func expand(s string, vars map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
			continue
		case '(':
			if end := strings.IndexByte(s[i:], ')'); end > 0 {
				name := s[i+2 : i+end]
				if v, ok := vars[name]; ok {
					b.WriteString(v)
					i += end
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (ctr *container) start() error {
	spec, err := json.Marshal(ctr.init)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command("ip", "netns", "exec", ctr.pod.ns, self)
	cmd.Env = []string{initEnv + "=" + string(spec)}
	cmd.Stdout, cmd.Stderr = ctr.log, ctr.log
	// The container's processes die with the test process, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pod %s: container %s: %w", ctr.pod.Name, ctr.spec.Name, err)
	}
	exited := make(chan struct{})
	ctr.mu.Lock()
	ctr.cmd, ctr.exited = cmd, exited
	ctr.mu.Unlock()
	go func() {
		_ = cmd.Wait() // the exit is the event; its status is in the log
		close(exited)
	}()
	return nil
}

// signal sends sig to the container's process.
func (ctr *container) signal(sig syscall.Signal) {
	ctr.mu.Lock()
	cmd := ctr.cmd
	ctr.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(sig) // fails only once it has exited
	}
}

func (ctr *container) exitedCh() chan struct{} {
	ctr.mu.Lock()
	defer ctr.mu.Unlock()
	return ctr.exited
}

// supervise is the pod's kubelet loop: it probes readiness and liveness,
// restarts a container that exits or fails its liveness probe (unless the
// pod is terminating), and ends when the pod's containers are gone.
func (p *Pod) supervise(ctx context.Context) {
	defer close(p.done)
	probeCtx, stopProbing := context.WithCancel(ctx)
	probed := make(chan struct{})
	go func() {
		defer close(probed)
		p.probeReadiness(probeCtx)
	}()
	var wg sync.WaitGroup
	for _, ctr := range p.ctrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctr.run(ctx)
		}()
	}
	wg.Wait()
	stopProbing()
	<-probed
	p.mu.Lock()
	p.ready = false
	p.mu.Unlock()
}

func (ctr *container) run(ctx context.Context) {
	liveFails := 0
	var tick <-chan time.Time
	probe := ctr.spec.LivenessProbe
	if probe != nil {
		t := time.NewTicker(period(probe))
		defer t.Stop()
		tick = t.C
	}
	started := time.Now()
	for {
		select {
		case <-ctr.exitedCh():
			ctr.mu.Lock()
			stopping := ctr.stopping
			ctr.mu.Unlock()
			if stopping || ctx.Err() != nil {
				return
			}
			fmt.Fprintf(ctr.log, "localcluster: container exited; restarting\n")
			if err := ctr.restart(ctx); err != nil {
				fmt.Fprintf(ctr.log, "localcluster: restart: %v\n", err)
				return
			}
			liveFails, started = 0, time.Now()
		case <-tick:
			if time.Since(started) < time.Duration(probe.InitialDelaySeconds)*time.Second {
				continue
			}
			if ctr.pod.check(ctx, probe) == nil {
				liveFails = 0
				continue
			}
			liveFails++
			if liveFails >= threshold(probe.FailureThreshold, 3) {
				fmt.Fprintf(ctr.log, "localcluster: liveness probe failed %d times; killing\n", liveFails)
				ctr.signal(syscall.SIGKILL)
			}
		case <-ctx.Done():
			ctr.signal(syscall.SIGKILL)
			<-ctr.exitedCh()
			return
		}
	}
}

func (ctr *container) restart(ctx context.Context) error {
	ctr.mu.Lock()
	ctr.restarts++
	n := ctr.restarts
	ctr.mu.Unlock()
	// The kubelet's back-off starts at 10 s; a shorter one keeps a test
	// short while still not spinning.
	select {
	case <-time.After(time.Duration(min(n, 5)) * 200 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err()
	}
	return ctr.start()
}

func (p *Pod) probeReadiness(ctx context.Context) {
	var probes []*corev1.Probe
	for _, ctr := range p.ctrs {
		if ctr.spec.ReadinessProbe != nil {
			probes = append(probes, ctr.spec.ReadinessProbe)
		}
	}
	every := time.Second
	for _, pr := range probes {
		every = min(every, period(pr))
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		ok := p.running()
		for _, pr := range probes {
			ok = ok && p.check(ctx, pr) == nil
		}
		p.mu.Lock()
		p.ready = ok
		p.mu.Unlock()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// running reports whether every container's process is up.
func (p *Pod) running() bool {
	for _, ctr := range p.ctrs {
		select {
		case <-ctr.exitedCh():
			return false
		default:
		}
	}
	return true
}

func (p *Pod) isTerminating() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.terminating
}

// check runs one probe from the node, as the kubelet does: an HTTP GET
// that answers 200-399, or a TCP connection that opens.
func (p *Pod) check(ctx context.Context, pr *corev1.Probe) error {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(threshold(pr.TimeoutSeconds, 1))*time.Second)
	defer cancel()
	switch {
	case pr.HTTPGet != nil:
		port, err := p.port(pr.HTTPGet.Port.String())
		if err != nil {
			return err
		}
		u := fmt.Sprintf("http://%s%s", net.JoinHostPort(p.IP.String(), strconv.Itoa(port)), pr.HTTPGet.Path)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := p.c.probe.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode >= 400 {
			return fmt.Errorf("%s: %s", u, resp.Status)
		}
		return nil
	case pr.TCPSocket != nil:
		port, err := p.port(pr.TCPSocket.Port.String())
		if err != nil {
			return err
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(p.IP.String(), strconv.Itoa(port)))
		if err != nil {
			return err
		}
		return conn.Close()
	case pr.Exec != nil:
		return p.exec(ctx, pr.Exec.Command)
	}
	return errors.New("a probe with no handler")
}

// exec runs a command in the pod's first container, as `kubectl exec`
// and exec probes and hooks do: in the container's namespaces and root,
// as its user, with its environment.
func (p *Pod) exec(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return errors.New("exec: no command")
	}
	ctr := p.ctrs[0]
	ctr.mu.Lock()
	cmd := ctr.cmd
	ctr.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return errors.New("exec: the container is not running")
	}
	args := []string{"-t", strconv.Itoa(cmd.Process.Pid), "-m", "-n", "-r", "-w",
		"-S", strconv.Itoa(ctr.init.UID), "-G", strconv.Itoa(ctr.init.GID), "--"}
	ex := exec.CommandContext(ctx, "nsenter", append(args, argv...)...)
	ex.Env = ctr.init.Env
	out, err := ex.CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec %s: %w: %s", strings.Join(argv, " "), err, out)
	}
	return nil
}

// port resolves a port number or a container port's name.
func (p *Pod) port(s string) (int, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, nil
	}
	for _, ctr := range p.ctrs {
		for _, cp := range ctr.spec.Ports {
			if cp.Name == s {
				return int(cp.ContainerPort), nil
			}
		}
	}
	return 0, fmt.Errorf("pod %s has no port named %q", p.Name, s)
}

func period(pr *corev1.Probe) time.Duration {
	return time.Duration(threshold(pr.PeriodSeconds, 10)) * time.Second
}

func threshold(v, def int32) int {
	if v <= 0 {
		return int(def)
	}
	return int(v)
}

// terminate deletes the pod as the kubelet does: it leaves the Services'
// endpoints at once, its preStop hook runs, then SIGTERM, and SIGKILL once
// terminationGracePeriodSeconds (counted from the start) have passed. It
// returns when the containers are gone.
func (p *Pod) terminate(ctx context.Context) error {
	p.mu.Lock()
	p.terminating = true
	p.mu.Unlock()
	grace := 30 * time.Second
	if g := p.spec.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	deadline := time.Now().Add(grace)
	var wg sync.WaitGroup
	errs := make([]error, len(p.ctrs))
	for i, ctr := range p.ctrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ctr.stop(ctx, deadline)
		}()
	}
	wg.Wait()
	<-p.done
	return errors.Join(errs...)
}

func (ctr *container) stop(ctx context.Context, deadline time.Time) error {
	if h := ctr.spec.Lifecycle; h != nil && h.PreStop != nil {
		hctx, cancel := context.WithDeadline(ctx, deadline)
		err := ctr.preStop(hctx, h.PreStop)
		cancel()
		if err != nil {
			fmt.Fprintf(ctr.log, "localcluster: preStop: %v\n", err)
		}
	}
	ctr.mu.Lock()
	ctr.stopping = true
	ctr.mu.Unlock()
	ctr.signal(syscall.SIGTERM)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ctr.exitedCh():
		return ctr.exitErr()
	case <-t.C:
	case <-ctx.Done():
	}
	ctr.signal(syscall.SIGKILL)
	<-ctr.exitedCh()
	return fmt.Errorf("pod %s: container %s: killed after the grace period", ctr.pod.Name, ctr.spec.Name)
}

// exitErr is the container's exit status as an error, nil for 0.
func (ctr *container) exitErr() error {
	ctr.mu.Lock()
	defer ctr.mu.Unlock()
	if ctr.cmd.ProcessState == nil || ctr.cmd.ProcessState.Success() {
		return nil
	}
	return fmt.Errorf("pod %s: container %s: %s", ctr.pod.Name, ctr.spec.Name, ctr.cmd.ProcessState)
}

func (ctr *container) preStop(ctx context.Context, h *corev1.LifecycleHandler) error {
	switch {
	case h.Sleep != nil:
		select {
		case <-time.After(time.Duration(h.Sleep.Seconds) * time.Second):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	case h.HTTPGet != nil:
		return ctr.pod.check(ctx, &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: h.HTTPGet}})
	case h.Exec != nil:
		return ctr.pod.exec(ctx, h.Exec.Command)
	}
	return errors.New("a preStop hook with no handler")
}

// kill ends the pod's containers at once, as when its node is lost.
func (p *Pod) kill() {
	for _, ctr := range p.ctrs {
		ctr.mu.Lock()
		ctr.stopping = true
		ctr.mu.Unlock()
		ctr.signal(syscall.SIGKILL)
	}
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
