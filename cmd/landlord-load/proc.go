package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"
)

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ),
// 100 per second on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// procSample is what /proc says of a process at one moment.
type procSample struct {
	// CPU is user plus system time since the process started.
	CPU time.Duration
	// RSS is the resident set now (VmRSS), HWM its peak so far (VmHWM), in
	// bytes.
	RSS, HWM int64
}

// readProc reads /proc/<pid>/stat and /proc/<pid>/status.
func readProc(pid int) (procSample, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procSample{}, fmt.Errorf("proc: %w", err)
	}
	cpu, err := parseStat(stat)
	if err != nil {
		return procSample{}, fmt.Errorf("proc: /proc/%d/stat: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return procSample{}, fmt.Errorf("proc: %w", err)
	}
	rss, hwm, err := parseStatus(status)
	if err != nil {
		return procSample{}, fmt.Errorf("proc: /proc/%d/status: %w", pid, err)
	}
	return procSample{CPU: cpu, RSS: rss, HWM: hwm}, nil
}

// parseStat returns utime+stime from the contents of /proc/<pid>/stat. The
// command name, in parentheses, may hold spaces and parentheses itself, so
// fields are counted from the last ')'.
func parseStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("no command name")
	}
	// After ")": state is field 3, utime field 14 and stime field 15.
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("utime or stime: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// parseStatus returns VmRSS and VmHWM, in bytes, from the contents of
// /proc/<pid>/status.
func parseStatus(b []byte) (rss, hwm int64, err error) {
	found := 0
	for line := range bytes.Lines(b) {
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst = &rss
		case "VmHWM":
			dst = &hwm
		default:
			continue
		}
		f := bytes.Fields(value)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, 0, fmt.Errorf("%s: %q is not a size in kB", key, bytes.TrimSpace(value))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		*dst = kb << 10
		found++
	}
	if found != 2 {
		return 0, 0, errors.New("no VmRSS or VmHWM (a kernel thread, or not Linux?)")
	}
	return rss, hwm, nil
}

// readHostBusy reads the time every CPU of the machine spent busy since it
// booted, from /proc/stat.
func readHostBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("proc: %w", err)
	}
	busy, err := parseHostStat(b)
	if err != nil {
		return 0, fmt.Errorf("proc: /proc/stat: %w", err)
	}
	return busy, nil
}

// parseHostStat returns the busy time of the "cpu" line of /proc/stat: user,
// nice, system, irq, softirq and steal (guest time is counted in user
// already; idle and iowait are not busy).
func parseHostStat(b []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, errors.New("no cpu line with at least 8 times")
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu line: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// monitor watches the server's process, when there is one to watch, and
// this one: it samples the server's resident set between snapshots, which
// VmHWM alone cannot give per phase.
type monitor struct {
	pid  int // the server's; 0 when not watched
	stop chan struct{}
	done chan struct{}

	mu     sync.Mutex
	maxRSS int64 // since the last snapshot
	err    error
}

// snapshot is the state of both processes at a phase's boundary.
type snapshot struct {
	at      time.Time
	toolCPU time.Duration
	// hostBusy is the CPU time the whole machine spent busy; zero when
	// it cannot be read.
	hostBusy time.Duration
	// server and serverMaxRSS are zero when no server is watched.
	server       procSample
	serverMaxRSS int64
}

// startMonitor starts sampling pid every interval; pid 0 watches only this
// process. Close stops it.
func startMonitor(pid int, interval time.Duration) (*monitor, error) {
	m := &monitor{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	if pid == 0 {
		close(m.done)
		return m, nil
	}
	first, err := readProc(pid)
	if err != nil {
		return nil, fmt.Errorf("--pid %d: %w", pid, err)
	}
	m.maxRSS = first.RSS
	go func() {
		defer close(m.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				s, err := readProc(pid)
				m.mu.Lock()
				if err != nil && m.err == nil {
					m.err = err
				}
				m.maxRSS = max(m.maxRSS, s.RSS)
				m.mu.Unlock()
			}
		}
	}()
	return m, nil
}

// snapshot reads both processes and starts a new window for the highest
// resident set. It fails when the server went away.
func (m *monitor) snapshot() (snapshot, error) {
	s := snapshot{at: time.Now()}
	if self, err := readProc(os.Getpid()); err == nil {
		s.toolCPU = self.CPU
	}
	if busy, err := readHostBusy(); err == nil {
		s.hostBusy = busy
	}
	if m.pid == 0 {
		return s, nil
	}
	srv, err := readProc(m.pid)
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		err = m.err
	}
	if err != nil {
		return s, fmt.Errorf("the server (pid %d): %w", m.pid, err)
	}
	s.server = srv
	s.serverMaxRSS = max(m.maxRSS, srv.RSS)
	m.maxRSS = srv.RSS
	return s, nil
}

// Close stops the sampling.
func (m *monitor) Close() {
	if m.pid != 0 {
		close(m.stop)
	}
	<-m.done
}
