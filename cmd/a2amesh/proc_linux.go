package main

import "syscall"

// childAttrs makes the kernel stop a child when up dies, even by SIGKILL.
func childAttrs() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
