//go:build unix

package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/a2amesh/a2amesh/adk"
)

var _ adk.CheckPointLocker = (*File)(nil)

// Lock claims id for one run, across processes: an exclusive advisory lock
// on the id's lock file, taken without waiting. The lock belongs to the
// open file, so a second claim fails in this process as in any other, and
// the kernel drops it when the process dies. unlock removes the lock file
// (while still holding it) and releases the lock, so lock files do not
// pile up, one per task, for ever.
func (f *File) Lock(ctx context.Context, id string) (func(), error) {
	name, err := fileName(id)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(f.dir, ".locks", name)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("checkpoint: lock %s: %w", id, err)
		}
		fd, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
		if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			fd.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: %s", adk.ErrCheckPointBusy, id)
			}
			return nil, fmt.Errorf("checkpoint: lock %s: %w", path, err)
		}
		// The holder before us may have removed the file between our open
		// and our lock; a lock on a file no path names keeps nothing apart
		// (the next claim creates a new file), so lock the one the path
		// names now.
		same, err := names(path, fd)
		if err != nil {
			fd.Close()
			return nil, err
		}
		if !same {
			fd.Close()
			continue
		}
		var once sync.Once
		return func() {
			once.Do(func() {
				// Removed before the lock is released, so that whoever
				// locks the path next holds a file that the path names.
				// Should the removal fail, the file stays until the id's
				// next unlock: an inode, not a wrong answer.
				_ = os.Remove(path)
				fd.Close()
			})
		}, nil
	}
}

// names reports whether path names the open file fd.
func names(path string, fd *os.File) (bool, error) {
	held, err := fd.Stat()
	if err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	now, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	return os.SameFile(held, now), nil
}
