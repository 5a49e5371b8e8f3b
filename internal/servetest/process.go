package servetest

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// Timeouts of a Process.
const (
	// StartTimeout bounds how long Start waits for /healthz to answer.
	StartTimeout = 30 * time.Second
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	StopTimeout = 20 * time.Second
)

// Options configure a Process.
type Options struct {
	// Config is the YAML of landlord.yaml: compute blocks, controller
	// settings. The listen address and the database come from flags.
	Config string
	// Database is the --database of every run: a postgres:// URL, say
	// from pgtest.NewDatabase. Empty means a SQLite file in the process's
	// directory.
	Database string
	// Env is added to the test's environment, "KEY=value" each; a key
	// given here replaces the test's own.
	Env []string
	// Binary is the landlord to run; empty means this tree's (Binary).
	// An upgrade test runs an earlier release's.
	Binary string
}

// Process is a `landlord serve` process run by a test, with a directory of
// its own holding its configuration and (unless Options.Database names
// another) its SQLite database, and a free loopback address. It is not safe
// for concurrent use: one goroutine starts and stops it.
type Process struct {
	tb     testing.TB
	bin    string
	dir    string
	addr   string
	db     string // --database
	env    []string
	log    *providertest.LogBuffer
	cmd    *exec.Cmd
	exited chan error // receives cmd's exit once
	client *llclient.Client
}

// New builds the binary if this test binary has not yet, writes the
// configuration and picks an address; Start runs the process. The process
// is stopped when tb ends, and its output logged if tb failed.
func New(tb testing.TB, opts Options) *Process {
	tb.Helper()
	dir := tb.TempDir()
	bin := opts.Binary
	if bin == "" {
		bin = Binary(tb)
	}
	p := &Process{tb: tb, bin: bin, dir: dir, addr: FreeAddr(tb), db: opts.Database, log: &providertest.LogBuffer{}}
	if p.db == "" {
		p.db = filepath.Join(dir, "landlord.db")
	}
	if len(opts.Env) > 0 {
		p.env = append(os.Environ(), opts.Env...)
	}
	if err := os.WriteFile(filepath.Join(dir, "landlord.yaml"), []byte(opts.Config), 0o600); err != nil {
		tb.Fatalf("servetest: write landlord.yaml: %v", err)
	}
	c, err := llclient.New(llclient.Config{Address: "http://" + p.addr})
	if err != nil {
		tb.Fatalf("servetest: %v", err)
	}
	p.client = c
	tb.Cleanup(func() {
		p.Stop()
		if tb.Failed() {
			tb.Logf("landlord serve log:\n%s", p.log.String())
		}
	})
	return p
}

// FreeAddr returns a loopback address ("127.0.0.1:port") that was free a
// moment ago.
func FreeAddr(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("servetest: find a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Client returns a client of the process's API.
func (p *Process) Client() *llclient.Client { return p.client }

// Addr returns the API's address, "127.0.0.1:port".
func (p *Process) Addr() string { return p.addr }

// Dir returns the process's directory: landlord.yaml, and landlord.db when
// Options.Database is empty.
func (p *Process) Dir() string { return p.dir }

// Database returns the process's --database: a postgres:// URL or the
// SQLite file's path.
func (p *Process) Database() string { return p.db }

// Log returns what the process (every run of it) has written so far.
func (p *Process) Log() string { return p.log.String() }

// Start runs `landlord serve` and waits until it answers /healthz; it fails
// the test if the process does not answer within StartTimeout.
func (p *Process) Start() {
	p.tb.Helper()
	if p.cmd != nil {
		p.tb.Fatal("servetest: Start of a process that runs")
	}
	cmd := exec.Command(p.bin, "serve", "--config", filepath.Join(p.dir, "landlord.yaml"),
		"--listen", p.addr, "--database", p.db)
	cmd.Dir = p.dir
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		p.tb.Fatalf("servetest: start landlord serve: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	p.cmd, p.exited = cmd, exited
	poll.Until(p.tb, "servetest: landlord serve answers on "+p.addr, StartTimeout, func() (bool, string) {
		res, err := http.Get("http://" + p.addr + "/healthz")
		if err == nil {
			res.Body.Close()
			return true, ""
		}
		select {
		case werr := <-exited:
			p.cmd = nil
			p.tb.Fatalf("servetest: landlord serve exited before it answered: %v\n%s", werr, p.log.String())
		default:
		}
		return false, err.Error()
	})
}

// Kill stops the process with SIGKILL, as a crash would, and waits for it
// to exit.
func (p *Process) Kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
	p.cmd = nil
}

// Stop stops the process gracefully (SIGTERM), and with SIGKILL if it has
// not exited after StopTimeout.
func (p *Process) Stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(StopTimeout):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.exited
	}
	p.cmd = nil
}
