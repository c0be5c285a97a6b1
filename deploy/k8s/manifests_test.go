// The manifests' tests: every overlay builds, and decodes strictly into
// the k8s.io/api types (package render); kubectl's own kustomize renders
// it byte for byte as the library does; and every overlay keeps each
// policy below. Each policy is shown to bite: variants of an overlay
// that break it, built in memory on top of the real files, fail it.
package k8s_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh/deploy/k8s/internal/localcluster"
	"github.com/a2amesh/a2amesh/deploy/k8s/render"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// policy is a rule every overlay keeps.
type policy struct {
	name string
	// check returns the rule's violations in o, the overlay named
	// overlay (or a variant of it).
	check func(m *meta, overlay string, o *render.Objects) []string
	// breaks are variants of an overlay that violate the rule.
	breaks []variant
}

// variant is an overlay changed by a kustomization on top of it.
type variant struct {
	name, overlay string
	// kustomization is the variant's kustomization.yaml after its
	// resources: the overlay and the files.
	kustomization string
	// files are more resources, by file name.
	files map[string]string
}

// meta is what a check knows beside the manifests: the a2amesh
// command's flags, from the binary itself.
type meta struct {
	t     testing.TB
	flags *commandFlags
}

func TestOverlaysKeepThePolicies(t *testing.T) {
	flags := newCommandFlags()
	for _, overlay := range render.Overlays() {
		o, err := render.Overlay(overlay)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range policies() {
			t.Run(overlay+"/"+p.name, func(t *testing.T) {
				for _, v := range p.check(&meta{t, flags}, overlay, o) {
					t.Error(v)
				}
			})
		}
	}
}

func TestPoliciesBite(t *testing.T) {
	flags := newCommandFlags()
	fsys := manifestsInMemory(t)
	for _, p := range policies() {
		if len(p.breaks) == 0 {
			t.Errorf("policy %q has no variant that breaks it", p.name)
		}
		for _, v := range p.breaks {
			t.Run(p.name+"/"+v.name, func(t *testing.T) {
				o, err := buildVariant(fsys, v)
				if err != nil {
					t.Fatal(err)
				}
				got := p.check(&meta{t, flags}, v.overlay, o)
				if len(got) == 0 {
					t.Fatalf("the variant keeps the policy")
				}
				t.Logf("rejected: %s", strings.Join(got, "; "))
			})
		}
	}
}

// TestKubectlRendersTheSame: `kubectl kustomize` (the kustomize built into
// kubectl) renders every overlay byte for byte as the library the tests
// use does, so what the tests check is what kubectl applies.
func TestKubectlRendersTheSame(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		if strings.Contains(os.Getenv("A2AMESH_ALLOW_SKIP"), "kubectl") {
			t.Skip("no kubectl on PATH, and A2AMESH_ALLOW_SKIP names kubectl")
		}
		t.Fatalf("no kubectl on PATH (install it, or set A2AMESH_ALLOW_SKIP=kubectl to skip this): %v", err)
	}
	for _, overlay := range render.Overlays() {
		o, err := render.Overlay(overlay)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(render.Dir(), "overlays", overlay)
		cmd := exec.Command(kubectl, "kustomize", dir)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl kustomize %s: %v\n%s", dir, err, stderr.String())
		}
		if string(out) != string(o.YAML) {
			t.Errorf("kubectl kustomize %s differs from the library's build from line %d", dir, firstDiffLine(string(out), string(o.YAML)))
		}
	}
}

func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// manifestsInMemory copies base/ and overlays/ into an in-memory file
// system at /k8s, where variants are built beside them.
func manifestsInMemory(t testing.TB) filesys.FileSystem {
	t.Helper()
	fsys := filesys.MakeFsInMemory()
	for _, top := range []string{"base", "overlays"} {
		root := filepath.Join(render.Dir(), top)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(render.Dir(), path)
			if err != nil {
				return err
			}
			return fsys.WriteFile(filepath.Join("/k8s", rel), b)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return fsys
}

// nonName is what a variant's directory name leaves out of its name.
var nonName = regexp.MustCompile(`[^a-z0-9]+`)

// buildVariant builds v in fsys (from manifestsInMemory); each variant has
// a directory of its own.
func buildVariant(fsys filesys.FileSystem, v variant) (*render.Objects, error) {
	dir := filepath.Join("/k8s/variants", strings.Trim(nonName.ReplaceAllString(strings.ToLower(v.overlay+"-"+v.name), "-"), "-"))
	k := "resources:\n  - ../../overlays/" + v.overlay + "\n"
	for _, name := range slices.Sorted(maps.Keys(v.files)) {
		k += "  - " + name + "\n"
		if err := fsys.WriteFile(filepath.Join(dir, name), []byte(v.files[name])); err != nil {
			return nil, err
		}
	}
	if err := fsys.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k+v.kustomization)); err != nil {
		return nil, err
	}
	o, err := render.Build(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("variant %s of %s: %w", v.name, v.overlay, err)
	}
	return o, nil
}

// commandFlags are the flags of the a2amesh command's subcommands, as
// `a2amesh CMD -h` prints them, from a binary built from this checkout.
type commandFlags struct {
	bin   string
	cache map[string]map[string]string
}

func newCommandFlags() *commandFlags {
	return &commandFlags{bin: a2ameshBin, cache: map[string]map[string]string{}}
}

// a2ameshBin is the a2amesh command built from this checkout, which
// TestMain builds once for the checks that ask it its flags.
var a2ameshBin string

func TestMain(m *testing.M) {
	// The rollout test's pods are this binary, re-executed as their
	// containers' runtime.
	localcluster.MaybeInit()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "a2amesh-k8s-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	a2ameshBin = filepath.Join(dir, "a2amesh")
	cmd := exec.Command("go", "build", "-o", a2ameshBin, "./cmd/a2amesh")
	cmd.Dir = filepath.Join(render.Dir(), "..", "..")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build the a2amesh command: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// of returns the flags of `a2amesh args... -h` by name, each with its
// default ("" when it has none).
func (c *commandFlags) of(args ...string) (map[string]string, error) {
	key := strings.Join(args, " ")
	if f, ok := c.cache[key]; ok {
		return f, nil
	}
	out, err := exec.Command(c.bin, append(slices.Clone(args), "-h")...).CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, err
	}
	flags := parseFlagUsage(string(out))
	if len(flags) == 0 {
		return nil, fmt.Errorf("a2amesh %s -h listed no flags:\n%s", key, out)
	}
	c.cache[key] = flags
	return flags, nil
}

// parseFlagUsage reads the flag package's usage: "  -name type" lines,
// each followed by its usage, which ends in (default "x") or (default x)
// when the default is not the zero value.
func parseFlagUsage(out string) map[string]string {
	flags := map[string]string{}
	name := ""
	for line := range strings.SplitSeq(out, "\n") {
		switch {
		case strings.HasPrefix(line, "  -"):
			name = strings.Fields(strings.TrimPrefix(line, "  -"))[0]
			flags[name] = ""
		case name != "" && strings.HasPrefix(line, "    \t"):
			if i := strings.LastIndex(line, "(default "); i >= 0 {
				flags[name] = strings.Trim(strings.TrimSuffix(line[i+len("(default "):], ")"), `"`)
			}
		}
	}
	return flags
}

func TestParseFlagUsage(t *testing.T) {
	got := parseFlagUsage("Usage of supervisor:\n  -addr string\n    \taddress to listen on (env SUPERVISOR_ADDR) (default \"127.0.0.1:9107\")\n" +
		"  -debug-addr string\n    \taddress for /debug/pprof/ (empty: off) (env SUPERVISOR_DEBUG_ADDR)\n" +
		"  -max-runs int\n    \tmost runs (env A2AMESH_MAX_RUNS) (default 64)\n  -v\tverbose\n")
	want := map[string]string{"addr": "127.0.0.1:9107", "debug-addr": "", "max-runs": "64", "v": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
