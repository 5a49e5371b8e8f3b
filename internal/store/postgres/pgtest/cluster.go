//go:build unix

package pgtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/testbin"
)

const (
	// dirPrefix starts the name of every cluster directory in os.TempDir().
	dirPrefix = "landlord-pgtest-"
	// lockName is the file in a cluster directory that the owning test
	// binary keeps locked (flock) while it lives.
	lockName = "lock"

	portAttempts = 5
	startTimeout = time.Minute
	stopTimeout  = 10 * time.Second
	logTailLines = 20
)

// errPortTaken reports that another process took the port between
// freePort and postgres binding it.
var errPortTaken = errors.New("port taken")

// cluster is a throwaway PostgreSQL cluster: a postgres process that is a
// child of this test binary, and the directory that holds everything it
// writes.
//
//	dir/           owned by the server's OS user, mode 0700
//	  lock         locked by this binary: see sweep
//	  data/        the cluster, from initdb
//	  pg_hba.conf  trust on 127.0.0.1 and the socket
//	  initdb.log   initdb's output
//	  server.log   postgres's output
//	  .s.PGSQL.N   the Unix socket
type cluster struct {
	binDir string
	dir    string
	port   int
	// lock stays open, and so locked, as long as this binary runs.
	lock *os.File
	// proc is postgres, and exited is closed once it has exited; both are
	// nil until a launch succeeds.
	proc   *os.Process
	exited chan struct{}
	// settings are given to postgres with -c after pgtest's own, which
	// they override: see StartCluster.
	settings []string
}

// startCluster creates and starts a cluster with the caller's settings,
// waiting until it accepts connections. Its errors are unavailableErrors.
func startCluster(settings ...string) (_ *cluster, err error) {
	binDir, err := findBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	sweep(os.TempDir())
	dir, lock, err := makeClusterDir(cred)
	if err != nil {
		return nil, unavailable(err)
	}
	c := &cluster{binDir: binDir, dir: dir, lock: lock, settings: settings}
	defer func() {
		if err != nil {
			err = errors.Join(err, c.stop())
		}
	}()
	if err := c.initdb(cred); err != nil {
		return nil, unavailable(err)
	}
	if err := c.writeHBA(cred); err != nil {
		return nil, unavailable(err)
	}
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, unavailable(err)
		}
		err = c.launch(cred, port)
		if errors.Is(err, errPortTaken) && attempt < portAttempts {
			continue
		}
		if err != nil {
			return nil, unavailable(err)
		}
		return c, nil
	}
}

// findBinDir returns the directory that holds initdb and postgres: Debian's
// PostgreSQL 15 directory, or else the one initdb on PATH comes from.
func findBinDir() (string, error) {
	dirs := []string{debianBinDir}
	if p, err := exec.LookPath("initdb"); err == nil {
		// Follow the link to the real directory: /usr/local/bin/initdb and
		// Homebrew's bin/initdb have no postgres beside them.
		if target, err := filepath.EvalSymlinks(p); err == nil {
			dirs = append(dirs, filepath.Dir(target))
		}
		dirs = append(dirs, filepath.Dir(p))
	}
	for _, d := range dirs {
		if isFile(filepath.Join(d, "initdb")) && isFile(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", unavailable(fmt.Errorf("looked for initdb and postgres in %s and beside initdb on PATH (%s), and found none", debianBinDir, os.Getenv("PATH")))
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// serverCredential returns whom initdb and postgres run as: the OS user
// postgres when this binary runs as root, which PostgreSQL refuses; nil,
// for the current user, otherwise.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := lookupUser(superuser)
	if err != nil {
		return nil, unavailable(fmt.Errorf("running as root, which PostgreSQL refuses, and found no OS user to run it as: %w", err))
	}
	return u, nil
}

// who names the OS user cred stands for, for messages.
func who(cred *syscall.Credential) string {
	if cred == nil {
		return "the current user"
	}
	return fmt.Sprintf("OS user %s (uid %d)", superuser, cred.Uid)
}

// makeClusterDir creates a cluster directory that cred can write, and
// locks it.
func makeClusterDir(cred *syscall.Credential) (dir string, lock *os.File, err error) {
	dir, err = os.MkdirTemp("", dirPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("create cluster directory: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	// The lock file gets its name only once locked, so that sweep never
	// finds it unlocked while this binary lives.
	f, err := os.CreateTemp(dir, lockName+"-")
	if err != nil {
		return "", nil, fmt.Errorf("create lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return "", nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, lockName)); err != nil {
		f.Close()
		return "", nil, fmt.Errorf("name lock file: %w", err)
	}
	if err := chown(dir, cred); err != nil {
		f.Close()
		return "", nil, err
	}
	return dir, f, nil
}

func chown(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	if err := os.Chown(path, int(cred.Uid), int(cred.Gid)); err != nil {
		return fmt.Errorf("hand %s to %s: %w", path, who(cred), err)
	}
	return nil
}

func (c *cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// initdb creates the cluster's data directory, with the superuser
// postgres trusted without a password.
func (c *cluster) initdb(cred *syscall.Credential) error {
	logPath := filepath.Join(c.dir, "initdb.log")
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("create initdb log: %w", err)
	}
	defer log.Close()
	cmd := exec.Command(filepath.Join(c.binDir, "initdb"),
		"-D", c.dataDir(), "-U", superuser, "-A", "trust",
		"-E", "UTF8", "--no-locale", "--no-sync")
	cmd.Dir = c.dir // PostgreSQL's tools complain about a working directory they cannot enter.
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procAttr(cred)
	if err := cmd.Run(); err != nil {
		hint := ""
		if cred != nil {
			hint = fmt.Sprintf("\n(%s must be able to reach %s; TMPDIR chooses another directory.)", who(cred), c.dir)
		}
		return fmt.Errorf("initdb -D %s as %s: %w%s%s", c.dataDir(), who(cred), err, logTail(logPath), hint)
	}
	return nil
}

// writeHBA writes the cluster's pg_hba.conf: anyone may connect as anyone
// without a password, through the socket (in a directory only the server's
// user and root can enter) and from 127.0.0.1.
func (c *cluster) writeHBA(cred *syscall.Credential) error {
	path := filepath.Join(c.dir, "pg_hba.conf")
	hba := "local all all trust\nhost all all 127.0.0.1/32 trust\n"
	if err := os.WriteFile(path, []byte(hba), 0o600); err != nil {
		return fmt.Errorf("write pg_hba.conf: %w", err)
	}
	return chown(path, cred)
}

// serverEnv is the environment of initdb and postgres: no PG* variables
// from the caller, English messages (launch reads them).
func serverEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// launch starts postgres on port and waits until it accepts connections.
// It returns an error wrapping errPortTaken when the port was taken.
func (c *cluster) launch(cred *syscall.Credential, port int) error {
	logPath := filepath.Join(c.dir, "server.log")
	log, err := os.Create(logPath) // truncates the log of a failed attempt
	if err != nil {
		return fmt.Errorf("create server log: %w", err)
	}
	defer log.Close()
	args := []string{"-D", c.dataDir(),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + c.dir,
		"-c", "hba_file=" + filepath.Join(c.dir, "pg_hba.conf"),
		"-c", "max_connections=200",
		// Nothing outlives the test binary, so durability buys nothing.
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "timezone=UTC",
	}
	for _, s := range c.settings {
		args = append(args, "-c", s)
	}
	cmd := exec.Command(filepath.Join(c.binDir, "postgres"), args...)
	cmd.Dir = c.dir
	cmd.Env = serverEnv()
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = procAttr(cred)

	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		// On Linux the kernel signals postgres (procAttr's Pdeathsig) when
		// the thread that started it ends, not the process. Go ends a
		// thread only when a goroutine locked to it returns, so this
		// goroutine keeps its thread for as long as postgres runs.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait() // the log says why it exited
		close(exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start %s as %s: %w", cmd.Path, who(cred), err)
	}
	c.proc, c.exited, c.port = cmd.Process, exited, port
	return c.waitReady(logPath)
}

// waitReady waits until postgres says, in postmaster.pid, that it accepts
// connections: what pg_ctl -w does.
func (c *cluster) waitReady(logPath string) error {
	timeout := time.NewTimer(startTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if c.ready() {
			return nil
		}
		select {
		case <-c.exited:
			c.proc, c.exited = nil, nil
			tail := logTail(logPath)
			err := fmt.Errorf("postgres on 127.0.0.1:%d exited before accepting connections%s", c.port, tail)
			if strings.Contains(tail, "Address already in use") {
				return fmt.Errorf("%w: %w", errPortTaken, err)
			}
			return err
		case <-timeout.C:
			return fmt.Errorf("postgres on 127.0.0.1:%d did not accept connections within %v%s", c.port, startTimeout, logTail(logPath))
		case <-tick.C:
		}
	}
}

// ready reports whether postmaster.pid is our postgres's and says "ready".
func (c *cluster) ready() bool {
	b, err := os.ReadFile(filepath.Join(c.dataDir(), "postmaster.pid"))
	if err != nil {
		return false
	}
	lines := strings.Split(string(b), "\n")
	return len(lines) > 7 &&
		lines[0] == strconv.Itoa(c.proc.Pid) &&
		strings.TrimSpace(lines[7]) == "ready"
}

// pid is the postmaster's process id; 0 when it does not run.
func (c *cluster) pid() int {
	if c.proc == nil {
		return 0
	}
	return c.proc.Pid
}

// stop stops postgres, if it runs, and removes the cluster directory.
func (c *cluster) stop() error {
	c.halt()
	err := os.RemoveAll(c.dir)
	c.lock.Close()
	if err != nil {
		return fmt.Errorf("remove cluster directory: %w", err)
	}
	return nil
}

// halt stops postgres, if it runs, and waits until it has exited.
func (c *cluster) halt() {
	if c.proc == nil {
		return
	}
	// SIGQUIT is PostgreSQL's immediate shutdown, what pg_ctl stop -m
	// immediate sends: no checkpoint for a cluster about to go.
	_ = c.proc.Signal(syscall.SIGQUIT)
	select {
	case <-c.exited:
	case <-time.After(stopTimeout):
		_ = c.proc.Kill()
		<-c.exited
	}
	c.proc, c.exited = nil, nil
}

// logTail returns the last lines of the log at path, ready to append to
// an error message.
func logTail(path string) string {
	lines, err := testbin.LogTail(path, logTailLines)
	if err != nil {
		return fmt.Sprintf("\n(no log: %v)", err)
	}
	if len(lines) == 0 {
		return ""
	}
	return fmt.Sprintf("\n%s (last %d lines):\n\t%s", filepath.Base(path), len(lines), strings.Join(lines, "\n\t"))
}

// Tool returns the path of one of PostgreSQL's client programs (pg_dump,
// pg_restore) of the release whose server the tests run, beside its
// initdb; it fails t when there is none.
func Tool(t testing.TB, name string) string {
	t.Helper()
	dir, err := findBinDir()
	if err != nil {
		report(t, os.Getenv, err)
		return ""
	}
	path := filepath.Join(dir, name)
	if !isFile(path) {
		t.Fatalf("pgtest: no %s beside initdb in %s", name, dir)
	}
	return path
}
