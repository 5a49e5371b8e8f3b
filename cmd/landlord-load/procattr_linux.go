package main

import "syscall"

// serverProcAttr makes the kernel kill a server the suite started when the
// suite dies, however it dies, so that no server outlives it.
func serverProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
