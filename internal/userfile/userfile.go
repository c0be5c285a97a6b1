// Package userfile reads the files a user names in flags and
// configuration (configs, keys, secrets, topologies) with a bound on their
// size: a path mistyped to /dev/zero, a FIFO or a log file must fail with
// an error naming it, not hang the process or fill its memory.
package userfile

import (
	"fmt"
	"io"
	"os"
)

// MaxBytes bounds every file Read reads: a megabyte holds any config,
// key set or topology many times over.
const MaxBytes = 1 << 20

// Read returns the contents of the regular file at path (a symbolic link,
// such as a Kubernetes Secret mount's, is followed), or an error naming
// path when it is not a regular file or holds more than MaxBytes.
func Read(path string) ([]byte, error) {
	// Stat before opening: opening a FIFO waits for a writer.
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, info.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, MaxBytes)
	}
	return b, nil
}
