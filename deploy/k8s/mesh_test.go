package k8s_test

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/a2amesh/a2amesh/deploy/k8s/render"
	"github.com/a2amesh/a2amesh/gateway"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The image every agent and the gateway run.
const a2ameshImage = "ghcr.io/a2amesh/a2amesh"

// container is one container of a workload's pods.
type container struct {
	w render.Workload
	c *corev1.Container
}

func (c container) String() string {
	return fmt.Sprintf("%s %s, container %s", c.w.Kind, c.w.Name, c.c.Name)
}

// pod is the name the checks give a workload's pod (the downward API's
// metadata.name): its first StatefulSet pod's name.
func (c container) pod() string { return c.w.Name + "-0" }

// containers lists every container, init containers first, of every
// workload of o.
func containers(o *render.Objects) []container {
	var out []container
	for _, w := range o.Workloads() {
		spec := &w.Template.Spec
		for i := range spec.InitContainers {
			out = append(out, container{w, &spec.InitContainers[i]})
		}
		for i := range spec.Containers {
			out = append(out, container{w, &spec.Containers[i]})
		}
	}
	return out
}

// imageRef splits an image reference into its name, tag and digest.
func imageRef(ref string) (name, tag, digest string) {
	name, digest, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	return name, tag, digest
}

// isA2amesh reports whether c runs the a2amesh command.
func isA2amesh(c *corev1.Container) bool {
	name, _, _ := imageRef(c.Image)
	return name == a2ameshImage
}

// subcommand is what an a2amesh container runs: "serve NAME" or
// "gateway", as the args to ask its flags with.
func subcommand(c *corev1.Container) []string {
	if len(c.Args) > 1 && c.Args[0] == "serve" {
		return slices.Clone(c.Args[:2])
	}
	if len(c.Args) > 0 {
		return slices.Clone(c.Args[:1])
	}
	return nil
}

// envPrefix is the prefix of the variables an a2amesh subcommand's own
// flags read (cmd/a2amesh: the service's name, or GATEWAY).
func envPrefix(sub []string) string {
	return strings.ToUpper(strings.ReplaceAll(sub[len(sub)-1], "-", "_"))
}

// flagArg is a flag given on a command line.
type flagArg struct{ name, value string }

// parseArgs returns the flags of a command line: --name=value, or
// --name value when the next word is not a flag; positional words are
// left out.
func parseArgs(args []string) []flagArg {
	var out []flagArg
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name := strings.TrimLeft(a, "-")
		if n, v, ok := strings.Cut(name, "="); ok {
			out = append(out, flagArg{n, v})
			continue
		}
		if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			out = append(out, flagArg{name, args[i+1]})
			i++
			continue
		}
		out = append(out, flagArg{name: name})
	}
	return out
}

// flagValue returns the value of flag name on a command line.
func flagValue(args []string, name string) (string, bool) {
	for _, f := range parseArgs(args) {
		if f.name == name {
			return f.value, true
		}
	}
	return "", false
}

// operatorSecrets are the Secrets, and their keys, that the operator
// creates (docs/deploy.md#security) and the manifests only reference.
var operatorSecrets = map[string][]string{
	"a2amesh-mesh-key":    {"key"},
	"a2amesh-client-keys": {"client"},
	"a2amesh-signing-key": {"key.pem"},
	"a2amesh-nats":        {"password", "route-password"},
}

// withOperatorSecrets returns o with the operator's Secrets it lacks
// added, each value "secret-of-SECRET-KEY", for what resolves a pod's
// environment (a required Secret's key that is missing is an error).
func withOperatorSecrets(o *render.Objects) *render.Objects {
	with := *o
	with.Secrets = slices.Clone(o.Secrets)
	for _, name := range slices.Sorted(maps.Keys(operatorSecrets)) {
		if o.Secret(name) != nil {
			continue
		}
		data := map[string][]byte{}
		for _, k := range operatorSecrets[name] {
			data[k] = []byte("secret-of-" + name + "-" + k)
		}
		ns := ""
		if len(o.Namespaces) > 0 {
			ns = o.Namespaces[0].Name
		}
		with.Secrets = append(with.Secrets, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data})
	}
	return &with
}

// envMap resolves c's environment into a map, with the operator's
// Secrets in place.
func envMap(o *render.Objects, c container) (map[string]string, error) {
	env, err := withOperatorSecrets(o).Env(c.w, c.c.Name, c.pod())
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m, nil
}

// setting returns an a2amesh flag's value in c: from the command line,
// else from its environment variable (env, or the subcommand's prefix and
// the flag's name).
func setting(o *render.Objects, c container, flag, env string) (string, bool, error) {
	if v, ok := flagValue(c.c.Args, flag); ok {
		return v, true, nil
	}
	vars, err := envMap(o, c)
	if err != nil {
		return "", false, err
	}
	if env == "" {
		env = envPrefix(subcommand(c.c)) + "_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
	}
	v, ok := vars[env]
	return v, ok, nil
}

// publicURL is the URL an a2amesh container's card names.
func publicURL(o *render.Objects, c container) (string, error) {
	v, ok, err := setting(o, c, "public-url", "")
	if err != nil || !ok {
		return "", fmt.Errorf("%s: no --public-url (the card would name the listening address, which no caller uses): %v", c, err)
	}
	return v, nil
}

// mounted is where a file a container reads comes from: the volume
// mounted over its path, and the key of the ConfigMap or Secret that
// holds it ("" on another kind of volume).
type mounted struct {
	mount  corev1.VolumeMount
	volume corev1.Volume
	key    string
}

// mountedAt finds the volume that holds the file at path in c: the mount
// with the longest path over it, and the key the volume maps to the file.
func mountedAt(c container, path string) (mounted, error) {
	best, rel := -1, ""
	for i, m := range c.c.VolumeMounts {
		root := strings.TrimSuffix(m.MountPath, "/")
		var r string
		switch {
		case path == root && m.SubPath != "":
			r = m.SubPath // the mount is one file of the volume
		case strings.HasPrefix(path, root+"/"):
			r = strings.TrimPrefix(path, root+"/")
			if m.SubPath != "" {
				r = m.SubPath + "/" + r
			}
		default:
			continue
		}
		if best < 0 || len(root) > len(strings.TrimSuffix(c.c.VolumeMounts[best].MountPath, "/")) {
			best, rel = i, r
		}
	}
	if best < 0 {
		return mounted{}, fmt.Errorf("%s: nothing is mounted at %s", c, path)
	}
	m := mounted{mount: c.c.VolumeMounts[best]}
	i := slices.IndexFunc(c.w.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == m.mount.Name })
	if i < 0 {
		return m, fmt.Errorf("%s: %s is on volume %s, which the pod does not have", c, path, m.mount.Name)
	}
	m.volume = c.w.Template.Spec.Volumes[i]
	var items []corev1.KeyToPath
	switch {
	case m.volume.ConfigMap != nil:
		items = m.volume.ConfigMap.Items
	case m.volume.Secret != nil:
		items = m.volume.Secret.Items
	default:
		return m, nil
	}
	m.key = rel
	if len(items) > 0 {
		j := slices.IndexFunc(items, func(k corev1.KeyToPath) bool { return k.Path == rel })
		if j < 0 {
			return m, fmt.Errorf("%s: %s: volume %s maps no key to %s", c, path, m.mount.Name, rel)
		}
		m.key = items[j].Key
	}
	return m, nil
}

// file returns the content of the file at path in c, when a ConfigMap
// volume mounted there holds it.
func file(o *render.Objects, c container, path string) (string, error) {
	m, err := mountedAt(c, path)
	if err != nil {
		return "", err
	}
	src := m.volume.ConfigMap
	if src == nil {
		return "", fmt.Errorf("%s: %s is on volume %s, not a ConfigMap", c, path, m.mount.Name)
	}
	cm := o.ConfigMap(src.Name)
	if cm == nil {
		return "", fmt.Errorf("%s: %s: no ConfigMap %s", c, path, src.Name)
	}
	v, ok := cm.Data[m.key]
	if !ok {
		return "", fmt.Errorf("%s: %s: ConfigMap %s has no key %s", c, path, src.Name, m.key)
	}
	return v, nil
}

// topology is the gateway's topology, as the file its --topology names.
func topology(o *render.Objects, c container) (*gateway.Topology, error) {
	path, ok := flagValue(c.c.Args, "topology")
	if !ok {
		return nil, fmt.Errorf("%s: no --topology: the gateway would compose the built-in topology at 127.0.0.1", c)
	}
	b, err := file(o, c, path)
	if err != nil {
		return nil, err
	}
	t, err := gateway.ParseTopology([]byte(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", c, path, err)
	}
	return t, nil
}

// urlPattern finds URLs in configuration files.
var urlPattern = regexp.MustCompile(`\b(?:https?|nats)://[^\s"',\]]+`)

// calls lists the URLs a container connects to: those on its command line
// and in its environment, and in the files its command line names (the
// gateway's topology, NATS's configuration); a server's own URL
// (--public-url, --addr) is not a call.
func calls(o *render.Objects, c container) ([]*url.URL, error) {
	var raw []string
	var paths []string
	for _, f := range parseArgs(append(slices.Clone(c.c.Command), c.c.Args...)) {
		switch f.name {
		case "public-url", "addr":
		case "topology":
			t, err := topology(o, c)
			if err != nil {
				return nil, err
			}
			for _, u := range t.Agents {
				raw = append(raw, u)
			}
		case "config", "c":
			paths = append(paths, f.value)
		default:
			raw = append(raw, f.value)
		}
	}
	vars, err := envMap(o, c)
	if err != nil {
		return nil, err
	}
	for k, v := range vars {
		if !strings.HasSuffix(k, "_PUBLIC_URL") {
			raw = append(raw, v)
			// A list of URLs (NATS's routes).
			if strings.HasPrefix(v, "[") {
				raw = append(raw, urlPattern.FindAllString(v, -1)...)
			}
		}
	}
	for _, p := range paths {
		b, err := file(o, c, p)
		if err != nil {
			return nil, err
		}
		raw = append(raw, urlPattern.FindAllString(b, -1)...)
	}
	var out []*url.URL
	for _, r := range raw {
		if u, err := url.Parse(r); err == nil && u.Scheme != "" && u.Host != "" {
			out = append(out, u)
		}
	}
	return out, nil
}

// endpoint is a workload's container port.
type endpoint struct {
	workload string
	port     int32
}

func (e endpoint) String() string { return fmt.Sprintf("%s:%d", e.workload, e.port) }

// resolve returns the workloads and container port a URL reaches in o:
// its host is a Service, or a pod of a headless Service (pod.service).
// ok is false for a host that is no Service of o (outside the cluster);
// an error says the URL names a Service but reaches nothing.
func resolve(o *render.Objects, u *url.URL) (eps []endpoint, ok bool, err error) {
	host := strings.Split(u.Hostname(), ".")
	svc := o.Service(host[0])
	pod := ""
	if svc == nil && len(host) > 1 {
		if svc = o.Service(host[1]); svc != nil {
			pod = host[0]
		}
	}
	if svc == nil {
		return nil, false, nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443", "nats": "4222"}[u.Scheme]
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return fmt.Sprint(p.Port) == port })
	if i < 0 {
		return nil, true, fmt.Errorf("%s: Service %s has no port %s", u, svc.Name, port)
	}
	sp := svc.Spec.Ports[i]
	for _, w := range o.Workloads() {
		if !selects(svc.Spec.Selector, w.Template.Labels) {
			continue
		}
		if pod != "" && !runsPod(w, svc.Name, pod) {
			continue
		}
		cp, found := targetPort(w, sp)
		if !found {
			return nil, true, fmt.Errorf("%s: %s %s declares no port %s (Service %s's target)", u, w.Kind, w.Name, sp.TargetPort.String(), svc.Name)
		}
		eps = append(eps, endpoint{w.Name, cp})
	}
	if len(eps) == 0 {
		return nil, true, fmt.Errorf("%s: Service %s selects no pod%s", u, svc.Name, map[bool]string{true: " " + pod}[pod != ""])
	}
	return eps, true, nil
}

// runsPod reports whether w is a StatefulSet governed by service that runs
// the pod named pod.
func runsPod(w render.Workload, service, pod string) bool {
	ss, ok := w.Object.(*appsv1.StatefulSet)
	if !ok || ss.Spec.ServiceName != service {
		return false
	}
	for i := range w.Replicas {
		if pod == fmt.Sprintf("%s-%d", w.Name, i) {
			return true
		}
	}
	return false
}

// targetPort returns the container port of w that a Service port targets.
func targetPort(w render.Workload, sp corev1.ServicePort) (int32, bool) {
	tp := sp.TargetPort
	if tp.Type == intstr.Int && tp.IntVal == 0 {
		tp = intstr.FromInt32(sp.Port)
	}
	for _, c := range w.Template.Spec.Containers {
		for _, p := range c.Ports {
			if (tp.Type == intstr.String && p.Name == tp.StrVal) || (tp.Type == intstr.Int && p.ContainerPort == tp.IntVal) {
				return p.ContainerPort, true
			}
		}
	}
	return 0, false
}

// selects reports whether a Service's selector (labels that must all
// match; none selects nothing) selects pods labelled podLabels.
func selects(selector, podLabels map[string]string) bool {
	return len(selector) > 0 && labels.SelectorFromSet(selector).Matches(labels.Set(podLabels))
}

// matches reports whether a label selector selects a label set.
func matches(sel *metav1.LabelSelector, set map[string]string) (bool, error) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false, err
	}
	return s.Matches(labels.Set(set)), nil
}

// namespaceLabels are a namespace's labels as the API server keeps them:
// with kubernetes.io/metadata.name.
func namespaceLabels(o *render.Objects, name string) map[string]string {
	out := map[string]string{"kubernetes.io/metadata.name": name}
	for _, ns := range o.Namespaces {
		if ns.Name == name {
			for k, v := range ns.Labels {
				out[k] = v
			}
		}
	}
	return out
}

// admits reports whether the NetworkPolicies of o let workload src
// connect to port of workload dst, as the NetworkPolicy API defines it:
// a pod no Ingress policy selects takes anything; one that policies
// select takes what one of their rules allows.
func admits(o *render.Objects, src, dst render.Workload, port corev1.ContainerPort) (bool, error) {
	isolated := false
	for _, np := range o.NetworkPolicies {
		sel, err := ingressPolicyFor(np, dst)
		if err != nil || !sel {
			if err != nil {
				return false, err
			}
			continue
		}
		isolated = true
		for _, rule := range np.Spec.Ingress {
			from, err := ruleAdmitsPod(o, np, rule, src)
			if err != nil {
				return false, err
			}
			if from && ruleAdmitsPort(rule, port) {
				return true, nil
			}
		}
	}
	return !isolated, nil
}

// ingressPolicyFor reports whether np is an Ingress policy selecting w's pods.
func ingressPolicyFor(np *networkingv1.NetworkPolicy, w render.Workload) (bool, error) {
	if np.Namespace != w.Namespace {
		return false, nil
	}
	ingress := len(np.Spec.PolicyTypes) == 0 || slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress)
	if !ingress {
		return false, nil
	}
	return matches(&np.Spec.PodSelector, w.Template.Labels)
}

func ruleAdmitsPod(o *render.Objects, np *networkingv1.NetworkPolicy, rule networkingv1.NetworkPolicyIngressRule, src render.Workload) (bool, error) {
	if len(rule.From) == 0 {
		return true, nil
	}
	for _, peer := range rule.From {
		if peer.IPBlock != nil {
			// Whether an ipBlock covers pod addresses is up to the
			// network plugin: count it as admitting every pod.
			return true, nil
		}
		nsOK := src.Namespace == np.Namespace
		if peer.NamespaceSelector != nil {
			ok, err := matches(peer.NamespaceSelector, namespaceLabels(o, src.Namespace))
			if err != nil {
				return false, err
			}
			nsOK = ok
		}
		podOK := true
		if peer.PodSelector != nil {
			ok, err := matches(peer.PodSelector, src.Template.Labels)
			if err != nil {
				return false, err
			}
			podOK = ok
		}
		if nsOK && podOK {
			return true, nil
		}
	}
	return false, nil
}

func ruleAdmitsPort(rule networkingv1.NetworkPolicyIngressRule, port corev1.ContainerPort) bool {
	if len(rule.Ports) == 0 {
		return true
	}
	proto := port.Protocol
	if proto == "" {
		proto = corev1.ProtocolTCP
	}
	for _, p := range rule.Ports {
		pp := corev1.ProtocolTCP
		if p.Protocol != nil {
			pp = *p.Protocol
		}
		if pp != proto {
			continue
		}
		switch {
		case p.Port == nil:
			return true
		case p.Port.Type == intstr.String && p.Port.StrVal == port.Name:
			return true
		case p.Port.Type == intstr.Int && p.EndPort != nil && port.ContainerPort >= p.Port.IntVal && port.ContainerPort <= *p.EndPort:
			return true
		case p.Port.Type == intstr.Int && p.Port.IntVal == port.ContainerPort:
			return true
		}
	}
	return false
}

// admitsOutsiders reports whether a rule admits pods of other namespaces
// or addresses outside the cluster: any rule but one whose peers are all
// pods of the policy's own namespace.
func admitsOutsiders(np *networkingv1.NetworkPolicy, rule networkingv1.NetworkPolicyIngressRule) bool {
	if len(rule.From) == 0 {
		return true
	}
	own := map[string]string{"kubernetes.io/metadata.name": np.Namespace}
	for _, peer := range rule.From {
		if peer.IPBlock != nil {
			return true
		}
		if peer.NamespaceSelector != nil && !(len(peer.NamespaceSelector.MatchExpressions) == 0 &&
			fmt.Sprint(peer.NamespaceSelector.MatchLabels) == fmt.Sprint(own)) {
			return true
		}
	}
	return false
}
