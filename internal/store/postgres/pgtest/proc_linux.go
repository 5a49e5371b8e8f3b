package pgtest

import "syscall"

// procAttr runs initdb and postgres as cred (nil: as ourselves), in their
// own process group so that a terminal's ^C reaches only the test binary,
// and with SIGQUIT, PostgreSQL's immediate shutdown, sent to them when this
// binary dies without stopping them.
func procAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
}
