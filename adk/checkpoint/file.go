// Package checkpoint has File, an adk.CheckPointStore that keeps one file
// per checkpoint, written atomically, surviving restarts, with runs of a
// checkpoint kept apart across processes (on Unix). The in-memory store is
// adk.MemoryCheckPointStore; checkpointtest holds the tests every store
// must pass.
package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/a2amesh/a2amesh/adk"
)

// maxIDLength keeps file names within what file systems take.
const maxIDLength = 200

// File keeps each checkpoint in a file of its own in a directory: <id>.json
// (characters other than letters, digits, '-' and '_' escaped as %XX),
// replaced atomically (written aside, synced, renamed). On Unix, File is
// an adk.CheckPointLocker: runs of one checkpoint are kept apart with
// advisory locks on files in the directory's .locks folder, which the
// operating system releases when a process dies. A lock file lives as long
// as its lock is held; one left by a process that died holding it goes at
// the next unlock of its id. Elsewhere a Runner keeps only its own runs
// apart.
type File struct {
	dir string
}

var _ adk.CheckPointStore = (*File)(nil)

// NewFile returns a store in dir, creating it if needed.
func NewFile(dir string) (*File, error) {
	if err := os.MkdirAll(filepath.Join(dir, ".locks"), 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &File{dir: dir}, nil
}

func fileName(id string) (string, error) {
	if id == "" || len(id) > maxIDLength {
		return "", fmt.Errorf("checkpoint: an id must have 1 to %d bytes", maxIDLength)
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String(), nil
}

// Get reads the checkpoint saved under id.
func (f *File) Get(_ context.Context, id string) ([]byte, bool, error) {
	name, err := fileName(id)
	if err != nil {
		return nil, false, err
	}
	data, err := os.ReadFile(filepath.Join(f.dir, name+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("checkpoint: %w", err)
	}
	return data, true, nil
}

// Set writes data under id atomically: a reader sees the old checkpoint or
// the new one, never part of one.
func (f *File) Set(_ context.Context, id string, data []byte) error {
	name, err := fileName(id)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.dir, ".tmp-"+name+"-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(f.dir, name+".json")); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return syncDir(f.dir)
}

// Delete removes the checkpoint saved under id.
func (f *File) Delete(_ context.Context, id string) error {
	name, err := fileName(id)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(f.dir, name+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("checkpoint: sync %s: %w", dir, err)
	}
	return nil
}
