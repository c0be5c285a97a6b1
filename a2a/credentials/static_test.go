package credentials

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFromFileRotation: a secret file is read again when it changes, as
// a plain file rewritten in place and as a Kubernetes Secret volume
// rotates it (a symlink through ..data swapped to a new directory).
func TestFromFileRotation(t *testing.T) {
	value := func(t *testing.T, s Secret, want string) {
		t.Helper()
		if got, err := s.Value(); err != nil || got != want {
			t.Fatalf("Value() = %q, %v; want %q", got, err, want)
		}
	}
	t.Run("rewritten", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "token")
		writeFile(t, path, "first\n")
		s := FromFile(path)
		value(t, s, "first")
		writeFile(t, path, "second-longer\n")
		value(t, s, "second-longer")
		// Same size: the modification time tells.
		writeFile(t, path, "third-longer!\n")
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(path, later, later); err != nil {
			t.Fatal(err)
		}
		value(t, s, "third-longer!")
	})
	t.Run("Kubernetes Secret volume", func(t *testing.T) {
		dir := t.TempDir()
		for _, v := range []string{"v1", "v2"} {
			if err := os.Mkdir(filepath.Join(dir, v), 0o700); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, v, "token"), "token-"+v)
		}
		swap := func(to string) {
			tmp := filepath.Join(dir, "..data_tmp")
			if err := os.Symlink(to, tmp); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
				t.Fatal(err)
			}
		}
		swap("v1")
		if err := os.Symlink("..data/token", filepath.Join(dir, "token")); err != nil {
			t.Fatal(err)
		}
		s := FromFile(filepath.Join(dir, "token"))
		value(t, s, "token-v1")
		swap("v2")
		value(t, s, "token-v2")
	})
	t.Run("errors", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := FromFile(filepath.Join(dir, "missing")).Value(); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing")) {
			t.Errorf("missing file: %v", err)
		}
		writeFile(t, filepath.Join(dir, "empty"), " \n")
		if _, err := FromFile(filepath.Join(dir, "empty")).Value(); err == nil || !strings.Contains(err.Error(), "is empty") {
			t.Errorf("empty file: %v", err)
		}
	})
}

func TestStatic(t *testing.T) {
	t.Setenv("A2AMESH_TEST_KEY", "key-0123456789abcdef")
	t.Setenv("A2AMESH_TEST_BAD", "line\nbreak")
	for _, tc := range []struct {
		name         string
		s            *Static
		header, want string
		err          string
	}{
		{name: "bearer", s: Bearer(FromEnv("A2AMESH_TEST_KEY")), header: "Authorization", want: "Bearer key-0123456789abcdef"},
		{name: "API key", s: APIKey("", FromEnv("A2AMESH_TEST_KEY")), header: "X-API-Key", want: "key-0123456789abcdef"},
		{name: "API key in a header of its own", s: APIKey("x-partner-key", FromEnv("A2AMESH_TEST_KEY")), header: "X-Partner-Key", want: "key-0123456789abcdef"},
		{name: "unset variable", s: Bearer(FromEnv("A2AMESH_TEST_UNSET")), err: "A2AMESH_TEST_UNSET is unset or empty"},
		{name: "line break", s: APIKey("", FromEnv("A2AMESH_TEST_BAD")), err: "line break"},
		{name: "no secret", s: &Static{}, err: "no secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := tc.s.Header(context.Background())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "break") && tc.name != "line break" {
					t.Errorf("the error holds the secret: %v", err)
				}
				return
			}
			if err != nil || len(h) != 1 || h.Get(tc.header) != tc.want {
				t.Fatalf("Header = %v, %v", h, err)
			}
		})
	}
}
