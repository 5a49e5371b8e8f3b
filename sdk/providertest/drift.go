package providertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Tamper is one change an operator makes to a tenant's running workload
// with the platform's own tools, behind landlord's back: scale it, change
// its image or environment, delete one of its objects, stop or move an
// instance, purge a secret, detach a network.
type Tamper struct {
	// Name names the hook in the subtest: "scale", "image", "delete-service".
	Name string
	// Path is the drift path Inspect must report after Do, or a prefix of
	// it at a "/" ("deployment/replicas", "service"). Empty when the
	// platform undoes the change by itself (a deleted Pod is replaced) and
	// only the workload's recovery is checked.
	Path string
	// Do makes the change, and returns once the platform has it.
	Do func(t *testing.T, tenantID string)
	// NotifyWithin bounds how long a ChangeNotifier may take to report
	// the change; zero means 5s. A change the provider hears of only
	// through what the platform does about it (a deleted Pod, seen when
	// the Deployment's status changes as its ReplicaSet replaces it) may
	// need longer on a loaded machine.
	NotifyWithin time.Duration
}

// notifyWithin bounds how long a ChangeNotifier may take to report a
// tampered workload, unless the Tamper says otherwise.
const notifyWithin = 5 * time.Second

// testInspect: Inspect compares what runs with the spec it is given. A
// workload as Provision left it shows no drift (defaults the platform fills
// in are not drift), another spec shows its differences, an unknown tenant
// is ErrTenantNotFound, no secret appears, and a restarted provider sees
// the same.
func (s *suite) testInspect(t *testing.T) {
	d := s.detector(t)
	if _, err := d.Inspect(context.Background(), s.spec(t, tenant{id: newID(), name: "conf-unknown"}, 0)); !errors.Is(err, provider.ErrTenantNotFound) {
		t.Errorf("Inspect of an unknown tenant = %v, want an error wrapping ErrTenantNotFound", err)
	}
	tn := s.newTenant(t)
	v0, v1 := s.spec(t, tn, 0), s.spec(t, tn, 1)
	s.provision(t, v0)
	s.waitRunning(t, v0)
	in := s.waitNoDrift(t, d, v0, "after Provision")
	s.noSecret(t, "Inspect", in)
	if !runs(in.Status, v0) {
		t.Errorf("Inspect's status does not show the running workload: %s", describe(in.Status))
	}

	other, err := d.Inspect(context.Background(), v1)
	if err != nil {
		t.Fatalf("Inspect with another spec: %v", err)
	}
	s.noSecret(t, "Inspect with another spec", other)
	if !slices.ContainsFunc(other.Drift, func(d provider.Drift) bool { return d.Kind == provider.DriftImage }) {
		t.Errorf("Inspect with a spec of another image reports no image drift: %v", other.Drift)
	}
	for _, d := range other.Drift {
		if d.Path == "" || !slices.Contains(provider.DriftKinds, d.Kind) {
			t.Errorf("drift %+v: want a path and one of the kinds %v", d, provider.DriftKinds)
		}
	}

	if s.h.Restart != nil {
		restarted := &suite{h: s.h, p: s.h.Restart(t), manager: s.manager, secret: s.secret}
		restarted.waitNoDrift(t, restarted.detector(t), v0, "after a restart")
	}
	s.update(t, v1)
	s.waitRunning(t, v1)
	s.waitNoDrift(t, d, v1, "after Update")
}

// testTamper applies each of the harness's tampers in turn to one running
// tenant and checks that the provider notices (a ChangeNotifier says so
// within notifyWithin), that Inspect reports the drift at its path without
// changing anything (a tenant whose policy is observe is left as found),
// that Update puts the workload back to its spec, and that its endpoints
// then answer. It never accepts a status that calls the workload running,
// with no drift, at an endpoint that does not answer.
func (s *suite) testTamper(t *testing.T) {
	if len(s.h.Tampers) == 0 {
		t.Skip("the harness has no tamper hooks (Harness.Tampers)")
	}
	d := s.detector(t)
	tn := s.newTenant(t)
	spec := s.spec(t, tn, 0)
	s.provision(t, spec)
	s.waitRunning(t, spec)
	s.waitNoDrift(t, d, spec, "after Provision")

	heard := s.listen(t)
	for _, tamper := range s.h.Tampers {
		t.Run(tamper.Name, func(t *testing.T) {
			start := time.Now()
			tamper.Do(t, tn.id)
			done := time.Since(start)
			if heard != nil {
				if poll.Eventually(t, "the provider's change watch reports the tenant after the change", cmp.Or(tamper.NotifyWithin, notifyWithin), func() (bool, string) {
					return !heard.first(tn.id, start).IsZero(), "no notification"
				}) {
					t.Logf("notified %s after the change", heard.first(tn.id, start).Sub(start).Round(time.Millisecond))
				}
			}
			if tamper.Path != "" {
				found := s.waitDrift(t, d, spec, tamper.Path)
				t.Logf("drift %q seen %s after the change (the change took %s)", provider.Summarize(found), time.Since(start).Round(time.Millisecond), done.Round(time.Millisecond))
				again, err := d.Inspect(context.Background(), spec)
				if err != nil && !errors.Is(err, provider.ErrTenantNotFound) {
					t.Fatalf("Inspect again: %v", err)
				}
				if err == nil && !hasDrift(again.Drift, tamper.Path) {
					t.Errorf("a second Inspect no longer reports %s: Inspect changed the platform, or the platform undid the change (%v)", tamper.Path, again.Drift)
				}
			}
			repairStart := time.Now()
			s.repair(t, spec)
			s.waitRunning(t, spec)
			in := s.waitNoDrift(t, d, spec, "after the repair")
			s.checkEndpoints(t, in.Status)
			t.Logf("repaired %s after the Update began, %s after the change", time.Since(repairStart).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		})
	}
}

func (s *suite) detector(t *testing.T) provider.DriftDetector {
	t.Helper()
	d, ok := s.p.(provider.DriftDetector)
	if !ok {
		t.Fatalf("provider %s does not implement provider.DriftDetector: changes made behind its back go unseen", s.p.Name())
	}
	return d
}

// repair does what the controller does for a drifted tenant: Update, or
// Provision when the workload is gone.
func (s *suite) repair(t *testing.T, spec *provider.TenantComputeSpec) {
	t.Helper()
	_, err := s.p.Update(context.Background(), spec.TenantID, spec)
	if errors.Is(err, provider.ErrTenantNotFound) {
		s.provision(t, spec)
		return
	}
	if err != nil {
		t.Fatalf("Update to repair drift: %v", err)
	}
}

// waitDrift polls Inspect until it reports drift at path, and returns what
// it reported. A status that says the workload runs with no drift at all
// must have endpoints that answer.
func (s *suite) waitDrift(t *testing.T, d provider.DriftDetector, spec *provider.TenantComputeSpec, path string) []provider.Drift {
	t.Helper()
	var found []provider.Drift
	var silent time.Time // since when a clean status's endpoint has not answered
	poll.Until(t, "Inspect reports drift at "+path, s.h.readyTimeout(), func() (bool, string) {
		in, err := d.Inspect(context.Background(), spec)
		switch {
		case errors.Is(err, provider.ErrTenantNotFound):
			if path == "workload" {
				found = []provider.Drift{{Path: "workload", Kind: provider.DriftState, Expected: "running"}}
				return true, ""
			}
			return false, "error " + err.Error()
		case err != nil:
			t.Fatalf("Inspect after the change: %v", err)
		}
		s.noSecret(t, "Inspect after the change", in)
		if hasDrift(in.Drift, path) {
			found = in.Drift
			return true, ""
		}
		if len(in.Drift) == 0 && in.Status.State == provider.StateRunning {
			switch err := s.answers(in.Status); {
			case err == nil:
				silent = time.Time{}
			case silent.IsZero():
				silent = time.Now()
			case time.Since(silent) > s.answerGrace():
				t.Fatalf("Inspect has reported the workload running with no drift for %s, but %v", s.answerGrace(), err)
			}
		}
		return false, fmt.Sprintf("drift %v, status %s", in.Drift, describe(in.Status))
	})
	return found
}

// waitNoDrift polls Inspect until it reports no drift and a running
// workload.
func (s *suite) waitNoDrift(t *testing.T, d provider.DriftDetector, spec *provider.TenantComputeSpec, when string) *provider.Inspection {
	t.Helper()
	var clean *provider.Inspection
	poll.Until(t, "Inspect "+when+" reports no drift", s.h.readyTimeout(), func() (bool, string) {
		in, err := d.Inspect(context.Background(), spec)
		if err != nil {
			t.Fatalf("Inspect %s: %v", when, err)
		}
		if in == nil || in.Status == nil {
			t.Fatalf("Inspect %s returned no status", when)
		}
		if len(in.Drift) != 0 || in.Status.State != provider.StateRunning {
			return false, fmt.Sprintf("drift %v (status %s)", in.Drift, describe(in.Status))
		}
		clean = in
		return true, ""
	})
	return clean
}

// answerGrace is how long a status may claim all is well while an
// endpoint does not answer: a provider that reads through a cache (an
// informer's) learns of a change a moment after the platform made it,
// and a platform's data path (kube-proxy's rules) follows its API a
// moment later. Longer is a status that lies. A quarter of the ready
// timeout when that is shorter, so that the check can fail within it.
func (s *suite) answerGrace() time.Duration {
	return min(5*time.Second, s.h.readyTimeout()/4)
}

// answers says which TCP endpoint of a status that claims all is well
// does not accept a connection (with Harness.DialEndpoints).
func (s *suite) answers(st *provider.ComputeStatus) error {
	if !s.h.DialEndpoints {
		return nil
	}
	for _, e := range st.Endpoints {
		if e.Protocol != "" && e.Protocol != workload.ProtocolTCP {
			continue
		}
		c, err := s.h.dial(e.Address)
		if errors.Is(err, ErrUnreachable) {
			continue
		}
		if err != nil {
			return fmt.Errorf("endpoint %s %d/tcp at %s does not answer: %w", e.Container, e.ContainerPort, e.Address, err)
		}
		_ = c.Close()
	}
	return nil
}

// hasDrift reports whether drift has an entry at path or below it.
func hasDrift(drift []provider.Drift, path string) bool {
	return slices.ContainsFunc(drift, func(d provider.Drift) bool {
		return d.Path == path || strings.HasPrefix(d.Path, path+"/")
	})
}

// heard records the change notifications of a ChangeNotifier.
type heard struct {
	mu   sync.Mutex
	seen map[string][]time.Time
}

// listen runs the provider's change watch for the rest of the test, or
// returns nil when the provider is not a ChangeNotifier.
func (s *suite) listen(t *testing.T) *heard {
	n, ok := s.p.(provider.ChangeNotifier)
	if !ok {
		t.Logf("provider %s is not a ChangeNotifier: drift is found at the controller's resync only", s.p.Name())
		return nil
	}
	h := &heard{seen: map[string][]time.Time{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := n.WatchChanges(ctx, h.note); err != nil && ctx.Err() == nil {
			t.Errorf("WatchChanges: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func (h *heard) note(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seen[id] = append(h.seen[id], time.Now())
}

// first returns the time of the first notification about id at or after
// since, or the zero time.
func (h *heard) first(id string, since time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, at := range h.seen[id] {
		if !at.Before(since) {
			return at
		}
	}
	return time.Time{}
}
