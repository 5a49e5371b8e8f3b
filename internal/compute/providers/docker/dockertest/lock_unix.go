//go:build unix

package dockertest

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// held is this run's lock file, open (and so locked) until the process
// ends or release closes it.
var held struct {
	f    *os.File
	path string
}

// hold makes and locks run id's lock file in dir. The file takes its name
// only once locked, so that a sweep never finds it unlocked.
func hold(dir, id string) error {
	path := lockPath(dir, id)
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	held.f, held.path = f, path
	return nil
}

// release removes and unlocks this run's lock file, once its resources
// are gone.
func release() {
	if held.f == nil {
		return
	}
	_ = os.Remove(held.path)
	_ = held.f.Close()
	held.f = nil
}

// lockState tells from the lock file at path whether its run still runs:
// live while a process holds its lock, ended when nobody does or the file
// is gone (a run removes it last), unknown when it cannot be opened.
func lockState(path string) runState {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return runEnded
	case err != nil:
		return runUnknown
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return runLive
		}
		return runUnknown
	}
	return runEnded
}
