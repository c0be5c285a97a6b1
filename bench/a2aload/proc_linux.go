package main

import "syscall"

// dieWithParent has the kernel kill a started server when a2aload dies,
// on any path, even SIGKILL.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
