package process

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// supervisor waits for the processes this provider started, restarts those
// that exit on their own (with backoff), and tells subscribers about
// tenants whose processes exited or changed.
type supervisor struct {
	p *Provider

	mu   sync.Mutex
	subs map[int]func(string)
	next int
	// specs are the last specs this provider ran each tenant with: a
	// restart needs their secrets, which are never written to disk.
	specs map[string]*provider.TenantComputeSpec
	// children are the processes this provider started and waits for;
	// stops those of them it is stopping: their exits are not crashes.
	children map[int]bool
	stops    map[int]bool
	// exits are the last exit of each container, in words.
	exits  map[string]string
	done   chan struct{}
	closed bool
}

// restartMin and restartMax bound the backoff between restarts of a
// process that keeps exiting.
const (
	restartMin = time.Second
	restartMax = 30 * time.Second
)

func newSupervisor(p *Provider) *supervisor {
	s := &supervisor{p: p, subs: map[int]func(string){}, specs: map[string]*provider.TenantComputeSpec{},
		children: map[int]bool{}, stops: map[int]bool{}, exits: map[string]string{}, done: make(chan struct{})}
	go s.look()
	return s
}

// lookEvery is how often the supervisor looks at the processes it did not
// start (those of an earlier plugin, adopted): their exits reach no Wait
// of this one.
const lookEvery = time.Second

// look tells subscribers about tenants whose recorded processes stopped
// running since the last look, until the supervisor closes.
func (s *supervisor) look() {
	seen := map[string]bool{} // tenant/container → ran at the last look
	tick := time.NewTicker(lookEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		entries, _ := os.ReadDir(s.p.settings.StateDir)
		for _, e := range entries {
			st, err := s.p.load(e.Name())
			if err != nil {
				continue
			}
			for _, pr := range st.Containers {
				key := st.TenantID + "/" + pr.Name
				alive := pr.alive()
				if seen[key] && !alive {
					s.notify(st.TenantID)
				}
				seen[key] = alive
			}
		}
	}
}

func (s *supervisor) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
}

// subscribe calls fn with each tenant whose processes change, until the
// returned function is called.
func (s *supervisor) subscribe(fn func(string)) (stop func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.next
	s.next++
	s.subs[id] = fn
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subs, id)
	}
}

func (s *supervisor) notify(tenantID string) {
	s.mu.Lock()
	subs := make([]func(string), 0, len(s.subs))
	for _, fn := range s.subs {
		subs = append(subs, fn)
	}
	s.mu.Unlock()
	for _, fn := range subs {
		fn(tenantID)
	}
}

func (s *supervisor) remember(spec *provider.TenantComputeSpec) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs[spec.TenantID] = spec.Clone()
}

func (s *supervisor) forget(tenantID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.specs, tenantID)
}

// stopping records that the provider stops pid, when it is one of its
// children (only their exits reach it).
func (s *supervisor) stopping(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.children[pid] {
		s.stops[pid] = true
	}
}

// exitMessage is how the container's process last ended, or a default.
func (s *supervisor) exitMessage(tenantID, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.exits[tenantID+"/"+name]; ok {
		return m
	}
	return "its process does not run"
}

// watch waits for the process pr of cmd and handles its exit.
func (s *supervisor) watch(tenantID string, pr proc, cmd *exec.Cmd) {
	s.mu.Lock()
	s.children[pr.PID] = true
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		s.exited(tenantID, pr, cmd.ProcessState, err)
	}()
}

// exited records how pr ended and, when it exited on its own with a
// status, restarts it after a backoff.
func (s *supervisor) exited(tenantID string, pr proc, ps *os.ProcessState, err error) {
	s.mu.Lock()
	stopped := s.stops[pr.PID]
	delete(s.stops, pr.PID)
	delete(s.children, pr.PID)
	closed := s.closed
	s.mu.Unlock()
	if stopped || closed || ps == nil {
		return
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	code := ps.ExitCode()
	msg := fmt.Sprintf("exited with code %d", code)
	killed := ws.Signaled()
	if killed {
		code = 128 + int(ws.Signal())
		msg = fmt.Sprintf("killed by signal %s (exit code %d): not restarted; landlord's repair starts it again", ws.Signal(), code)
	}
	s.mu.Lock()
	s.exits[tenantID+"/"+pr.Name] = msg
	s.mu.Unlock()
	restarts := s.record(tenantID, pr, code, killed)
	s.p.log.Warn("process exited", slog.String("tenant_id", tenantID), slog.String("container", pr.Name), slog.Int("exit_code", code))
	s.notify(tenantID)
	if killed || restarts < 0 {
		return
	}
	wait := min(restartMin<<min(restarts, 5), restartMax)
	time.AfterFunc(wait, func() { s.restart(tenantID, pr) })
}

// record writes the exit to the tenant's state and returns the container's
// restart count, or -1 when the process is no longer the container's.
func (s *supervisor) record(tenantID string, pr proc, code int, killed bool) int {
	defer s.p.lock(tenantID)()
	st, err := s.p.load(tenantID)
	if err != nil {
		return -1
	}
	rec := st.container(pr.Name)
	if rec == nil || rec.PID != pr.PID || rec.Start != pr.Start {
		return -1
	}
	rec.ExitCode, rec.Stopped = &code, killed
	if err := s.p.save(st); err != nil {
		s.p.log.Error("cannot record a process's exit", slog.String("tenant_id", tenantID), slog.String("error", err.Error()))
	}
	return rec.Restarts
}

// restart starts the container's process again, when it is still the one
// that exited and the tenant's spec is known.
func (s *supervisor) restart(tenantID string, pr proc) {
	s.mu.Lock()
	spec, known := s.specs[tenantID]
	closed := s.closed
	s.mu.Unlock()
	if !known || closed {
		return
	}
	defer s.p.lock(tenantID)()
	st, err := s.p.load(tenantID)
	if err != nil {
		return
	}
	rec := st.container(pr.Name)
	if rec == nil || rec.PID != pr.PID || rec.Start != pr.Start || rec.alive() {
		return // replaced, or repaired meanwhile
	}
	want, err := s.p.desire(spec, st, true)
	if err != nil {
		return
	}
	for _, d := range want {
		if d.name != pr.Name {
			continue
		}
		next, err := s.p.start(tenantID, d)
		if err != nil {
			s.p.log.Error("cannot restart a process", slog.String("tenant_id", tenantID), slog.String("container", pr.Name), slog.String("error", err.Error()))
			return
		}
		next.Restarts, next.ExitCode = rec.Restarts+1, rec.ExitCode
		*rec = next
		if err := s.p.save(st); err == nil {
			s.p.log.Info("process restarted", slog.String("tenant_id", tenantID), slog.String("container", pr.Name), slog.Int("restarts", next.Restarts))
		}
		s.notify(tenantID)
	}
}
