package render

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Env returns the environment of the container named container in a pod
// named pod of w, as the kubelet sets it: "NAME=value" in the container's
// order, a literal value with its $(VAR) references expanded (Expand),
// a ConfigMap's or Secret's key from the rendered objects (an optional
// one that is missing leaves the variable unset), the downward API's
// metadata.name and metadata.namespace, and a resource field of a
// container as the kubelet computes it (the quantity over the divisor,
// rounded up). Anything it cannot resolve (a required key the output
// lacks, an unset limit, envFrom) is an error: the environment is never
// guessed.
func (o *Objects) Env(w Workload, container, pod string) ([]string, error) {
	spec := &w.Template.Spec
	c := Container(spec, container)
	if c == nil {
		return nil, fmt.Errorf("render: %s %s: no container %q", w.Kind, w.Name, container)
	}
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("render: %s %s: container %s: envFrom is not resolved here", w.Kind, w.Name, container)
	}
	vars := map[string]string{}
	var out []string
	for _, e := range c.Env {
		v, set, err := o.envValue(w, pod, c, e, vars)
		if err != nil {
			return nil, fmt.Errorf("render: %s %s: container %s: env %s: %w", w.Kind, w.Name, container, e.Name, err)
		}
		if !set {
			continue
		}
		vars[e.Name] = v
		// A name listed twice takes its last value, in its first place.
		kv := e.Name + "=" + v
		if i := slices.IndexFunc(out, func(s string) bool { return strings.HasPrefix(s, e.Name+"=") }); i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out, nil
}

// Container returns the container of spec named name, or nil.
func Container(spec *corev1.PodSpec, name string) *corev1.Container {
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == name })
	if i < 0 {
		return nil
	}
	return &spec.Containers[i]
}

func (o *Objects) envValue(w Workload, pod string, c *corev1.Container, e corev1.EnvVar, vars map[string]string) (string, bool, error) {
	from := e.ValueFrom
	switch {
	case from == nil:
		return Expand(e.Value, vars), true, nil
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		if cm := o.ConfigMap(ref.Name); cm != nil {
			if v, ok := cm.Data[ref.Key]; ok {
				return v, true, nil
			}
		}
		if ref.Optional != nil && *ref.Optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("ConfigMap %s has no key %s", ref.Name, ref.Key)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		if s := o.Secret(ref.Name); s != nil {
			if v, ok := s.Data[ref.Key]; ok {
				return string(v), true, nil
			}
			if v, ok := s.StringData[ref.Key]; ok {
				return v, true, nil
			}
		}
		if ref.Optional != nil && *ref.Optional {
			return "", false, nil
		}
		return "", false, fmt.Errorf("Secret %s has no key %s", ref.Name, ref.Key)
	case from.FieldRef != nil:
		switch from.FieldRef.FieldPath {
		case "metadata.name":
			return pod, true, nil
		case "metadata.namespace":
			return w.Namespace, true, nil
		}
		return "", false, fmt.Errorf("fieldRef %s is not resolved here", from.FieldRef.FieldPath)
	case from.ResourceFieldRef != nil:
		v, err := ResourceField(&w.Template.Spec, c.Name, from.ResourceFieldRef)
		return v, err == nil, err
	}
	return "", false, fmt.Errorf("a valueFrom of no known kind")
}

// ResourceField is the value the downward API gives ref in a pod of spec
// whose container self asks: the named container's (self's when ref names
// none) request or limit over ref's divisor (1 when unset), rounded up, as
// the kubelet computes it. An unset limit, which the kubelet would replace
// with the node's capacity, is an error.
func ResourceField(spec *corev1.PodSpec, self string, ref *corev1.ResourceFieldSelector) (string, error) {
	name := ref.ContainerName
	if name == "" {
		name = self
	}
	c := Container(spec, name)
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef: no container %q", name)
	}
	kind, res, ok := strings.Cut(ref.Resource, ".")
	var list corev1.ResourceList
	switch {
	case ok && kind == "limits":
		list = c.Resources.Limits
	case ok && kind == "requests":
		list = c.Resources.Requests
	default:
		return "", fmt.Errorf("resourceFieldRef: resource %q: want limits.NAME or requests.NAME", ref.Resource)
	}
	q, ok := list[corev1.ResourceName(res)]
	if !ok {
		return "", fmt.Errorf("resourceFieldRef: container %s sets no %s (the kubelet would give the node's capacity)", name, ref.Resource)
	}
	divisor := resource.MustParse("1")
	if !ref.Divisor.IsZero() {
		divisor = ref.Divisor
	}
	// CPU in millicores, so that a divisor of 1m counts them; the rest
	// in their units.
	n, d := q.Value(), divisor.Value()
	if res == string(corev1.ResourceCPU) {
		n, d = q.MilliValue(), divisor.MilliValue()
	}
	if d <= 0 {
		return "", fmt.Errorf("resourceFieldRef: divisor %s", divisor.String())
	}
	return fmt.Sprint((n + d - 1) / d), nil
}

// Expand expands $(NAME) references in s as the kubelet does in a
// container's environment, command and args: a NAME in vars becomes its
// value, any other reference stays as written, and $$ is a $.
func Expand(s string, vars map[string]string) string {
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
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			ref := s[i : i+3+end]
			if v, ok := vars[s[i+2:i+2+end]]; ok {
				b.WriteString(v)
			} else {
				b.WriteString(ref)
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}
