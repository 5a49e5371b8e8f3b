package controller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// DriftObserver is implemented by a ReconcileObserver that also counts
// drift (landlord_drift_detected_total).
type DriftObserver interface {
	// ObserveDrift records one difference found in a tenant's workload.
	ObserveDrift(provider string, kind provider.DriftKind)
}

// PlacementDriftObserver is a DriftObserver that counts drift by
// placement too; a tenant of one placement's is its "default" one's.
type PlacementDriftObserver interface {
	ObservePlacementDrift(placement, provider string, kind provider.DriftKind)
}

// observedPrefix begins the status message of a ready tenant whose drift
// is reported and left alone (drift policy observe).
const observedPrefix = "drift observed, not repaired (drift policy observe): "

// checkDrift compares a ready tenant's workload with its declared state.
// What differs is recorded (the tenant's drift, a drift_detected event,
// the metric) and, under the repair policy, put back at once: an update,
// or a provision when the workload is gone. Under the observe policy
// nothing on the platform changes: a workload that still runs stays ready
// with the drift in its message; one that does not is failed, and is
// ready again once it runs (see recover). Endpoints are kept to where the
// workload answers now.
func (r *reconcile) checkDrift(ctx context.Context) (Result, error) {
	t := r.t
	spec, err := r.c.desiredSpec(ctx, t)
	if err != nil && !errors.Is(err, provider.ErrInvalidSpec) {
		return Result{}, fmt.Errorf("controller: resolve tenant %s to compare its workload with it: %w", t.ID, err)
	}
	if err != nil {
		// The config no longer resolves (the provider's settings or the
		// plan changed under it): nothing says what to compare, nor
		// whether to repair. The workload's state is still checked.
		return Result{}, r.unresolved(ctx, err)
	}
	in, err := r.c.compute.InspectTenant(ctx, t.ComputeRef(), spec)
	found, err := driftOf(in, err)
	if err != nil {
		return Result{}, fmt.Errorf("controller: inspect tenant %s: %w", t.ID, err)
	}
	policy := provider.DriftRepair
	if spec.Drift != "" {
		policy = spec.Drift
	}
	if len(found) == 0 {
		return Result{}, r.inSync(ctx, in.Status)
	}
	report := &tenant.DriftReport{DetectedAt: r.c.opts.Now(), Generation: t.Generation, Policy: policy, Differences: found}
	running := !slices.ContainsFunc(found, isState)
	if policy == provider.DriftObserve {
		return Result{}, r.observeOnly(ctx, report, in, running)
	}
	news := report.News(t.Drift)
	r.log.Warn("drift detected; repairing", slog.String("drift", provider.Summarize(found)))
	status := tenant.StatusUpdating
	if in == nil {
		status = tenant.StatusProvisioning // the workload is gone
	}
	obs := tenant.Observation{Status: status, Message: "repairing drift: " + provider.Summarize(found), Drift: report}
	if err := r.observe(ctx, obs); err != nil {
		return Result{}, err
	}
	if news {
		r.count(found)
	}
	r.repairing = true
	return r.converge(ctx)
}

// needsCheck reports whether a ready tenant's inspection (in, err) asks for
// a worker's attention: drift that is not already recorded as observed,
// moved endpoints, an observed drift's message to clear, or an error.
func needsCheck(t *tenant.Tenant, spec *provider.TenantComputeSpec, in *provider.Inspection, err error) bool {
	found, err := driftOf(in, err)
	switch {
	case err != nil:
		return true
	case len(found) == 0:
		return !slices.Equal(in.Status.Endpoints, t.Endpoints) || strings.HasPrefix(t.StatusMessage, observedPrefix) || t.Drift.Open()
	case spec != nil && spec.Drift == provider.DriftObserve:
		return (&tenant.DriftReport{Generation: t.Generation, Policy: provider.DriftObserve, Differences: found}).News(t.Drift)
	default:
		return true
	}
}

// driftOf is what an inspection (in, err) found wrong: the differences the
// provider reported, and the workload's state when it is not running. An
// error other than compute.ErrTenantNotFound is returned: nothing is known
// then.
func driftOf(in *provider.Inspection, err error) ([]provider.Drift, error) {
	switch {
	case errors.Is(err, provider.ErrTenantNotFound):
		return []provider.Drift{{Path: "workload", Kind: provider.DriftState, Expected: "running", Found: "gone"}}, nil
	case err != nil:
		return nil, err
	}
	found := slices.Clone(in.Drift)
	if st := in.Status; st.State != provider.StateRunning {
		state := string(st.State)
		if st.Message != "" {
			state += " (" + st.Message + ")"
		}
		found = append(found, provider.Drift{Path: "workload", Kind: provider.DriftState, Expected: "running", Found: state})
	}
	return found, nil
}

// inSync records what a check that found no drift changes: the endpoints
// where the workload answers now, and the end of an observed drift's
// message.
func (r *reconcile) inSync(ctx context.Context, st *provider.ComputeStatus) error {
	t := r.t
	moved := !slices.Equal(st.Endpoints, t.Endpoints)
	observed := strings.HasPrefix(t.StatusMessage, observedPrefix)
	if !moved && !observed && !t.Drift.Open() {
		return nil
	}
	obs := r.keep(t.Status, t.StatusMessage)
	if t.Drift.Open() {
		// Repaired, or undone by hand: the same drift again is news.
		obs.Drift = t.Drift.Resolved(r.c.opts.Now())
	}
	if moved {
		r.log.Info("the workload's endpoints changed", slog.Any("endpoints", st.Endpoints))
		obs.Endpoints = nonNil(st.Endpoints)
	}
	if observed {
		obs.Message = ""
	}
	return r.observe(ctx, obs)
}

// observeOnly records drift under the observe policy and changes nothing
// on the platform; a drift seen again writes nothing.
func (r *reconcile) observeOnly(ctx context.Context, report *tenant.DriftReport, in *provider.Inspection, running bool) error {
	t := r.t
	if !report.News(t.Drift) {
		return nil
	}
	r.log.Warn("drift detected; observing only (drift policy observe)", slog.String("drift", provider.Summarize(report.Differences)))
	obs := r.keep(tenant.StatusReady, observedPrefix+provider.Summarize(report.Differences))
	obs.Drift = report
	// Only where the workload answers now: a detached network leaves a
	// running workload with none.
	if in != nil {
		obs.Endpoints = nonNil(in.Status.Endpoints)
	}
	if !running {
		// Ready would claim endpoints that do not answer.
		obs = tenant.Observation{Status: tenant.StatusFailed, Settles: true, Drift: report, Endpoints: []provider.Endpoint{},
			Message: "the workload does not run, and is not repaired (drift policy observe): " + provider.Summarize(report.Differences)}
	}
	if err := r.observe(ctx, obs); err != nil {
		return err
	}
	r.count(report.Differences)
	return nil
}

// unresolved checks the state of a ready tenant whose config no longer
// resolves (cause says why): a workload that does not run fails the
// tenant, which is not repaired, since neither its spec nor its drift
// policy is known; one that runs is left alone.
func (r *reconcile) unresolved(ctx context.Context, cause error) error {
	found, err := driftOf(r.c.compute.InspectTenant(ctx, r.t.ComputeRef(), nil))
	if err != nil {
		return fmt.Errorf("controller: status of tenant %s: %w", r.t.ID, err)
	}
	if !slices.ContainsFunc(found, isState) {
		return nil
	}
	r.log.Warn("the workload does not run, and the tenant's config no longer resolves; not repairing it", slog.Any("error", cause))
	return r.observe(ctx, tenant.Observation{Status: tenant.StatusFailed, Settles: true, Endpoints: []provider.Endpoint{},
		Message: fmt.Sprintf("the workload does not run (%s), and is not repaired: the tenant's config no longer resolves: %v (change the tenant to try again)",
			provider.Summarize(found), withoutOwnID(cause.Error(), r.t.ID))})
}

// notState reports whether d is a difference from the spec rather than an
// instance that is not running.
func notState(d provider.Drift) bool { return !isState(d) }

// leftover is what still differs from the tenant's spec, instances not
// running aside.
func (r *reconcile) leftover(ctx context.Context) ([]provider.Drift, error) {
	spec, err := r.c.desiredSpec(ctx, r.t)
	if err != nil {
		return nil, err
	}
	in, err := r.c.compute.InspectTenant(ctx, r.t.ComputeRef(), spec)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(in.Drift), isState), nil
}

// isState reports whether d says the workload, or an instance of it, is
// not running, rather than that it differs from its spec.
func isState(d provider.Drift) bool { return d.Kind == provider.DriftState }

// nonNil is endpoints, or an empty list for none: an observation's nil
// endpoints keep the tenant's.
func nonNil(endpoints []provider.Endpoint) []provider.Endpoint {
	if endpoints == nil {
		return []provider.Endpoint{}
	}
	return endpoints
}

// count records drift for metrics.
func (r *reconcile) count(found []provider.Drift) {
	if o, ok := r.c.opts.Observer.(PlacementDriftObserver); ok {
		placement := cmp.Or(r.placement, tenant.DefaultPlacement)
		for _, d := range found {
			o.ObservePlacementDrift(placement, r.t.Provider, d.Kind)
		}
		return
	}
	o, ok := r.c.opts.Observer.(DriftObserver)
	if !ok {
		return
	}
	for _, d := range found {
		o.ObserveDrift(r.t.Provider, d.Kind)
	}
}
