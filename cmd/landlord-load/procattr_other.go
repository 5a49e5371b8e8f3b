//go:build !linux

package main

import "syscall"

// serverProcAttr is nil: only Linux can tie a server's life to the suite's.
func serverProcAttr() *syscall.SysProcAttr { return nil }
