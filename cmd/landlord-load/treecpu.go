package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// readTreeCPU returns the CPU time a process and its children have used:
// its own, that of the children it has waited for, and that of its children
// still running. PostgreSQL's postmaster forks a backend per connection and
// a process per background task and waits for each when it exits, so this
// is the whole database server's CPU time, as docs/performance.md measured
// it by hand. A child that exits between the reads is counted once or not
// at all.
func readTreeCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("proc: %w", err)
	}
	root, err := parseStatTimes(b)
	if err != nil {
		return 0, fmt.Errorf("proc: /proc/%d/stat: %w", pid, err)
	}
	total := root.self + root.waited
	children, err := childrenOf("/proc", pid)
	if err != nil {
		return 0, err
	}
	for _, c := range children {
		total += c.self
	}
	return total, nil
}

// childrenOf returns the CPU times of the running children of pid, from
// the stat files under procDir.
func childrenOf(procDir string, pid int) ([]statTimes, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("proc: %w", err)
	}
	var out []statTimes
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "stat"))
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) || errors.Is(err, fs.ErrPermission) {
			continue // exited since the listing, or not ours to read
		}
		if err != nil {
			return nil, fmt.Errorf("proc: %w", err)
		}
		st, err := parseStatTimes(b)
		if err != nil {
			return nil, fmt.Errorf("proc: %s/stat: %w", e.Name(), err)
		}
		if st.ppid == pid {
			out = append(out, st)
		}
	}
	return out, nil
}
