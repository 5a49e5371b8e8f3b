package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		name, stat string
		want       time.Duration
		err        string
	}{
		{
			name: "plain",
			stat: "4242 (landlord) S 1 4242 4242 0 -1 4194560 1500 0 0 0 250 75 0 0 20 0 9 0 123 1000 2000",
			want: 3250 * time.Millisecond,
		},
		{
			name: "a command name with spaces and parentheses",
			stat: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 1 1",
			want: 30 * time.Millisecond,
		},
		{name: "truncated", stat: "7 (x) R 1 7", err: "fields"},
		{name: "no name", stat: "7 x R", err: "no command name"},
		{name: "not a number", stat: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 a 2 0 0", err: "utime"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.stat))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("parseStat = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseStatus(t *testing.T) {
	status := "Name:\tlandlord\nVmPeak:\t 1000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\nRssAnon:\t   10240 kB\nRssFile:\t   30720 kB\nThreads:\t9\n"
	mem, err := parseStatus([]byte(status))
	if err != nil || mem.RSS != 40<<20 || mem.HWM != 50<<20 || mem.Anon != 10<<20 {
		t.Errorf("parseStatus = %+v, %v; want 40 MiB, 50 MiB, 10 MiB anonymous", mem, err)
	}
	if _, err := parseStatus([]byte("Name:\tkthreadd\n")); err == nil {
		t.Error("no VmRSS: no error")
	}
	if _, err := parseStatus([]byte("VmRSS:\t12 kB\nVmHWM:\t12 kB\n")); err == nil {
		t.Error("no RssAnon: no error")
	}
	if _, err := parseStatus([]byte("VmRSS:\t12 MB\nVmHWM:\t1 kB\nRssAnon:\t1 kB\n")); err == nil {
		t.Error("a size not in kB: no error")
	}
}

func TestParseHostStat(t *testing.T) {
	stat := "cpu  100 5 50 9000 40 3 2 1 0 0\ncpu0 50 2 25 4500 20 1 1 0 0 0\n"
	got, err := parseHostStat([]byte(stat))
	if want := 161 * clockTick; err != nil || got != want {
		t.Errorf("parseHostStat = %v, %v; want %v (user, nice, system, irq, softirq, steal)", got, err, want)
	}
	if _, err := parseHostStat([]byte("intr 1 2 3\n")); err == nil {
		t.Error("no cpu line: no error")
	}
}

func TestMonitorThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc, which only Linux has")
	}
	m, err := startMonitor(os.Getpid(), 0, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a, err := m.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; { // burn some CPU
	}
	b, err := m.snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if b.server.CPU <= a.server.CPU || b.toolCPU < b.server.CPU-clockTick {
		t.Errorf("CPU %v then %v (tool %v): did not grow", a.server.CPU, b.server.CPU, b.toolCPU)
	}
	if b.hostBusy < b.toolCPU {
		t.Errorf("the machine was busy %v, less than this process alone (%v)", b.hostBusy, b.toolCPU)
	}
	if b.server.RSS <= 0 || b.server.HWM < b.server.RSS || b.serverMaxRSS < b.server.RSS {
		t.Errorf("RSS %d, HWM %d, max %d", b.server.RSS, b.server.HWM, b.serverMaxRSS)
	}
	if _, err := startMonitor(1<<30, 0, time.Second); err == nil {
		t.Error("a pid that does not exist: no error")
	}
	if _, err := startMonitor(0, 1<<30, time.Second); err == nil || !strings.Contains(err.Error(), "--db-pid") {
		t.Errorf("a database pid that does not exist: %v", err)
	}
}

func TestChildrenOf(t *testing.T) {
	dir := t.TempDir()
	stat := func(pid, ppid int, utime, stime int) string {
		return fmt.Sprintf("%d (postgres: x) S %d 1 1 0 -1 0 0 0 0 0 %d %d 7 8 20 0 1 0 1 1 1", pid, ppid, utime, stime)
	}
	for name, content := range map[string]string{
		"10":   stat(10, 1, 100, 50), // the postmaster
		"11":   stat(11, 10, 3, 2),
		"12":   stat(12, 10, 20, 0),
		"13":   stat(13, 11, 900, 900), // a grandchild: not the postmaster's
		"self": stat(10, 1, 100, 50),   // not a pid
	} {
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name, "stat"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "14"), 0o755); err != nil { // exited: no stat
		t.Fatal(err)
	}
	got, err := childrenOf(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	var sum time.Duration
	for _, c := range got {
		sum += c.self
	}
	if len(got) != 2 || sum != 25*clockTick {
		t.Errorf("children %+v, want 11 and 12, 25 ticks", got)
	}
}

// TestReadTreeCPU counts the CPU time of a child this process has waited
// for.
func TestReadTreeCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc, which only Linux has")
	}
	before, err := readTreeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var child time.Duration
	for n := 100000; child < 10*clockTick; n *= 4 {
		cmd := exec.Command("sh", "-c", fmt.Sprintf("i=0; while [ $i -lt %d ]; do i=$((i+1)); done", n))
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		child += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	after, err := readTreeCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Ticks round each process's time down.
	if after-before < child-2*clockTick {
		t.Errorf("the tree's CPU grew by %v; the children it waited for used %v", after-before, child)
	}
}
