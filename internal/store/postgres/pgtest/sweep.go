//go:build unix

package pgtest

import (
	"os"
	"path/filepath"
	"syscall"
)

// sweep removes, from tmp, the cluster directories of test binaries that
// died without removing them. A binary holds the flock of its directory's
// lock file as long as it lives and the kernel releases it when the binary
// dies, however it dies, so a lock sweep can take belongs to a dead binary.
// Unlike a pid, this holds across pid reuse and pid namespaces.
//
// Should a dead binary's postgres still run (outside Linux), it finds its
// postmaster.pid gone within a minute and shuts down. Directories sweep
// cannot enter (another user's) stay.
func sweep(tmp string) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, dirPrefix+"*"))
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, lockName))
		if err != nil {
			continue // not ours to judge, or not locked yet
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
