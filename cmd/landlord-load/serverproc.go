package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/jaxxstorm/landlord/internal/testbin"
)

// Timeouts of a server the suite starts.
const (
	// serverStartTimeout bounds how long a server has to log its address
	// and answer /readyz with 200.
	serverStartTimeout = time.Minute
	// serverStopTimeout is how long a server has to stop after SIGTERM
	// before it gets SIGKILL.
	serverStopTimeout = 30 * time.Second
	// logTailLines is how much of a server's log an error quotes.
	logTailLines = 15
)

// errServerExited reports that a server the suite started exited when it
// should have been running.
var errServerExited = errors.New("landlord serve exited")

// serverSpec is a `landlord serve` to start.
type serverSpec struct {
	// bin is the landlord binary.
	bin string
	// dir holds the configuration file and the log, named after name.
	dir, name string
	// database is --database: a SQLite file or a postgres:// URL.
	database string
	// config is the YAML of the configuration file.
	config string
}

// serverProcess is a `landlord serve` the suite started, listening on a free
// port of 127.0.0.1 that it chose itself.
type serverProcess struct {
	spec    serverSpec
	cmd     *exec.Cmd
	logPath string
	// address is the API's, http://127.0.0.1:port, from the log.
	address string
	// exited is closed when the process has exited, with waitErr set.
	exited  chan struct{}
	waitErr error
}

// args are the arguments of the serve command.
func (s serverSpec) args(configPath string) []string {
	return []string{"serve", "--config", configPath, "--listen", "127.0.0.1:0", "--database", s.database}
}

// startServer starts spec's server and waits until it answers /readyz with
// 200. Its errors name the log.
func startServer(ctx context.Context, spec serverSpec) (*serverProcess, error) {
	configPath := filepath.Join(spec.dir, spec.name+".yaml")
	if err := os.WriteFile(configPath, []byte(spec.config), 0o600); err != nil {
		return nil, fmt.Errorf("server %s: write its configuration: %w", spec.name, err)
	}
	logPath := filepath.Join(spec.dir, spec.name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("server %s: create its log: %w", spec.name, err)
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(spec.bin, spec.args(configPath)...)
	cmd.Dir = spec.dir // no ./landlord.yaml of the caller's
	cmd.Env = serverEnv(os.Environ())
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = serverProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("server %s: start %s: %w", spec.name, spec.bin, err)
	}
	p := &serverProcess{spec: spec, cmd: cmd, logPath: logPath, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if err := p.waitStarted(ctx); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// serverEnv is env without LANDLORD_* variables, which would add to or
// change the configuration the suite gives.
func serverEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "LANDLORD_") {
			out = append(out, kv)
		}
	}
	return out
}

// pid is the server's process id.
func (p *serverProcess) pid() int { return p.cmd.Process.Pid }

// waitStarted waits until the log names the API's address and /readyz
// answers 200 there.
func (p *serverProcess) waitStarted(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, serverStartTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	hc := &http.Client{Timeout: 5 * time.Second}
	for {
		if p.address == "" {
			p.address = startedAddress(p.logPath)
		}
		if p.address != "" && readyz(ctx, hc, p.address) {
			return nil
		}
		select {
		case <-p.exited:
			return p.failure(fmt.Errorf("%w while starting: %w", errServerExited, p.waitErr))
		case <-ctx.Done():
			return p.failure(fmt.Errorf("not ready within %v: %w", serverStartTimeout, ctx.Err()))
		case <-tick.C:
		}
	}
}

// startedAddress returns the address of the "landlord started" line of the
// JSON log at path, or "" while there is none.
func startedAddress(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg     string `json:"msg"`
			Address string `json:"address"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "landlord started" && line.Address != "" {
			return line.Address
		}
	}
	return ""
}

// readyz reports whether address's /readyz answers 200: the database
// answers, the providers are healthy and a controller leads.
func readyz(ctx context.Context, hc *http.Client, address string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, address+"/readyz", nil)
	if err != nil {
		return false
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// stop stops the server with SIGTERM, and SIGKILL if it has not stopped
// after serverStopTimeout. It fails when the server had exited already or
// did not exit cleanly.
func (p *serverProcess) stop() error {
	select {
	case <-p.exited:
		return p.failure(fmt.Errorf("%w before it was stopped: %w", errServerExited, p.waitErr))
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(serverStopTimeout):
		p.kill()
		return p.failure(fmt.Errorf("did not stop within %v of SIGTERM; killed", serverStopTimeout))
	}
	if p.waitErr != nil {
		return p.failure(fmt.Errorf("stopped with %w", p.waitErr))
	}
	return nil
}

// kill kills the server with SIGKILL and returns once it has exited.
func (p *serverProcess) kill() time.Time {
	_ = p.cmd.Process.Kill()
	<-p.exited
	return time.Now()
}

// failure is err about this server, with where its log is and its end.
func (p *serverProcess) failure(err error) error {
	return fmt.Errorf("landlord serve %s (pid %d): %w; its log is %s%s", p.spec.name, p.pid(), err, p.logPath, logTail(p.logPath))
}

// logTail is the end of the log at path, to append to an error message.
func logTail(path string) string {
	lines, err := testbin.LogTail(path, logTailLines)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(", which ends:\n\t%s", strings.Join(lines, "\n\t"))
}
