//go:build unix

package checkpoint

import (
	"context"
	"errors"
	"fmt"
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
// the kernel drops it when the process dies.
func (f *File) Lock(_ context.Context, id string) (func(), error) {
	name, err := fileName(id)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(f.dir, ".locks", name)
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
	var once sync.Once
	return func() { once.Do(func() { fd.Close() }) }, nil // closing the file releases the lock
}
