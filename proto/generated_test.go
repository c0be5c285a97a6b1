// Package proto holds the A2A gRPC definition (a2a.proto) and, in a2apb,
// the Kitex code generated from it by `make proto`. It has no Go code of
// its own: this test only keeps the committed code in step with the
// definition and the pinned generator.
package proto

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/a2amesh/a2amesh"

// TestGeneratedUpToDate runs the kitex line of the Makefile's proto recipe,
// with the kitex go.mod pins, in a copy of the module's skeleton, and
// requires the result to equal the committed proto/a2apb byte for byte:
// an edit to a2a.proto, to the generated code or to the kitex version that
// is not followed by `make proto` fails here.
func TestGeneratedUpToDate(t *testing.T) {
	args := kitexArgs(t)

	// go test puts the go command that runs it first on PATH; -n prints
	// the pinned tool's binary (building it if need be) without running it.
	out, err := exec.Command("go", "tool", "-n", "kitex").Output()
	if err != nil {
		t.Fatalf("go tool -n kitex: %v%s", err, stderrOf(err))
	}
	kitex := strings.TrimSpace(string(out))

	// kitex derives the import path from -module and the go.mod it finds
	// upward from its working directory, so the copy gets one naming the
	// same module.
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+module+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "proto"), 0o755); err != nil {
		t.Fatal(err)
	}
	idl, err := os.ReadFile("a2a.proto")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proto", "a2a.proto"), idl, 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(kitex, args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kitex %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	want, err := readTree(filepath.Join(root, "proto", "a2apb"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readTree("a2apb")
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("proto/a2apb/%s is missing: run make proto", name)
		case !bytes.Equal(g, w):
			t.Errorf("proto/a2apb/%s is stale (%s): run make proto", name, firstDiff(g, w))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("proto/a2apb/%s is not generated any more: run make proto", name)
		}
	}
	if len(want) == 0 {
		t.Error("kitex generated nothing")
	}
}

// kitexArgs returns the arguments of the `$(GO) tool kitex` line in the
// Makefile's proto recipe, so that the test and `make proto` cannot drift.
func kitexArgs(t *testing.T) []string {
	t.Helper()
	mk, err := os.ReadFile(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for line := range strings.Lines(string(mk)) {
		line = strings.TrimRight(line, "\n")
		if !strings.HasPrefix(line, "\t") {
			in = strings.HasPrefix(line, "proto:")
			continue
		}
		if rest, ok := strings.CutPrefix(line, "\t$(GO) tool kitex "); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatal("the Makefile has no proto recipe with a `$(GO) tool kitex` line")
	return nil
}

// readTree returns the files under dir by slash-separated relative path.
func readTree(dir string) (map[string][]byte, error) {
	files := make(map[string][]byte)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	return files, nil
}

// firstDiff names the first line where the committed and the generated
// text part.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < len(g) && i < len(w); i++ {
		if !bytes.Equal(g[i], w[i]) {
			return fmt.Sprintf("line %d is %q, generated %q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, generated %d", len(g), len(w))
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}
