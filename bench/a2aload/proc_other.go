//go:build !linux

package main

import "syscall"

// dieWithParent is Linux's alone: elsewhere a server outlives an a2aload
// that is killed.
func dieWithParent() *syscall.SysProcAttr { return nil }
