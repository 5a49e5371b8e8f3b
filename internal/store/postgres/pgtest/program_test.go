//go:build unix

package pgtest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartCluster starts a cluster as a program would, with a setting that
// overrides pgtest's own, and checks that it applies, that PID is the
// postmaster's, and that Stop leaves nothing behind.
func TestStartCluster(t *testing.T) {
	NewDatabase(t) // skips without PostgreSQL
	if theServer.local == nil {
		t.Skip("no local cluster: " + EnvURL + " is set")
	}
	c, err := StartCluster("fsync=on")
	if err != nil {
		t.Fatal(err)
	}
	dir := c.s.local.dir
	stopped := false
	defer func() {
		if !stopped {
			_ = c.Stop()
		}
	}()
	pm, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(pm), "\n"); first != strconv.Itoa(c.PID()) {
		t.Errorf("PID %d, postmaster.pid says %s", c.PID(), first)
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	url, err := c.CreateDatabase(ctx, "program_test")
	if err != nil {
		t.Fatal(err)
	}
	for setting, want := range map[string]string{"fsync": "on", "synchronous_commit": "off"} {
		out, err := exec.CommandContext(ctx, theServer.psql, "-X", "-Atc", "SHOW "+setting, "-d", url).CombinedOutput()
		if got := strings.TrimSpace(string(out)); err != nil || got != want {
			t.Errorf("SHOW %s: %q, %v; want %q", setting, got, err, want)
		}
	}
	if err := c.DropDatabase(ctx, "program_test"); err != nil {
		t.Error(err)
	}

	pid := c.PID()
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s: %v", dir, err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the postmaster %d after Stop: %v, want no such process", pid, err)
	}
	if _, err := c.CreateDatabase(ctx, "after_stop"); !errors.Is(err, errStopped) {
		t.Errorf("CreateDatabase after Stop: %v, want errStopped", err)
	}
}

func TestErrUnavailable(t *testing.T) {
	err := unavailable(errors.New("no initdb"))
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("%v is not ErrUnavailable", err)
	}
	if errors.Is(errors.New("psql failed"), ErrUnavailable) {
		t.Error("any error is ErrUnavailable")
	}
}
