package api

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/violation"
)

// createRollout starts a rollout of a plan, or, with dry_run, answers what
// it would do tenant by tenant (the fleet plan; see service.PlanRollout).
func (s *Server) createRollout(w http.ResponseWriter, r *http.Request) error {
	if err := s.svc.NeedFleet(); err != nil {
		return err
	}
	dryRun, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	// A retry after a lost answer gets the rollout it started, not a 409
	// for it: the rollout and the response a retry gets commit together.
	// A dry run stores nothing, and frees the key. (These are
	// readIdempotent's steps, keeping the body: givenZeros tells a key
	// given as 0 from one left out.)
	body, err := s.readRaw(w, r, contentJSON)
	if err != nil {
		return err
	}
	var req wire.CreateRolloutRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	held, answered, err := s.reserveIdempotent(w, r, body)
	if err != nil || answered {
		return err
	}
	defer s.releaseIdempotent(r, held)
	fp, err := s.svc.PlanRollout(r.Context(), rolloutRequest(req, givenZeros(body)), dryRun)
	if err != nil {
		return err
	}
	if dryRun {
		writeJSON(w, http.StatusOK, renderFleetPlan(fp))
		return nil
	}
	// The response is made of what is known before the write (the store
	// keeps it in the write's transaction, before the rollout can be read
	// back): the members as stored, all pending, and those of the first
	// wave out of their windows now. The tenants are those just read: no
	// second read of each.
	members := fp.Stored()
	started := &fleet.Rollout{Spec: fp.Spec, State: fleet.StateRunning}
	waiting := renderWaiting(service.WaitingOf(fp.Now, started, members, fp.Tenants))
	return keepResponse(s, w, r, held,
		func(keep *service.Keep[*fleet.Rollout]) (*fleet.Rollout, error) {
			return s.svc.StartRollout(r.Context(), fp, actor(r), keep)
		},
		func(ro *fleet.Rollout) tenant.IdempotentResponse {
			return created(renderRollout(ro, fleet.Summarize(members), waiting), map[string]string{"Location": "/v1/rollouts/" + ro.ID, "ETag": etag(ro.Version)})
		})
}

// rolloutRequest is the service's form of a rollout request, with the
// problems found decoding it.
func rolloutRequest(req wire.CreateRolloutRequest, zeros violation.List) service.RolloutRequest {
	spec := fleet.Spec{Plan: req.Plan, From: req.FromVersion, To: req.ToVersion, ToPlan: req.ToPlan, MaxFailures: req.MaxFailures}
	for _, wv := range req.Waves {
		spec.Waves = append(spec.Waves, fleet.Wave{Name: wv.Name, Selector: wv.Selector, Count: wv.Count, Percent: wv.Percent, MaxInFlight: wv.MaxInFlight})
	}
	return service.RolloutRequest{Spec: spec, Bake: req.Bake, Deadline: req.Deadline, Problems: zeros}
}

// limitKeys are the numbers of a rollout request whose 0 stands for a
// default ("no limit", "every version", "the latest"): for those, the
// default is the key left out, and 0 given is refused, so that a 0% canary
// never ships to the whole fleet.
type limitKeys struct {
	FromVersion *int64 `json:"from_version"`
	ToVersion   *int64 `json:"to_version"`
	Waves       []struct {
		Count       *int `json:"count"`
		Percent     *int `json:"percent"`
		MaxInFlight *int `json:"max_in_flight"`
	} `json:"waves"`
}

// givenZeros lists the keys of a rollout request (body, decoded strictly
// already) given as 0 where leaving them out means the default, each at
// its pointer, as the CLI refuses 0 for their flags.
func givenZeros(body []byte) violation.List {
	var keys limitKeys
	if json.Unmarshal(body, &keys) != nil {
		return nil // cannot be: decodeStrict read the same body
	}
	var errs violation.List
	if keys.FromVersion != nil && *keys.FromVersion == 0 {
		errs.Add("/from_version", "is 0; give a version from 1, or leave from_version out for every version but to_version")
	}
	if keys.ToVersion != nil && *keys.ToVersion == 0 {
		errs.Add("/to_version", "is 0; give a version from 1, or leave to_version out for the plan's latest")
	}
	if len(keys.Waves) > wire.MaxWaves {
		return errs // too many waves: ValidateSpec says so, not each wave's problems
	}
	for i, w := range keys.Waves {
		at := fmt.Sprintf("/waves/%d", i)
		if w.Count != nil && *w.Count == 0 {
			errs.Add(at+"/count", "is 0; give at least 1, or leave count out for no limit")
		}
		if w.Percent != nil && *w.Percent == 0 {
			errs.Add(at+"/percent", "is 0; give 1 to 100, or leave percent out for no limit")
		}
		if w.MaxInFlight != nil && *w.MaxInFlight == 0 {
			errs.Add(at+"/max_in_flight", "is 0; give at least 1, or leave max_in_flight out for the whole wave at once")
		}
	}
	return errs
}

// tenantProblems words what keeps a tenant from resolving, one field
// error for each problem, naming the tenant.
func tenantProblems(t *tenant.Tenant, err error) []wire.FieldError {
	who := fmt.Sprintf("tenant %s (%s)", t.Name, t.ID)
	vs := violation.Of(err)
	if len(vs) == 0 {
		msg := err.Error()
		if p := problemFor(err); p != nil {
			msg = p.Detail
		}
		return []wire.FieldError{{Pointer: "/to_version", Message: who + ": " + msg}}
	}
	out := make([]wire.FieldError, len(vs))
	for i, v := range vs {
		out[i] = wire.FieldError{Pointer: "/to_version", Message: fmt.Sprintf("%s: compute_config%s %s", who, v.Pointer, v.Message)}
	}
	return out
}

// renderFleetPlan is the answer to a dry run: what the rollout would do,
// tenant by tenant.
func renderFleetPlan(fp *service.FleetPlan) wire.FleetPlan {
	sel, spec := fp.Selection, fp.Spec
	out := wire.FleetPlan{Plan: fp.Plan.Name, Provider: fp.Plan.Provider, FromVersion: spec.From, ToVersion: spec.To, ToPlan: spec.ToPlan, ToProvider: spec.ToProvider,
		Waves: make([]wire.FleetPlanWave, len(fp.Waves)), Diffs: renderDiffs(fp.Diffs), Pinned: planTenants(sel.Pinned), Current: planTenants(sel.Current),
		Counts: wire.FleetPlanCounts{Waves: map[string]int{}, Tenants: len(fp.Members), Pinned: len(sel.Pinned), Current: len(sel.Current), Actions: map[string]int{}}}
	for i, wv := range fp.Waves {
		out.Waves[i] = wire.FleetPlanWave{Name: wv.Name, Size: wv.Size, Tenants: []wire.FleetPlanTenant{}}
		out.Counts.Waves[wv.Name] = wv.Size
	}
	for _, m := range fp.Members {
		t := fp.Tenants[m.TenantID]
		mv := fp.Moves[m.TenantID]
		pt := wire.FleetPlanTenant{ID: t.ID, Name: t.Name, FromVersion: m.From, ToVersion: spec.To, Wave: fp.Waves[m.Wave].Name,
			Diff: mv.Diff, Action: mv.Action(fp.InPlace)}
		open, opens := t.MaintenanceWindow.Open(fp.Now)
		pt.WindowOpen = open
		if !open {
			out.Counts.OutOfWindow++
			if !opens.IsZero() {
				at := opens.UTC()
				pt.WindowOpensAt = &at
			}
		}
		out.Counts.Actions[pt.Action]++
		out.Waves[m.Wave].Tenants = append(out.Waves[m.Wave].Tenants, pt)
	}
	return out
}

func renderDiffs(diffs []service.Diff) []wire.FleetPlanDiff {
	out := make([]wire.FleetPlanDiff, len(diffs))
	for i, d := range diffs {
		out[i] = wire.FleetPlanDiff{ID: d.ID, Tenants: d.Tenants, ChangesOmitted: d.ChangesOmitted, Changes: make([]wire.ConfigChange, len(d.Changes))}
		for j, c := range d.Changes {
			out[i].Changes[j] = wire.ConfigChange{Field: c.Field, From: c.From, To: c.To}
		}
	}
	return out
}

func planTenants(ts []*tenant.Tenant) []wire.PlanTenant {
	out := make([]wire.PlanTenant, len(ts))
	for i, t := range ts {
		out[i] = wire.PlanTenant{ID: t.ID, Name: t.Name, Version: t.Plan.Version}
	}
	return out
}
