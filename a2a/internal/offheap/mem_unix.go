//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package offheap

import "syscall"

// mapMemory maps size bytes of anonymous memory: the system backs a page
// once it is written, and takes it back when it is unmapped.
func mapMemory(size int) ([]byte, error) {
	return syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapMemory(mem []byte) {
	// Munmap of a mapping this package made, whole, does not fail.
	_ = syscall.Munmap(mem)
}
