package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sort"
	"strings"
	"sync"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/sdk/provider"
)

// replaced is a container renamed aside while its successor starts.
type replaced struct {
	old     container.Summary
	name    string // the canonical name to restore
	newID   string
	stopped bool
}

// run is one converge call: what it changed so far, to finish or undo.
type run struct {
	p          *Provider
	pl         *plan
	log        *slog.Logger
	sentinel   error
	created    []string // ids of containers created for missing ones
	replaced   []*replaced
	netCreated bool
	changes    []provider.Change
	ids        map[string]string
	// inspected holds the inspections of containers kept as they were,
	// which are still current once the run ends.
	inspected map[string]container.InspectResponse

	imagesMu sync.Mutex
	images   map[string]func() error // images made available in this run
}

// converge brings the tenant's containers to the plan. On failure it removes
// what it created and restores what it replaced, with a context that
// survives ctx's cancellation.
func (p *Provider) converge(ctx context.Context, pl *plan, ex *existing, sentinel error) (*run, error) {
	r := &run{p: p, pl: pl, log: p.log(pl.spec.TenantID), sentinel: sentinel, ids: map[string]string{}, inspected: map[string]container.InspectResponse{}}
	if err := r.apply(ctx, ex); err != nil {
		cctx, cancel := p.detached(ctx)
		defer cancel()
		if uerr := r.undo(cctx); uerr != nil {
			r.log.Error("docker rollback incomplete", slog.String("error", uerr.Error()))
			err = errors.Join(err, fmt.Errorf("rollback: %w", uerr))
		}
		return nil, err
	}
	// Past this point the new workload runs; leftovers are removed even if
	// ctx ends.
	cctx, cancel := p.detached(ctx)
	defer cancel()
	var errs []error
	for _, rp := range r.replaced {
		if rp.stopped {
			errs = append(errs, p.forceRemove(cctx, rp.old.ID))
		} else {
			errs = append(errs, p.removeContainer(cctx, rp.old))
		}
	}
	for _, c := range ex.stale {
		errs = append(errs, p.removeContainer(cctx, c))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fail(ctx, sentinel, pl.spec.TenantID, "remove replaced containers", err)
	}
	return r, nil
}

// containerIDs maps the spec's container names to the ids they run as.
func (r *run) containerIDs() map[string]string {
	out := map[string]string{}
	for key, id := range r.ids {
		if name, ok := strings.CutPrefix(key, "container/"); ok {
			out[name] = id
		}
	}
	return out
}

func (r *run) step(ctx context.Context, what string, err error) error {
	return fail(ctx, r.sentinel, r.pl.spec.TenantID, what, err)
}

func (r *run) apply(ctx context.Context, ex *existing) error {
	if err := ctx.Err(); err != nil {
		return r.step(ctx, "start", err)
	}
	// The network and the images do not depend on each other: get them at
	// once. Images of containers that stay as they are are not needed.
	type need struct{ image, container string }
	var needs []need
	seen := map[string]bool{}
	for _, d := range r.pl.containers {
		cur, exists := ex.current[d.spec.Name]
		if (!exists || cur.Labels[r.pl.n.label(labelConfigHash)] != d.hash) && !seen[d.spec.Image] {
			seen[d.spec.Image] = true
			needs = append(needs, need{d.spec.Image, d.spec.Name})
		}
	}
	var netID string
	var netErr error
	imgErrs := make([]error, len(needs))
	var wg sync.WaitGroup
	wg.Go(func() { netID, r.netCreated, netErr = r.p.ensureNetwork(ctx, r.pl) })
	for i, n := range needs {
		wg.Go(func() { imgErrs[i] = r.image(ctx, n.image) })
	}
	wg.Wait()
	if netErr != nil {
		return r.step(ctx, "network", netErr)
	}
	for i, err := range imgErrs {
		if err != nil {
			return r.step(ctx, "image of container "+needs[i].container, err)
		}
	}
	r.pl.attach(netID)

	// Missing containers are created and started in parallel; containers
	// that changed are replaced one by one, so that a failure restores them.
	var missing []desired
	for _, d := range r.pl.containers {
		cur, exists := ex.current[d.spec.Name]
		switch {
		case !exists:
			missing = append(missing, d)
		case cur.Labels[r.pl.n.label(labelConfigHash)] == d.hash && onNetwork(cur, netID):
			// The labels say the container is as the spec wants it, but it
			// may have been changed since, or re-created by hand with the
			// same labels: what runs is compared too.
			drift, gone, err := r.liveDrift(ctx, d, cur, netID)
			switch {
			case err != nil:
				return r.step(ctx, "inspect container "+d.spec.Name, err)
			case gone:
				missing = append(missing, d)
			case len(drift) > 0:
				r.log.Info("docker container differs from its spec; replacing it", slog.String("container", d.spec.Name), slog.String("drift", provider.Summarize(drift)))
				if err := r.replace(ctx, cur, d); err != nil {
					return err
				}
			default:
				r.ids["container/"+d.spec.Name] = cur.ID
				resumed, err := r.resume(ctx, cur, d.spec.Name)
				if err != nil {
					return err
				}
				if resumed {
					delete(r.inspected, d.spec.Name) // its ports are new
				}
			}
		default:
			if err := r.replace(ctx, cur, d); err != nil {
				return err
			}
		}
	}
	ids := make([]string, len(missing))
	errs := make([]error, len(missing))
	for i, d := range missing {
		wg.Go(func() { ids[i], errs[i] = r.create(ctx, d) })
	}
	wg.Wait()
	for i, d := range missing {
		if ids[i] != "" {
			r.created = append(r.created, ids[i])
			r.ids["container/"+d.spec.Name] = ids[i]
		}
		r.changes = append(r.changes, provider.Change{Field: "containers/" + d.spec.Name, To: d.spec.Image})
	}
	if err := firstError(errs); err != nil {
		return err
	}
	wanted := map[string]bool{}
	for _, d := range r.pl.containers {
		wanted[d.spec.Name] = true
	}
	names := make([]string, 0, len(ex.current))
	for name := range ex.current {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !wanted[name] {
			// Removed last, once everything else converged: nothing to undo.
			ex.stale = append(ex.stale, ex.current[name])
			r.changes = append(r.changes, provider.Change{Field: "containers/" + name, From: ex.current[name].Image})
		}
	}
	return nil
}

// liveDrift compares a container whose labels match the plan with the plan,
// its state aside; gone reports that it was removed since it was listed.
func (r *run) liveDrift(ctx context.Context, d desired, cur container.Summary, netID string) (drift []provider.Drift, gone bool, err error) {
	res, err := r.p.client.ContainerInspect(ctx, cur.ID, client.ContainerInspectOptions{})
	if isNotFound(err) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	img, err := r.p.imageDefaults(ctx, res.Container.Image)
	if err != nil {
		return nil, false, err
	}
	var col provider.DriftCollector
	r.pl.compareContainer(&col, d, live{c: res.Container, image: img}, netID, false)
	r.inspected[d.spec.Name] = res.Container
	return col.Drift(), false, nil
}

// resume starts a container that is stopped and unpauses one that is
// paused, and reports whether it did.
func (r *run) resume(ctx context.Context, cur container.Summary, name string) (bool, error) {
	switch cur.State {
	case container.StateExited, container.StateCreated, container.StateDead:
		r.log.Info("docker starting stopped container", slog.String("container", name))
		if _, err := r.p.client.ContainerStart(ctx, cur.ID, client.ContainerStartOptions{}); err != nil {
			return false, r.step(ctx, "start container "+name, err)
		}
	case container.StatePaused:
		r.log.Info("docker unpausing paused container", slog.String("container", name))
		if _, err := r.p.client.ContainerUnpause(ctx, cur.ID, client.ContainerUnpauseOptions{}); err != nil {
			return false, r.step(ctx, "unpause container "+name, err)
		}
	default:
		return false, nil
	}
	r.changes = append(r.changes, provider.Change{Field: "containers/" + name + "/state", From: string(cur.State), To: string(container.StateRunning)})
	return true, nil
}

// status is the workload's status once the run has converged it: the
// containers it kept as they were are not inspected again.
func (r *run) status(ctx context.Context) (*provider.ComputeStatus, error) {
	ids := r.containerIDs()
	inspected := make(map[string]container.InspectResponse, len(ids))
	rest := map[string]string{}
	for name, id := range ids {
		if c, ok := r.inspected[name]; ok && c.ID == id {
			inspected[name] = c
		} else {
			rest[name] = id
		}
	}
	fresh, err := r.p.inspectContainers(ctx, r.pl.n, rest)
	if err != nil {
		return nil, err
	}
	maps.Copy(inspected, fresh)
	return r.p.statusOf(ctx, r.pl.n, inspected)
}

// firstError is the first non-nil error of errs: the step of the first
// container in spec order that failed.
func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// image makes image available once per run, whatever the number of
// containers that use it; different images are pulled at once.
func (r *run) image(ctx context.Context, image string) error {
	r.imagesMu.Lock()
	if r.images == nil {
		r.images = map[string]func() error{}
	}
	get := r.images[image]
	if get == nil {
		get = sync.OnceValue(func() error { return r.p.ensureImage(ctx, r.log, image, r.pl.pullPolicy) })
		r.images[image] = get
	}
	r.imagesMu.Unlock()
	return get()
}

// create creates and starts a container whose image is on the Engine. It
// returns the id of what it created, even on failure.
func (r *run) create(ctx context.Context, d desired) (string, error) {
	res, err := r.p.client.ContainerCreate(ctx, d.create)
	if err != nil {
		return "", r.step(ctx, "create container "+d.spec.Name, err)
	}
	if _, err := r.p.client.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		return res.ID, r.step(ctx, "start container "+d.spec.Name, err)
	}
	r.log.Info("docker container started", slog.String("container", d.spec.Name), slog.String("image", d.spec.Image), slog.String("id", res.ID))
	return res.ID, nil
}

// replace renames cur aside and starts its successor, stopping cur first
// when both publish the same fixed host port.
func (r *run) replace(ctx context.Context, cur container.Summary, d desired) error {
	if err := r.image(ctx, d.spec.Image); err != nil {
		return r.step(ctx, "image of container "+d.spec.Name, err)
	}
	rp := &replaced{old: cur, name: d.create.Name}
	if _, err := r.p.client.ContainerRename(ctx, cur.ID, client.ContainerRenameOptions{NewName: d.create.Name + previousSuffix}); err != nil {
		return r.step(ctx, "rename container "+d.spec.Name+" aside", err)
	}
	r.replaced = append(r.replaced, rp)
	conflict := false
	old := publishedHostPorts(cur)
	for port := range fixedHostPorts(d.spec) {
		conflict = conflict || old[port]
	}
	if conflict {
		if err := r.p.stopContainer(ctx, cur.ID); err != nil {
			return r.step(ctx, "stop container "+d.spec.Name, err)
		}
		rp.stopped = true
	}
	id, err := r.create(ctx, d)
	rp.newID = id
	if err != nil {
		return err
	}
	r.ids["container/"+d.spec.Name] = id
	change := provider.Change{Field: "containers/" + d.spec.Name}
	if cur.Image != d.spec.Image {
		change = provider.Change{Field: "containers/" + d.spec.Name + "/image", From: cur.Image, To: d.spec.Image}
	}
	r.changes = append(r.changes, change)
	return nil
}

// undo removes what the run created and restores what it replaced.
func (r *run) undo(ctx context.Context) error {
	var errs []error
	for _, id := range r.created {
		errs = append(errs, r.p.forceRemove(ctx, id))
	}
	for i := len(r.replaced) - 1; i >= 0; i-- {
		rp := r.replaced[i]
		if rp.newID != "" {
			errs = append(errs, r.p.forceRemove(ctx, rp.newID))
		}
		if _, err := r.p.client.ContainerRename(ctx, rp.old.ID, client.ContainerRenameOptions{NewName: rp.name}); err != nil {
			errs = append(errs, fmt.Errorf("restore name of %s: %w", rp.name, err))
		}
		if rp.stopped {
			if _, err := r.p.client.ContainerStart(ctx, rp.old.ID, client.ContainerStartOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("restart %s: %w", rp.name, err))
			}
		}
	}
	if r.netCreated {
		errs = append(errs, r.p.removeNetworks(ctx, r.pl.n))
	}
	return errors.Join(errs...)
}

// stopContainer stops a container with the configured grace period.
func (p *Provider) stopContainer(ctx context.Context, id string) error {
	secs := int(p.stopTimeout().Seconds())
	if _, err := p.client.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &secs}); err != nil && !isNotFound(err) {
		return fmt.Errorf("stop container %s: %w", id, err)
	}
	return nil
}

// removeContainer stops a running container with grace, then removes it; a
// missing container is already removed.
func (p *Provider) removeContainer(ctx context.Context, c container.Summary) error {
	if running(c) {
		if err := p.stopContainer(ctx, c.ID); err != nil {
			return err
		}
	}
	return p.forceRemove(ctx, c.ID)
}

// forceRemove removes a container at once, killing it if it runs: for
// containers that stopped already or that this call created and never
// handed over.
func (p *Provider) forceRemove(ctx context.Context, id string) error {
	if _, err := p.client.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !isNotFound(err) {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	return nil
}

// running reports whether a listed container may have a process to stop
// with grace.
func running(c container.Summary) bool {
	switch c.State {
	case container.StateExited, container.StateCreated, container.StateDead:
		return false
	}
	return true
}
