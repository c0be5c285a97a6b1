//go:build unix

package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"

	"github.com/a2amesh/a2amesh/adk"
)

// fileLocks is empty: the kernel keeps the locks.
type fileLocks struct{}

// lockFile takes an exclusive advisory lock on path without waiting. The
// lock belongs to the open file, so a second claim fails in this process
// as in any other, and the kernel drops it when the process dies.
func (*File) lockFile(path, id string) (func(), error) {
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
