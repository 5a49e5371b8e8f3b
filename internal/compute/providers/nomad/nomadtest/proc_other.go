//go:build unix && !linux

package nomadtest

import (
	"errors"
	"syscall"
)

// procAttr puts the agent in its own process group.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// unmountUnder does nothing: only a Linux client mounts tmpfs for tasks.
func unmountUnder(string) error { return nil }

// mountsUnder finds nothing: only a Linux client mounts tmpfs for tasks.
func mountsUnder(string) ([]string, error) { return nil, nil }

// groupAlive tells whether a process of group pgid exists.
func groupAlive(pgid int) (bool, error) {
	err := syscall.Kill(-pgid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false, nil
	}
	return err == nil, err
}
