package main

import "syscall"

// dieWithParent has the kernel kill a started server when a2aload dies,
// on any path, even SIGKILL.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// raiseOpenFiles raises this process's soft limit on open files to its
// hard limit (Go does so at start since 1.19; this says what it is) and
// returns it.
func raiseOpenFiles() (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	if l.Cur < l.Max {
		l.Cur = l.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
			return 0, err
		}
	}
	return l.Cur, nil
}
