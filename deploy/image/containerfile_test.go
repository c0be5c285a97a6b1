package image

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestMultistageMatches: the final stage of Containerfile.multistage is
// Containerfile, its COPYs taking from the builder's /stage what
// Containerfile takes from the context `make image-context` stages, so
// the two build the same image. (TestImage, build tag image, proves
// Containerfile's; building the multistage one needs a registry.)
func TestMultistageMatches(t *testing.T) {
	want := instructions(t, "Containerfile")
	multi := instructions(t, "Containerfile.multistage")
	i := slices.Index(multi, "FROM scratch")
	if i < 0 || slices.Contains(multi[i+1:], "FROM scratch") {
		t.Fatalf("Containerfile.multistage has %d FROM scratch stages, want one, the last", strings.Count(strings.Join(multi, "\n"), "FROM scratch"))
	}
	got := multi[i:]
	for k, line := range got {
		got[k] = strings.ReplaceAll(strings.ReplaceAll(line, "--from=build ", ""), "/stage/", "")
	}
	if !slices.Equal(got, want) {
		t.Errorf("Containerfile.multistage's final stage, its COPYs from the context:\n%s\n\nContainerfile:\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// instructions returns the instructions of a Containerfile, one a line:
// continuation lines joined, comments and blank lines dropped, runs of
// blanks made one space.
func instructions(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur strings.Builder
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		more := strings.HasSuffix(line, `\`)
		cur.WriteString(strings.TrimSuffix(line, `\`) + " ")
		if !more {
			out = append(out, strings.Join(strings.Fields(cur.String()), " "))
			cur.Reset()
		}
	}
	return out
}
