package a2amesh_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/a2amesh/a2amesh"
)

// goBlock is a fenced Go block of a Markdown file.
var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestDocSnippetsCompile: every Go snippet in README.md and docs/ is a
// complete file (package clause and imports) that type-checks against
// this module, so what a reader copies works.
func TestDocSnippetsCompile(t *testing.T) {
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module snippets\n\ngo 1.26\n\nrequire github.com/a2amesh/a2amesh v0.0.0\n\nreplace github.com/a2amesh/a2amesh => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	err = fs.WalkDir(a2amesh.Docs, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(a2amesh.Docs, path)
		if err != nil {
			return err
		}
		for i, m := range goBlock.FindAllSubmatchIndex(b, -1) {
			src := b[m[2]:m[3]]
			line := 1 + bytes.Count(b[:m[2]], []byte("\n"))
			where := fmt.Sprintf("%s:%d", path, line)
			if !bytes.HasPrefix(src, []byte("package ")) {
				t.Errorf("%s: a Go snippet is a complete file, starting with its package clause", where)
				continue
			}
			sub := filepath.Join(dir, fmt.Sprintf("s%02d", n))
			n++
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return err
			}
			name := strings.NewReplacer("/", "_", ".md", "").Replace(path) + fmt.Sprintf("_%d.go", i)
			// A line directive makes errors point at the Markdown file.
			src = append([]byte(fmt.Sprintf("//line %s:%d\n", path, line)), src...)
			if err := os.WriteFile(filepath.Join(sub, name), src, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no Go snippets found; the README has some")
	}
	cmd := exec.Command("go", "vet", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the snippets do not compile: %v\n%s", err, out)
	}
	t.Logf("%d snippets compile", n)
}

var (
	// mdLink is a Markdown link's target.
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// mdCode is code, fenced or inline, where brackets are not links.
	mdCode = regexp.MustCompile("(?s)```.*?```|`[^`\n]*`")
)

// TestDocLinksStayInTheRepository: a link in README.md or docs/ is a web
// address or names a file of this repository that exists; nothing points
// outside the checkout.
func TestDocLinksStayInTheRepository(t *testing.T) {
	err := fs.WalkDir(a2amesh.Docs, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(a2amesh.Docs, path)
		if err != nil {
			return err
		}
		for _, m := range mdLink.FindAllSubmatch(mdCode.ReplaceAll(b, nil), -1) {
			target := string(m[1])
			if strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "#") {
				continue
			}
			file, _, _ := strings.Cut(target, "#")
			rel := filepath.Join(filepath.Dir(path), file)
			if strings.HasPrefix(rel, "..") || filepath.IsAbs(file) {
				t.Errorf("%s: link %q leaves the repository", path, target)
				continue
			}
			if _, err := os.Stat(rel); err != nil {
				t.Errorf("%s: link %q: %v", path, target, err)
			}
		}
		if bytes.Contains(b, []byte("../shared/")) {
			t.Errorf("%s names ../shared/, which is outside the repository", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
