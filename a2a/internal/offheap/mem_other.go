//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package offheap

// mapMemory allocates memory on the Go heap, where the system maps no
// anonymous memory for this package.
func mapMemory(size int) ([]byte, error) { return make([]byte, size), nil }

func unmapMemory([]byte) {}
