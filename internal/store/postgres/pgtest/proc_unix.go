//go:build unix && !linux

package pgtest

import "syscall"

// procAttr runs initdb and postgres as cred (nil: as ourselves), in their
// own process group so that a terminal's ^C reaches only the test binary.
// Only Linux can tie their life to this binary's: elsewhere, see sweep.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}
