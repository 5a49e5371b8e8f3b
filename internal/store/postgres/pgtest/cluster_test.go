//go:build unix

package pgtest

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSweepRemovesOnlyDeadBinariesDirectories(t *testing.T) {
	tmp := t.TempDir()
	mkdir := func(name string, withLock bool) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if withLock {
			if err := os.WriteFile(filepath.Join(dir, lockName), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := mkdir(dirPrefix+"dead", true)
	live := mkdir(dirPrefix+"live", true)
	starting := mkdir(dirPrefix+"starting", false) // lock file not yet named
	other := mkdir("other-dead", true)

	// flock locks belong to open files, so this one stands for another
	// binary even within this process.
	f, err := os.Open(filepath.Join(live, lockName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	sweep(tmp)

	for dir, wantGone := range map[string]bool{dead: true, live: false, starting: false, other: false} {
		_, err := os.Stat(dir)
		if gone := os.IsNotExist(err); gone != wantGone {
			t.Errorf("%s: gone %v, want %v", filepath.Base(dir), gone, wantGone)
		}
	}
}

func TestClusterLeavesNothingBehind(t *testing.T) {
	NewDatabase(t)
	c := theServer.local
	if c == nil {
		t.Skip("no local cluster: " + EnvURL + " is set")
	}
	fi, err := os.Stat(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("cluster directory mode %v, want 0700", fi.Mode().Perm())
	}
	// The sweep of another binary must leave a live cluster alone.
	sweep(filepath.Dir(c.dir))
	if _, err := os.Stat(c.dir); err != nil {
		t.Fatalf("sweep removed the live cluster: %v", err)
	}
}

func TestClusterRetriesATakenPort(t *testing.T) {
	NewDatabase(t) // skips without PostgreSQL
	if theServer.local == nil {
		t.Skip("no local cluster: " + EnvURL + " is set")
	}
	c, err := startCluster()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.stop(); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(c.dir); !os.IsNotExist(err) {
			t.Errorf("stop left %s: %v", c.dir, err)
		}
	}()
	cred, err := serverCredential()
	if err != nil {
		t.Fatal(err)
	}
	c.halt()

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = c.launch(cred, taken.Addr().(*net.TCPAddr).Port)
	if !errors.Is(err, errPortTaken) || !strings.Contains(err.Error(), "server.log (last") {
		t.Fatalf("launch on a taken port: %v; want errPortTaken with the server log", err)
	}

	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.launch(cred, port); err != nil {
		t.Fatalf("launch on a free port after a taken one: %v", err)
	}
}
