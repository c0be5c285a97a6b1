package userfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	if err := os.WriteFile(small, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, MaxBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link") // as a Kubernetes Secret mount's key is
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       string // the contents, or what the error says
		ok         bool
	}{
		{"a file", small, "0123456789", true},
		{"through a link", link, "0123456789", true},
		{"over the bound", big, "larger than 1048576 bytes", false},
		{"a device", "/dev/zero", "not a regular file", false},
		{"a directory", dir, "not a regular file", false},
		{"a FIFO", fifo, "not a regular file", false},
		{"missing", filepath.Join(dir, "none"), "no such file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Read(tc.path)
			if tc.ok {
				if err != nil || string(b) != tc.want {
					t.Fatalf("Read = %q, %v; want %q", b, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("Read = %q, %v; want an error naming %s and saying %q", b, err, tc.path, tc.want)
			}
		})
	}
}
