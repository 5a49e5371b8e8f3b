//go:build unix

package servetest

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lockName is the file in a binary's directory that the test binary which
// built it keeps locked (flock) while it runs.
const lockName = "lock"

// holders keeps the lock files open, and so locked, until the test binary
// exits; the kernel releases the locks then, however it exits.
var holders []*os.File

// hold locks dir for this test binary. The lock file takes its name only
// once locked, so that a sweep never finds it unlocked.
func hold(dir string) error {
	tmp := filepath.Join(dir, lockName+".new")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, lockName)); err != nil {
		_ = f.Close()
		return err
	}
	holders = append(holders, f)
	return nil
}

// sweep removes the binary directories under tmp whose lock no running test
// binary holds.
func sweep(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), binDirPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		f, err := os.Open(filepath.Join(dir, lockName))
		if err != nil {
			continue // not ours, or being created: leave it
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			_ = os.RemoveAll(dir)
		}
		_ = f.Close()
	}
}
