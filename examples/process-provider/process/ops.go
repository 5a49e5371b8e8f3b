package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Provision starts the tenant's processes, or converges those that run to
// spec. A new tenant's processes are removed again when it fails.
func (p *Provider) Provision(ctx context.Context, spec *provider.TenantComputeSpec) (*provider.ProvisionResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	defer p.lock(spec.TenantID)()
	st, err := p.load(spec.TenantID)
	created := errors.Is(err, provider.ErrTenantNotFound)
	switch {
	case created:
		if err := os.MkdirAll(p.tenantDir(spec.TenantID), 0o700); err != nil {
			return nil, provider.Retryable(fmt.Errorf("%s: create the directory of tenant %s: %w", Name, spec.TenantID, err))
		}
		st = &state{TenantID: spec.TenantID, TenantName: spec.TenantName, Created: time.Now().UTC()}
	case err != nil:
		return nil, err
	}
	changed, err := p.converge(ctx, spec, st)
	if err != nil {
		if created {
			p.remove(spec.TenantID) // atomic: nothing of a failed first Provision stays
		}
		return nil, err
	}
	p.log.Info("process provision", slog.String("tenant_id", spec.TenantID), slog.Bool("created", created), slog.Int("restarted", changed))
	return &provider.ProvisionResult{TenantID: spec.TenantID, ProviderType: Name, Status: provider.ProvisionStatusSuccess,
		ResourceIDs: resourceIDs(st), Endpoints: p.endpoints(ctx, st), ProvisionedAt: st.Created}, nil
}

// Update converges the tenant's processes to spec, restarting those whose
// executable, arguments, environment or ports change.
func (p *Provider) Update(ctx context.Context, tenantID string, spec *provider.TenantComputeSpec) (*provider.UpdateResult, error) {
	if err := p.Validate(ctx, spec); err != nil {
		return nil, err
	}
	defer p.lock(tenantID)()
	st, err := p.load(tenantID)
	if err != nil {
		return nil, err
	}
	changes := provider.Diff(st.spec(), p.recorded(spec))
	if _, err := p.converge(ctx, spec, st); err != nil {
		return nil, err
	}
	p.log.Info("process update", slog.String("tenant_id", tenantID), slog.Int("changes", len(changes)))
	return &provider.UpdateResult{TenantID: tenantID, ProviderType: Name, Status: provider.ProvisionStatusSuccess, Changes: changes,
		ResourceIDs: resourceIDs(st), Endpoints: p.endpoints(ctx, st), UpdatedAt: st.Updated}, nil
}

// recorded is spec as the state records it: secret values replaced by
// their fingerprints, so that a changed secret shows as a change and no
// secret is written to disk.
func (p *Provider) recorded(spec *provider.TenantComputeSpec) *provider.TenantComputeSpec {
	out := &provider.TenantComputeSpec{TenantID: spec.TenantID, Workload: spec.Workload.Clone()}
	for i, s := range out.Secrets {
		out.Secrets[i].Value = workload.NewSecretValue(provider.Fingerprint(p.hashKey, []byte(s.Value.Reveal())))
	}
	return out
}

// converge makes the tenant's processes those spec asks for: it keeps a
// process that runs as asked (adopting one started again by hand), and
// stops and starts the others; it stops what spec no longer has and strays
// that carry the tenant's marks. The state is saved after each start, so
// that a crash never loses a process. It returns how many it started.
func (p *Provider) converge(ctx context.Context, spec *provider.TenantComputeSpec, st *state) (int, error) {
	want, err := p.desire(spec, st, true)
	if err != nil {
		return 0, err
	}
	st.TenantName, st.Generation, st.Hash = spec.TenantName, spec.Generation, spec.Hash()
	st.record(p.recorded(spec))
	st.Updated = time.Now().UTC()
	p.sup.remember(spec)
	started := 0
	kept := map[int]bool{}
	next := make([]proc, 0, len(want))
	for _, d := range want {
		if err := ctx.Err(); err != nil {
			return started, provider.Retryable(fmt.Errorf("%s: provision tenant %s: %w", Name, spec.TenantID, err))
		}
		prev := st.container(d.name)
		if pr, r := find(spec.TenantID, prev); pr != nil && d.matches(r) && samePorts(pr.Ports, d.ports) {
			kept[pr.PID] = true
			next = append(next, *pr)
			continue
		}
		p.stopAll(spec.TenantID, d.name, kept)
		pr, err := p.start(spec.TenantID, d)
		if prev != nil {
			pr.Restarts = prev.Restarts
		}
		if err != nil {
			st.Containers = slices.Concat(next, others(st.Containers, next))
			_ = p.save(st) // what did start, for Destroy to find
			return started, err
		}
		kept[pr.PID] = true
		next = append(next, pr)
		started++
		st.Containers = slices.Concat(next, others(st.Containers, next))
		if err := p.save(st); err != nil {
			return started, err
		}
	}
	for _, pr := range others(st.Containers, next) {
		p.stop(pr)
		release(pr.Ports)
	}
	p.stopAll(spec.TenantID, "", kept) // strays: what carries the marks and is not kept
	st.Containers = next
	return started, p.save(st)
}

// stopAll stops the processes that carry the marks of the tenant's
// container (every container when name is empty), with what they forked,
// except those kept and what they forked.
func (p *Provider) stopAll(tenantID, name string, kept map[int]bool) {
	keptGroups := map[int]bool{}
	for pid := range kept {
		if pgid, err := pgidOf(pid); err == nil {
			keptGroups[pgid] = true
		}
	}
	pids := marked(tenantID, name)
	targets := map[target]int{}
	for _, pid := range pids {
		pgid, err := pgidOf(pid)
		if err != nil || kept[pid] || keptGroups[pgid] {
			continue
		}
		if pgid != pid && slices.Contains(pids, pgid) {
			continue // a process its group's leader forked: stopped with the group
		}
		if t, ok := targetOf(pid); ok {
			targets[t] = pid
		}
	}
	for t, pid := range targets {
		p.sup.stopping(pid)
		p.end(t)
	}
}

// others are the processes of list whose containers next does not have.
func others(list, next []proc) []proc {
	var out []proc
	for _, pr := range list {
		if !slices.ContainsFunc(next, func(n proc) bool { return n.Name == pr.Name }) {
			out = append(out, pr)
		}
	}
	return out
}

func samePorts(a, b map[int]int) bool { return maps.Equal(a, b) || (len(a) == 0 && len(b) == 0) }

// Destroy stops the tenant's processes, with what they forked, and
// removes its directory. It fails, retryably, while a process of the
// tenant is left.
func (p *Provider) Destroy(ctx context.Context, tenantID string) error {
	defer p.lock(tenantID)()
	st, err := p.load(tenantID)
	if err != nil && !errors.Is(err, provider.ErrTenantNotFound) {
		return err
	}
	if st != nil {
		for _, pr := range st.Containers {
			p.stop(pr)
		}
	}
	p.stopAll(tenantID, "", nil)
	if left := marked(tenantID, ""); len(left) > 0 {
		return provider.Retryable(fmt.Errorf("%s: destroy tenant %s: processes %v are left after SIGKILL", Name, tenantID, left))
	}
	p.sup.forget(tenantID)
	releaseTenant(tenantID)
	if err := os.RemoveAll(p.tenantDir(tenantID)); err != nil {
		return fmt.Errorf("%s: remove the directory of tenant %s: %w", Name, tenantID, err)
	}
	if st != nil {
		p.log.Info("process destroy", slog.String("tenant_id", tenantID))
	}
	return nil
}

// remove removes what a failed first Provision started.
func (p *Provider) remove(tenantID string) {
	p.stopAll(tenantID, "", nil)
	p.sup.forget(tenantID)
	releaseTenant(tenantID)
	_ = os.RemoveAll(p.tenantDir(tenantID))
}

// GetStatus reads the tenant's processes live: a container runs when its
// process does and its ports accept connections.
func (p *Provider) GetStatus(ctx context.Context, tenantID string) (*provider.ComputeStatus, error) {
	st, err := p.load(tenantID)
	if err != nil {
		return nil, err
	}
	return p.status(ctx, st), nil
}

func (p *Provider) status(ctx context.Context, st *state) *provider.ComputeStatus {
	out := &provider.ComputeStatus{TenantID: st.TenantID, ProviderType: Name, Health: provider.HealthUnknown,
		Generation: st.Generation, LastUpdated: st.Updated}
	running, starting := 0, 0
	for _, c := range st.Workload.Containers {
		cs := provider.ContainerStatus{Name: c.Name, Image: c.Image, State: provider.ContainerExited, Health: provider.HealthUnknown}
		rec := st.container(c.Name)
		pr, _ := find(st.TenantID, rec)
		if rec != nil {
			cs.RestartCount, cs.ExitCode = rec.Restarts, rec.ExitCode
		}
		switch {
		case pr == nil:
			cs.Message = p.sup.exitMessage(st.TenantID, c.Name)
		case !allAnswer(ctx, pr.Ports):
			cs.State, cs.ID = provider.ContainerRunning, strconv.Itoa(pr.PID)
			cs.Message = "starting: its ports do not accept connections yet"
			starting++
		default:
			cs.State, cs.ID = provider.ContainerRunning, strconv.Itoa(pr.PID)
			running++
		}
		out.Containers = append(out.Containers, cs)
	}
	n := len(st.Workload.Containers)
	switch {
	case running == n:
		out.State = provider.StateRunning
		out.Endpoints = p.endpoints(ctx, st)
	case running+starting == n:
		out.State, out.Message = provider.StatePending, "starting"
	case running+starting > 0:
		out.State, out.Message = provider.StateDegraded, "some processes do not run"
	default:
		out.State, out.Message = provider.StateStopped, "no process runs"
	}
	return out
}

func allAnswer(ctx context.Context, ports map[int]int) bool {
	for _, port := range ports {
		if !answers(ctx, port) {
			return false
		}
	}
	return true
}

// endpoints are the tenant's ports that accept connections now.
func (p *Provider) endpoints(ctx context.Context, st *state) []provider.Endpoint {
	var out []provider.Endpoint
	for _, c := range st.Workload.Containers {
		rec := st.container(c.Name)
		if rec == nil {
			continue
		}
		for _, pm := range c.Ports {
			port := rec.Ports[pm.ContainerPort]
			if port == 0 || !answers(ctx, port) {
				continue
			}
			out = append(out, provider.Endpoint{Container: c.Name, Name: pm.Name, ContainerPort: pm.ContainerPort,
				Protocol: pm.Protocol, Address: "127.0.0.1:" + strconv.Itoa(port)})
		}
	}
	return out
}

// resourceIDs name what the provider keeps for the tenant: its directory,
// whose name is the tenant's id.
func resourceIDs(st *state) map[string]string { return map[string]string{"directory": st.TenantID} }
