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
	// Anon is the anonymous part of the resident set now (RssAnon): the
	// heap, stacks and the runtime's own memory, without the pages of the
	// executable, which a binary linking every provider's SDK maps by the
	// tens of MiB at start-up whatever the load.
	Anon int64
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
	mem, err := parseStatus(status)
	if err != nil {
		return procSample{}, fmt.Errorf("proc: /proc/%d/status: %w", pid, err)
	}
	mem.CPU = cpu
	return mem, nil
}

// parseStat returns utime+stime from the contents of /proc/<pid>/stat.
func parseStat(b []byte) (time.Duration, error) {
	st, err := parseStatTimes(b)
	return st.self, err
}

// statTimes are the CPU times and the parent of a process, from
// /proc/<pid>/stat.
type statTimes struct {
	ppid int
	// self is utime+stime; waited is cutime+cstime, the CPU time of the
	// children the process has waited for.
	self, waited time.Duration
}

// parseStatTimes reads the contents of /proc/<pid>/stat. The command name,
// in parentheses, may hold spaces and parentheses itself, so fields are
// counted from the last ')'.
func parseStatTimes(b []byte) (statTimes, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return statTimes{}, errors.New("no command name")
	}
	// After ")": state is field 3, ppid field 4, utime, stime, cutime and
	// cstime fields 14 to 17.
	f := bytes.Fields(b[i+1:])
	if len(f) < 15 {
		return statTimes{}, fmt.Errorf("%d fields after the command name, want at least 15", len(f))
	}
	var n [5]int64
	for j, k := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseInt(string(f[k]), 10, 64)
		if err != nil {
			return statTimes{}, fmt.Errorf("ppid, utime, stime, cutime or cstime: %w", err)
		}
		n[j] = v
	}
	return statTimes{ppid: int(n[0]), self: time.Duration(n[1]+n[2]) * clockTick, waited: time.Duration(n[3]+n[4]) * clockTick}, nil
}

// parseStatus returns VmRSS, VmHWM and RssAnon, in bytes, from the
// contents of /proc/<pid>/status.
func parseStatus(b []byte) (procSample, error) {
	var mem procSample
	found := 0
	for line := range bytes.Lines(b) {
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		var dst *int64
		switch string(key) {
		case "VmRSS":
			dst = &mem.RSS
		case "VmHWM":
			dst = &mem.HWM
		case "RssAnon":
			dst = &mem.Anon
		default:
			continue
		}
		f := bytes.Fields(value)
		if len(f) != 2 || string(f[1]) != "kB" {
			return procSample{}, fmt.Errorf("%s: %q is not a size in kB", key, bytes.TrimSpace(value))
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return procSample{}, fmt.Errorf("%s: %w", key, err)
		}
		*dst = kb << 10
		found++
	}
	if found != 3 {
		return procSample{}, errors.New("no VmRSS, VmHWM or RssAnon (a kernel thread, or not Linux?)")
	}
	return mem, nil
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

// monitor watches the server's process, when there is one to watch, the
// database server's, when there is one, and this one: it samples the
// server's resident set between snapshots, which VmHWM alone cannot give per
// phase.
type monitor struct {
	pid   int // the server's; 0 when not watched
	dbPid int // the database server's; 0 when not watched
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	maxRSS  int64 // since the last snapshot
	maxAnon int64 // since the last snapshot
	err     error
}

// snapshot is the state of both processes at a phase's boundary.
type snapshot struct {
	at      time.Time
	toolCPU time.Duration
	// hostBusy is the CPU time the whole machine spent busy; zero when
	// it cannot be read.
	hostBusy time.Duration
	// server, serverMaxRSS and serverMaxAnon are zero when no server is
	// watched.
	server        procSample
	serverMaxRSS  int64
	serverMaxAnon int64
	// database is the CPU time of the database server and its children;
	// zero when none is watched.
	database time.Duration
}

// startMonitor starts sampling pid every interval; pid 0 watches only this
// process. dbPid, when not 0, is the database server's, whose CPU time
// snapshots read too. Close stops it.
func startMonitor(pid, dbPid int, interval time.Duration) (*monitor, error) {
	m := &monitor{pid: pid, dbPid: dbPid, stop: make(chan struct{}), done: make(chan struct{})}
	if dbPid != 0 {
		if _, err := readTreeCPU(dbPid); err != nil {
			return nil, fmt.Errorf("--db-pid %d: %w", dbPid, err)
		}
	}
	if pid == 0 {
		close(m.done)
		return m, nil
	}
	first, err := readProc(pid)
	if err != nil {
		return nil, fmt.Errorf("--pid %d: %w", pid, err)
	}
	m.maxRSS, m.maxAnon = first.RSS, first.Anon
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
				m.maxAnon = max(m.maxAnon, s.Anon)
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
	if m.dbPid != 0 {
		cpu, err := readTreeCPU(m.dbPid)
		if err != nil {
			return s, fmt.Errorf("the database server (pid %d): %w", m.dbPid, err)
		}
		s.database = cpu
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
	s.serverMaxAnon = max(m.maxAnon, srv.Anon)
	m.maxRSS, m.maxAnon = srv.RSS, srv.Anon
	return s, nil
}

// Close stops the sampling.
func (m *monitor) Close() {
	if m.pid != 0 {
		close(m.stop)
	}
	<-m.done
}
