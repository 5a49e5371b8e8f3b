package process

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// The environment that marks a process as a tenant's container, as labels
// mark a container: the provider finds its processes again by it, even
// when an operator restarted one by hand.
const (
	envTenant    = "LANDLORD_TENANT_ID"
	envContainer = "LANDLORD_CONTAINER"
)

// basePath is the PATH of every process: the machine's standard one.
const basePath = "/usr/local/bin:/usr/bin:/bin"

// desired is what a container's process should be.
type desired struct {
	name  string
	exe   string
	argv  []string // without argv[0]
	env   map[string]string
	ports map[int]int // container port → machine port
	// secret reports whether an environment variable holds a secret.
	secret func(string) bool
}

// desire is what each container of spec should run as, with the ports
// given: kept from the state, or (with reserve) newly allocated; without
// reserve (Inspect, which changes nothing) a port not yet given is 0.
func (p *Provider) desire(spec *provider.TenantComputeSpec, st *state, reserve bool) ([]desired, error) {
	out := make([]desired, 0, len(spec.Containers))
	for _, c := range spec.Containers {
		exe := c.Image
		if resolved, err := filepath.EvalSymlinks(c.Image); err == nil {
			exe = resolved // as /proc/PID/exe shows it
		}
		d := desired{name: c.Name, exe: exe, argv: slices.Concat(c.Command, c.Args), env: map[string]string{}, ports: map[int]int{}}
		maps.Copy(d.env, c.Env)
		secrets := map[string]bool{}
		for _, s := range spec.Secrets {
			if s.Container == c.Name {
				d.env[s.Name] = s.Value.Reveal()
				secrets[s.Name] = true
			}
		}
		d.secret = func(k string) bool { return secrets[k] }
		var prev map[int]int
		if pr := st.container(c.Name); pr != nil {
			prev = pr.Ports
		}
		for i, pm := range c.Ports {
			port := cmp.Or(pm.HostPort, prev[pm.ContainerPort])
			if reserve {
				var err error
				if port, err = p.port(spec.TenantID, pm, prev[pm.ContainerPort]); err != nil {
					return nil, err
				}
			}
			d.ports[pm.ContainerPort] = port
			key := "PORT_" + strconv.Itoa(pm.ContainerPort)
			if pm.Name != "" {
				key = "PORT_" + strings.ToUpper(strings.ReplaceAll(pm.Name, "-", "_"))
			}
			d.env[key] = strconv.Itoa(port)
			if i == 0 {
				d.env["PORT"] = strconv.Itoa(port)
			}
		}
		d.env["PATH"] = basePath
		d.env[envTenant] = spec.TenantID
		d.env[envContainer] = c.Name
		out = append(out, d)
	}
	return out, nil
}

// portRange is the ports tenants' processes get.
type portRange struct{ from, to int }

func parsePortRange(s string) (portRange, error) {
	a, b, ok := strings.Cut(s, "-")
	from, err1 := strconv.Atoi(a)
	to, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || from < 1024 || to > 65535 || from > to {
		return portRange{}, fmt.Errorf("%q is not a range FROM-TO of ports from 1024 to 65535", s)
	}
	return portRange{from, to}, nil
}

// reserved are the machine ports given to tenants, by port.
var reserved = struct {
	sync.Mutex
	by map[int]string
}{by: map[int]string{}}

// port is the machine port of a container port: the one the spec asks
// for, else the one it had, else a free one of the range, tried from a
// place that depends on the tenant so that tenants seldom contend.
func (p *Provider) port(tenantID string, pm workload.PortMapping, had int) (int, error) {
	reserved.Lock()
	defer reserved.Unlock()
	take := func(port int) int { reserved.by[port] = tenantID; return port }
	if pm.HostPort != 0 {
		if owner, ok := reserved.by[pm.HostPort]; ok && owner != tenantID {
			return 0, provider.Terminal(fmt.Errorf("%s: host port %d is taken by another tenant: %w", Name, pm.HostPort, provider.ErrProviderConflict))
		}
		return take(pm.HostPort), nil
	}
	if had != 0 {
		return take(had), nil
	}
	h := fnv.New32a()
	h.Write([]byte(tenantID + "/" + strconv.Itoa(pm.ContainerPort)))
	n := p.ports.to - p.ports.from + 1
	for i := range n {
		port := p.ports.from + (int(h.Sum32())+i)%n
		if _, taken := reserved.by[port]; taken || !free(port) {
			continue
		}
		return take(port), nil
	}
	return 0, provider.Retryable(fmt.Errorf("%s: no free port left in %d-%d: %w", Name, p.ports.from, p.ports.to, provider.ErrProvisionFailed))
}

// free reports whether nothing listens on the port now.
func free(port int) bool {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func release(ports map[int]int) {
	reserved.Lock()
	defer reserved.Unlock()
	for _, port := range ports {
		delete(reserved.by, port)
	}
}

// releaseTenant releases every port given to the tenant.
func releaseTenant(tenantID string) {
	reserved.Lock()
	defer reserved.Unlock()
	for port, owner := range reserved.by {
		if owner == tenantID {
			delete(reserved.by, port)
		}
	}
}

// reserveRecorded reserves the ports the states in dir record, so that a
// restarted provider gives none of them to another tenant while its
// process is down.
func reserveRecorded(p *Provider) {
	entries, _ := os.ReadDir(p.settings.StateDir)
	reserved.Lock()
	defer reserved.Unlock()
	for _, e := range entries {
		st, err := p.load(e.Name())
		if err != nil {
			continue
		}
		for _, pr := range st.Containers {
			for _, port := range pr.Ports {
				reserved.by[port] = st.TenantID
			}
		}
	}
}

// start starts d's process for the tenant, in a process group of its own,
// its output appended to the container's log.
func (p *Provider) start(tenantID string, d desired) (proc, error) {
	logf, err := os.OpenFile(filepath.Join(p.tenantDir(tenantID), d.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return proc{}, provider.Retryable(fmt.Errorf("%s: open the log of %s: %w", Name, d.name, err))
	}
	defer logf.Close()
	cmd := exec.Command(d.exe, d.argv...)
	cmd.Dir = p.tenantDir(tenantID)
	cmd.Env = environ(d.env)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return proc{}, fmt.Errorf("%s: start %s of tenant %s: %w: %w", Name, d.name, tenantID, provider.ErrProvisionFailed, err)
	}
	start, _, err := procStat(cmd.Process.Pid)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return proc{}, provider.Retryable(fmt.Errorf("%s: %s of tenant %s exited at once: %w", Name, d.name, tenantID, provider.ErrProvisionFailed))
	}
	pr := proc{Name: d.name, PID: cmd.Process.Pid, Start: start, Ports: d.ports}
	p.sup.watch(tenantID, pr, cmd)
	return pr, nil
}

func environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// stop ends the process and what it forked: SIGTERM to its group, then
// SIGKILL after the stop timeout. The supervisor is told first, so that
// the exit of a process it waits for is not taken for a crash.
func (p *Provider) stop(pr proc) {
	if !pr.alive() {
		return
	}
	t, ok := targetOf(pr.PID)
	if !ok {
		return
	}
	p.sup.stopping(pr.PID)
	p.end(t)
}

// end signals the target SIGTERM and, when anything of it is left after
// the stop timeout, SIGKILL, and waits a little for it to go.
func (p *Provider) end(t target) {
	_ = t.signal(syscall.SIGTERM)
	deadline := time.Now().Add(time.Duration(p.settings.StopTimeout))
	for t.alive() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = t.signal(syscall.SIGKILL)
	for i := 0; t.alive() && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// find is the live process of the tenant's container: the recorded one,
// else one that carries the tenant's marks (started again by hand, say).
func find(tenantID string, pr *proc) (*proc, *running) {
	if pr != nil && pr.alive() {
		if r, err := readRunning(pr.PID); err == nil {
			return pr, r
		}
	}
	if pr == nil {
		return nil, nil
	}
	for _, pid := range marked(tenantID, pr.Name) {
		start, _, err := procStat(pid)
		if err != nil {
			continue
		}
		if r, err := readRunning(pid); err == nil {
			found := *pr
			found.PID, found.Start = pid, start
			return &found, r
		}
	}
	return nil, nil
}

// marked lists the processes that carry the marks of the tenant's
// container (all of the tenant's when container is empty).
func marked(tenantID, container string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	want := []byte(envTenant + "=" + tenantID + "\x00")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !containsEnv(env, want) {
			continue
		}
		if container != "" && !containsEnv(env, []byte(envContainer+"="+container+"\x00")) {
			continue
		}
		if _, state, err := procStat(pid); err == nil && state != 'Z' {
			pids = append(pids, pid)
		}
	}
	return pids
}

func containsEnv(environ, kv []byte) bool {
	return strings.HasPrefix(string(environ), string(kv)) || strings.Contains(string(environ), "\x00"+string(kv))
}

// matches reports whether what runs is what d asks for.
func (d desired) matches(r *running) bool {
	return r.exe == d.exe && slices.Equal(argsOf(r), d.argv) && maps.Equal(r.env, d.env)
}

func argsOf(r *running) []string {
	if len(r.argv) == 0 {
		return nil
	}
	return r.argv[1:]
}

// answers reports whether the port accepts a connection now.
func answers(ctx context.Context, port int) bool {
	dialer := net.Dialer{Timeout: 300 * time.Millisecond}
	c, err := dialer.DialContext(ctx, "tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Processes lists the processes that carry the marks of the tenant's
// containers, read from /proc: what runs for the tenant, whatever the
// state says (for operators' tools and tests).
func Processes(tenantID string) []int { return marked(tenantID, "") }
