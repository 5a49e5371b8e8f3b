package kubetest

import "syscall"

// procAttr puts a server in its own process group and kills it when the
// test binary dies without stopping it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// unmount detaches the mount at path.
func unmount(path string) error { return syscall.Unmount(path, syscall.MNT_DETACH) }
