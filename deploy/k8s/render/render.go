// Package render builds the kustomize overlays of deploy/k8s as
// `kubectl kustomize` does (krusty, the library behind it) and decodes
// every object strictly into its k8s.io/api type: a field the type does
// not have, a field given twice or a kind outside the ones the manifests
// use is an error, not something silently dropped. The manifests' tests
// check policies on the typed objects; a test that runs the rendered
// workloads as processes reads their arguments and environment from here
// (Objects.Env resolves a container's environment as the kubelet would).
package render

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Dir is the deploy/k8s directory, the root of the manifests (base/,
// overlays/) and of this module.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("render: no caller information to find deploy/k8s by")
	}
	return filepath.Dir(filepath.Dir(file))
}

// Overlays are the overlays under Dir()/overlays, by name.
func Overlays() []string { return []string{"dev", "prod"} }

// Overlay builds the overlay of that name from the files on disk.
func Overlay(name string) (*Objects, error) {
	return Build(filesys.MakeFsOnDisk(), filepath.Join(Dir(), "overlays", name))
}

// Objects is what a build renders, decoded.
type Objects struct {
	// YAML is the output as `kubectl kustomize` prints it.
	YAML []byte
	// All is every object, in the output's order.
	All []k8sruntime.Object

	Namespaces      []*corev1.Namespace
	ServiceAccounts []*corev1.ServiceAccount
	ConfigMaps      []*corev1.ConfigMap
	Secrets         []*corev1.Secret
	Services        []*corev1.Service
	Deployments     []*appsv1.Deployment
	StatefulSets    []*appsv1.StatefulSet
	PDBs            []*policyv1.PodDisruptionBudget
	HPAs            []*autoscalingv2.HorizontalPodAutoscaler
	NetworkPolicies []*networkingv1.NetworkPolicy
	Ingresses       []*networkingv1.Ingress
}

// Build runs kustomize on the kustomization in dir of fsys, as
// `kubectl kustomize dir` does, and decodes the output.
func Build(fsys filesys.FileSystem, dir string) (*Objects, error) {
	opts := krusty.MakeDefaultOptions()
	// As the kustomize in kubectl orders the output: a kustomization's
	// sortOptions, else the legacy order (Namespaces first, ...).
	opts.Reorder = krusty.ReorderOptionUnspecified
	k := krusty.MakeKustomizer(opts)
	m, err := k.Run(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("render: kustomize build %s: %w", dir, err)
	}
	y, err := m.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("render: %s: %w", dir, err)
	}
	o := &Objects{YAML: y}
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	for _, r := range m.Resources() {
		doc, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("render: %s: %s: %w", dir, r.CurId(), err)
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("render: %s: %s: %w", dir, r.CurId(), err)
		}
		if err := o.add(obj); err != nil {
			return nil, fmt.Errorf("render: %s: %w", dir, err)
		}
	}
	return o, nil
}

// decoder decodes YAML strictly into the types of the kinds the
// manifests use; any other kind is an error.
func decoder() (k8sruntime.Decoder, error) {
	scheme := k8sruntime.NewScheme()
	for _, add := range []func(*k8sruntime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme,
		policyv1.AddToScheme, autoscalingv2.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("render: %w", err)
		}
	}
	return kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme, scheme,
		kjson.SerializerOptions{Yaml: true, Strict: true}), nil
}

func (o *Objects) add(obj k8sruntime.Object) error {
	switch v := obj.(type) {
	case *corev1.Namespace:
		o.Namespaces = append(o.Namespaces, v)
	case *corev1.ServiceAccount:
		o.ServiceAccounts = append(o.ServiceAccounts, v)
	case *corev1.ConfigMap:
		o.ConfigMaps = append(o.ConfigMaps, v)
	case *corev1.Secret:
		o.Secrets = append(o.Secrets, v)
	case *corev1.Service:
		o.Services = append(o.Services, v)
	case *appsv1.Deployment:
		o.Deployments = append(o.Deployments, v)
	case *appsv1.StatefulSet:
		o.StatefulSets = append(o.StatefulSets, v)
	case *policyv1.PodDisruptionBudget:
		o.PDBs = append(o.PDBs, v)
	case *autoscalingv2.HorizontalPodAutoscaler:
		o.HPAs = append(o.HPAs, v)
	case *networkingv1.NetworkPolicy:
		o.NetworkPolicies = append(o.NetworkPolicies, v)
	case *networkingv1.Ingress:
		o.Ingresses = append(o.Ingresses, v)
	default:
		return fmt.Errorf("%T: a kind the manifests do not use", obj)
	}
	o.All = append(o.All, obj)
	return nil
}

// Workload is a Deployment or a StatefulSet: the pods it runs.
type Workload struct {
	Kind, Name, Namespace string
	Selector              *metav1.LabelSelector
	Template              *corev1.PodTemplateSpec
	// Replicas is how many pods it runs at least: its
	// HorizontalPodAutoscaler's minReplicas when one scales it, else its
	// replicas (1 when unset, as the API server defaults it).
	Replicas int32
	// Object is the Deployment or the StatefulSet itself.
	Object k8sruntime.Object
}

// Workloads returns the Deployments and the StatefulSets, in that order.
func (o *Objects) Workloads() []Workload {
	var out []Workload
	for _, d := range o.Deployments {
		out = append(out, Workload{Kind: "Deployment", Name: d.Name, Namespace: d.Namespace, Selector: d.Spec.Selector,
			Template: &d.Spec.Template, Replicas: o.replicas("Deployment", d.Name, d.Spec.Replicas), Object: d})
	}
	for _, s := range o.StatefulSets {
		out = append(out, Workload{Kind: "StatefulSet", Name: s.Name, Namespace: s.Namespace, Selector: s.Spec.Selector,
			Template: &s.Spec.Template, Replicas: o.replicas("StatefulSet", s.Name, s.Spec.Replicas), Object: s})
	}
	return out
}

// Workload returns the workload of that kind and name.
func (o *Objects) Workload(kind, name string) (Workload, bool) {
	ws := o.Workloads()
	i := slices.IndexFunc(ws, func(w Workload) bool { return w.Kind == kind && w.Name == name })
	if i < 0 {
		return Workload{}, false
	}
	return ws[i], true
}

func (o *Objects) replicas(kind, name string, spec *int32) int32 {
	for _, h := range o.HPAs {
		if h.Spec.ScaleTargetRef.Kind == kind && h.Spec.ScaleTargetRef.Name == name && h.Spec.MinReplicas != nil {
			return *h.Spec.MinReplicas
		}
	}
	if spec == nil {
		return 1
	}
	return *spec
}

// ConfigMap returns the ConfigMap of that name (its name as rendered,
// with the generator's hash), or nil.
func (o *Objects) ConfigMap(name string) *corev1.ConfigMap {
	return find(o.ConfigMaps, func(c *corev1.ConfigMap) bool { return c.Name == name })
}

// Secret returns the Secret of that name, or nil.
func (o *Objects) Secret(name string) *corev1.Secret {
	return find(o.Secrets, func(s *corev1.Secret) bool { return s.Name == name })
}

// Service returns the Service of that name, or nil.
func (o *Objects) Service(name string) *corev1.Service {
	return find(o.Services, func(s *corev1.Service) bool { return s.Name == name })
}

func find[T any](xs []T, match func(T) bool) T {
	var zero T
	if i := slices.IndexFunc(xs, match); i >= 0 {
		return xs[i]
	}
	return zero
}
