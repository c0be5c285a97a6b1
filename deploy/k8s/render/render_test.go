package render

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func TestExpand(t *testing.T) {
	vars := map[string]string{"A": "1", "MIB": "256", "EMPTY": ""}
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$(A)", "1"},
		{"$(MIB)000000", "256000000"},
		{"x$(A)y$(A)z", "x1y1z"},
		{"$(EMPTY)", ""},
		{"$(UNSET)", "$(UNSET)"},
		{"$$(A)", "$(A)"},
		{"$$", "$"},
		{"$", "$"},
		{"a$b", "a$b"},
		{"$(A", "$(A"},
		{"$()", "$()"},
	} {
		if got := Expand(tc.in, vars); got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestResourceField(t *testing.T) {
	spec := &corev1.PodSpec{Containers: []corev1.Container{
		{Name: "a", Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi"), corev1.ResourceCPU: resource.MustParse("1500m")},
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100M")},
		}},
		{Name: "b"},
	}}
	for _, tc := range []struct {
		self, container, res, divisor, want, err string
	}{
		{self: "a", res: "limits.memory", want: "268435456"},
		{self: "a", res: "limits.memory", divisor: "1Mi", want: "256"},
		{self: "a", res: "limits.memory", divisor: "1Gi", want: "1"}, // rounded up
		{self: "a", res: "requests.memory", divisor: "1Mi", want: "96"},
		{self: "a", res: "limits.cpu", want: "2"},
		{self: "a", res: "limits.cpu", divisor: "1m", want: "1500"},
		{self: "b", container: "a", res: "limits.memory", divisor: "1Mi", want: "256"},
		{self: "b", res: "limits.memory", err: "sets no limits.memory"},
		{self: "a", container: "c", res: "limits.memory", err: `no container "c"`},
		{self: "a", res: "memory", err: "want limits.NAME"},
	} {
		ref := &corev1.ResourceFieldSelector{ContainerName: tc.container, Resource: tc.res}
		if tc.divisor != "" {
			ref.Divisor = resource.MustParse(tc.divisor)
		}
		got, err := ResourceField(spec, tc.self, ref)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%+v: error %v, want one saying %q", tc, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%+v: %q, %v; want %q", tc, got, err, tc.want)
		}
	}
}

// build writes files into an in-memory file system and builds dir.
func build(t *testing.T, files map[string]string) (*Objects, error) {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	for name, content := range files {
		if err := fsys.WriteFile(name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	return Build(fsys, "/k")
}

const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  selector:
    matchLabels: {app: d}
  template:
    metadata:
      labels: {app: d}
    spec:
      containers:
        - name: c
          image: i:1
          env:
            - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
            - {name: FROM_CM, valueFrom: {configMapKeyRef: {name: cm, key: k}}}
            - {name: FROM_SECRET, valueFrom: {secretKeyRef: {name: s, key: k}}}
            - {name: MISSING, valueFrom: {secretKeyRef: {name: none, key: k, optional: true}}}
            - {name: MIB, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
            - {name: GOMEMLIMIT, value: $(MIB)000000}
            - {name: POD, value: again-$(POD)}
          resources:
            limits: {memory: 64Mi}
`

// TestBuild: a kustomization's objects come back typed, with the
// generators' names, and a container's environment resolves as the
// kubelet would resolve it.
func TestBuild(t *testing.T) {
	o, err := build(t, map[string]string{
		"/k/kustomization.yaml": `namespace: ns
resources: [d.yaml]
configMapGenerator:
  - {name: cm, literals: [k=v]}
secretGenerator:
  - {name: s, literals: [k=secret]}
`,
		"/k/d.yaml": deployment,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Deployments) != 1 || len(o.ConfigMaps) != 1 || len(o.Secrets) != 1 || len(o.All) != 3 {
		t.Fatalf("got %d deployments, %d config maps, %d secrets, %d in all", len(o.Deployments), len(o.ConfigMaps), len(o.Secrets), len(o.All))
	}
	w, ok := o.Workload("Deployment", "d")
	if !ok || w.Replicas != 1 || w.Namespace != "ns" {
		t.Fatalf("workload %+v, %v", w, ok)
	}
	env, err := o.Env(w, "c", "d-1")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"POD=again-d-1", "NS=ns", "FROM_CM=v", "FROM_SECRET=secret", "MIB=64", "GOMEMLIMIT=64000000"}
	if !slices.Equal(env, want) {
		t.Errorf("env\n%q\nwant\n%q", env, want)
	}
	if _, err := o.Env(w, "nope", "d-1"); err == nil {
		t.Error("the environment of a container that is not there")
	}
}

// TestBuildStrict: what the API server would refuse or drop fails the
// build: a field the type lacks (or misspelt, or in the wrong case), a
// kind outside those the manifests use, a required key that is missing.
func TestBuildStrict(t *testing.T) {
	for name, tc := range map[string]struct {
		doc, err string
	}{
		"unknown field": {strings.Replace(deployment, "image: i:1", "image: i:1\n          imagePullPolcy: Always", 1), `unknown field "spec.template.spec.containers[0].imagePullPolcy"`},
		"wrong case":    {strings.Replace(deployment, "image: i:1", "Image: i:1", 1), `unknown field "spec.template.spec.containers[0].Image"`},
		"duplicate":     {strings.Replace(deployment, "image: i:1", "image: i:1\n          image: i:2", 1), `mapping key "image" already defined`},
		"unknown kind":  {"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n", `no kind "Job" is registered for version "batch/v1"`},
		"wrong version": {strings.Replace(deployment, "apps/v1", "apps/v1beta2", 1), `no kind "Deployment" is registered for version "apps/v1beta2"`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := build(t, map[string]string{"/k/kustomization.yaml": "resources: [d.yaml]\n", "/k/d.yaml": tc.doc})
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want one naming %q", err, tc.err)
			}
		})
	}
	t.Run("missing key", func(t *testing.T) {
		o, err := build(t, map[string]string{"/k/kustomization.yaml": "resources: [d.yaml]\nconfigMapGenerator:\n  - {name: cm, literals: [other=v]}\nsecretGenerator:\n  - {name: s, literals: [k=v]}\n", "/k/d.yaml": deployment})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := o.Workload("Deployment", "d")
		if _, err := o.Env(w, "c", "d-1"); err == nil || !strings.Contains(err.Error(), "has no key k") {
			t.Fatalf("error %v, want the missing key named", err)
		}
	})
}
