//go:build !linux

package main

import (
	"errors"
	"syscall"
)

// dieWithParent is Linux's alone: elsewhere a server outlives an a2aload
// that is killed.
func dieWithParent() *syscall.SysProcAttr { return nil }

// raiseOpenFiles is Linux's alone, as the /proc readers are.
func raiseOpenFiles() (uint64, error) {
	return 0, errors.New("open-file limits are read on Linux only")
}
