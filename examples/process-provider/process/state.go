package process

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// state is what the provider wrote for a tenant: what should run, and the
// processes that do.
type state struct {
	TenantID   string `json:"tenant_id"`
	TenantName string `json:"tenant_name"`
	Generation int64  `json:"generation"`
	// Hash is the spec's fingerprint: equal hashes mean nothing to do.
	Hash string `json:"hash"`
	// Workload is the spec's workload without its secrets.
	Workload workload.Workload `json:"workload"`
	// Secrets are the fingerprints of the secret values, by
	// container/name: a change is seen, and no secret is written.
	Secrets    map[string]string `json:"secrets,omitempty"`
	Containers []proc            `json:"containers"`
	Created    time.Time         `json:"created"`
	Updated    time.Time         `json:"updated"`
}

// proc is one container's process.
type proc struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	// Start is the process's start time in clock ticks since boot
	// (/proc/PID/stat), which tells it from a later process of the same
	// pid.
	Start uint64 `json:"start"`
	// Ports are the machine's ports the container's ports got, by
	// container port.
	Ports map[int]int `json:"ports,omitempty"`
	// Restarts counts restarts after exits; ExitCode is the last exit's.
	Restarts int  `json:"restarts"`
	ExitCode *int `json:"exit_code,omitempty"`
	// Stopped says the process was killed by a signal it did not send
	// itself (an operator's kill): it is not restarted.
	Stopped bool `json:"stopped,omitempty"`
}

const stateFile = "state.json"

// load reads the tenant's state; provider.ErrTenantNotFound when there is
// none.
func (p *Provider) load(tenantID string) (*state, error) {
	b, err := os.ReadFile(filepath.Join(p.tenantDir(tenantID), stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: tenant %s: %w", Name, tenantID, provider.ErrTenantNotFound)
	}
	if err != nil {
		return nil, provider.Retryable(fmt.Errorf("%s: read the state of tenant %s: %w", Name, tenantID, err))
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return nil, fmt.Errorf("%s: the state of tenant %s is corrupt (%w); delete %s to start over", Name, tenantID, err, p.tenantDir(tenantID))
	}
	return &st, nil
}

// save writes the tenant's state atomically.
func (p *Provider) save(st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	dir := p.tenantDir(st.TenantID)
	tmp, err := os.CreateTemp(dir, ".state-*")
	if err != nil {
		return provider.Retryable(fmt.Errorf("%s: write the state of tenant %s: %w", Name, st.TenantID, err))
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if err := errors.Join(err, tmp.Close()); err != nil {
		return provider.Retryable(fmt.Errorf("%s: write the state of tenant %s: %w", Name, st.TenantID, err))
	}
	if err := os.Rename(tmp.Name(), filepath.Join(dir, stateFile)); err != nil {
		return provider.Retryable(fmt.Errorf("%s: write the state of tenant %s: %w", Name, st.TenantID, err))
	}
	return nil
}

// record keeps spec's workload, its secrets (their fingerprints, in
// recorded) apart: a secret value does not read back from JSON.
func (st *state) record(recorded *provider.TenantComputeSpec) {
	st.Workload = recorded.Workload
	st.Secrets = map[string]string{}
	for _, s := range recorded.Secrets {
		st.Secrets[s.Container+"/"+s.Name] = s.Value.Reveal()
	}
	st.Workload.Secrets = nil
}

// spec is the spec the state records, as recorded (secret fingerprints for
// values), for provider.Diff.
func (st *state) spec() *provider.TenantComputeSpec {
	out := &provider.TenantComputeSpec{TenantID: st.TenantID, Workload: st.Workload.Clone()}
	for _, key := range slices.Sorted(maps.Keys(st.Secrets)) {
		c, name, _ := strings.Cut(key, "/")
		out.Secrets = append(out.Secrets, workload.SecretReference{Container: c, Name: name, Value: workload.NewSecretValue(st.Secrets[key])})
	}
	return out
}

// wasSecret reports whether an environment variable of that name held a
// secret of any container in the recorded spec.
func (st *state) wasSecret(name string) bool {
	for key := range st.Secrets {
		if _, n, _ := strings.Cut(key, "/"); n == name {
			return true
		}
	}
	return false
}

// container is the state of the container called name, or nil.
func (st *state) container(name string) *proc {
	for i := range st.Containers {
		if st.Containers[i].Name == name {
			return &st.Containers[i]
		}
	}
	return nil
}

// alive reports whether the process is the one started (same pid, same
// start time) and has not exited.
func (pr *proc) alive() bool {
	if pr.PID <= 0 {
		return false
	}
	start, state, err := procStat(pr.PID)
	return err == nil && start == pr.Start && state != 'Z' && state != 'X'
}

// statFields are the fields of /proc/PID/stat after the command (field 2),
// which is in parentheses and may hold spaces: fields[0] is field 3.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return nil, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	fields := strings.Fields(string(b[i+2:]))
	if len(fields) < 20 {
		return nil, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return fields, nil
}

// procStat is a process's start time (field 22) and state (field 3).
func procStat(pid int) (start uint64, state byte, err error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, 0, err
	}
	start, err = strconv.ParseUint(fields[19], 10, 64)
	return start, fields[0][0], err
}

// running is what runs as the process now: its executable, arguments and
// environment, read from /proc.
type running struct {
	exe  string
	argv []string
	env  map[string]string
}

func readRunning(pid int) (*running, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	exe, err := os.Readlink(dir + "/exe")
	if err != nil {
		return nil, err
	}
	cmdline, err := os.ReadFile(dir + "/cmdline")
	if err != nil {
		return nil, err
	}
	environ, err := os.ReadFile(dir + "/environ")
	if err != nil {
		return nil, err
	}
	r := &running{exe: strings.TrimSuffix(exe, " (deleted)"), argv: split0(cmdline), env: map[string]string{}}
	for _, kv := range split0(environ) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			r.env[k] = v
		}
	}
	return r, nil
}

func split0(b []byte) []string {
	b = bytes.TrimSuffix(b, []byte{0})
	if len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// pgidOf is the process group of pid (field 5).
func pgidOf(pid int) (int, error) {
	fields, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(fields[2])
}

// target is what a stop signals: the process group a process leads (the
// provider starts each container's process in a group of its own, so
// that what it forks is stopped with it), or the process alone when it
// leads none (one started by hand in someone else's group, whose other
// members are not the tenant's).
type target int

func targetOf(pid int) (target, bool) {
	pgid, err := pgidOf(pid)
	if err != nil {
		return 0, false
	}
	if pgid == pid {
		return target(-pid), true
	}
	return target(pid), true
}

func (t target) signal(sig syscall.Signal) error { return syscall.Kill(int(t), sig) }

// alive reports whether anything of the target is left.
func (t target) alive() bool { return t.signal(0) == nil }
