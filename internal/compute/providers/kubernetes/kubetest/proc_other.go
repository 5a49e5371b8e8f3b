//go:build unix && !linux

package kubetest

import "syscall"

// procAttr puts a server in its own process group.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// unmount unmounts the mount at path.
func unmount(path string) error { return syscall.Unmount(path, 0) }
