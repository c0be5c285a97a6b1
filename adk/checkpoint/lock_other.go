//go:build !unix

package checkpoint

import (
	"fmt"
	"sync"

	"github.com/a2amesh/a2amesh/adk"
)

// fileLocks keep runs apart within this File only: without flock there is
// no lock that dies with its process.
type fileLocks struct {
	mu   sync.Mutex
	held map[string]bool
}

func (f *File) lockFile(path, id string) (func(), error) {
	l := &f.locks
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[path] {
		return nil, fmt.Errorf("%w: %s", adk.ErrCheckPointBusy, id)
	}
	if l.held == nil {
		l.held = map[string]bool{}
	}
	l.held[path] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, path)
			l.mu.Unlock()
		})
	}, nil
}
