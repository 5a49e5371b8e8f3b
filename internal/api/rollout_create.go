package api

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/violation"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// createRollout starts a rollout of a plan, or, with dry_run, answers what
// it would do tenant by tenant (the fleet plan). Either way every tenant
// it would change must resolve at the target version, with its own
// overrides: one that does not makes the request a 422 naming it, and
// nothing starts.
func (s *Server) createRollout(w http.ResponseWriter, r *http.Request) error {
	if err := s.needFleet(); err != nil {
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
	var req CreateRolloutRequest
	if err := decodeStrict(body, &req); err != nil {
		return err
	}
	held, answered, err := s.reserveIdempotent(w, r, body)
	if err != nil || answered {
		return err
	}
	defer s.releaseIdempotent(r, held)
	spec, plan, target, err := s.rolloutSpec(r.Context(), req, givenZeros(body))
	if err != nil {
		return err
	}
	tenants, err := s.followers(r.Context(), plan.Name)
	if err != nil {
		return err
	}
	sel := fleet.Select(spec, tenants)
	waves, members := fleet.Assign(spec, sel.Candidates)
	byID := candidatesByID(sel.Candidates)
	inWaves := make([]*tenant.Tenant, len(members)) // the candidates in wave order, as a fleet plan shows them
	for i, m := range members {
		inWaves[i] = byID[m.TenantID]
	}
	moves, diffs, err := s.resolveMoves(r.Context(), plan, target, inWaves, dryRun)
	if err != nil {
		return err
	}
	if dryRun {
		writeJSON(w, http.StatusOK, s.fleetPlan(spec, plan, sel, waves, members, moves, diffs))
		return nil
	}
	// The response is made of what is known before the write (the store
	// keeps it in the write's transaction, before the rollout can be read
	// back): the members as stored, in wave then tenant id order, all
	// pending, and those of the first wave out of their windows now.
	members = slices.Clone(members)
	slices.SortFunc(members, func(a, b fleet.Member) int {
		return cmp.Or(cmp.Compare(a.Wave, b.Wave), strings.Compare(a.TenantID, b.TenantID))
	})
	// The tenants are those just read: no second read of each.
	started := &fleet.Rollout{Spec: spec, State: fleet.StateRunning}
	waiting := waitingOf(s.opts.Now(), started, pendingNow(started, members), byID)
	ro := &fleet.Rollout{Spec: spec, Waves: waves, CreatedBy: actor(r)}
	err = writeKept(s, w, r, held,
		func() (*fleet.Rollout, error) { return s.fleet.CreateRollout(r.Context(), ro, members) },
		func(res tenant.IdempotentResponse, respond func(*fleet.Rollout) (tenant.IdempotentResponse, error)) (*fleet.Rollout, error) {
			return s.fleetIdem.CreateRolloutIdempotent(r.Context(), ro, members, res, respond)
		},
		func(ro *fleet.Rollout) tenant.IdempotentResponse {
			return created(renderRollout(ro, fleet.Summarize(members), waiting), map[string]string{"Location": "/v1/rollouts/" + ro.ID, "ETag": etag(ro.Version)})
		})
	if errors.Is(err, fleet.ErrConflict) {
		return s.rolloutActive(r.Context(), plan.Name)
	}
	return err
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
	if len(keys.Waves) > fleet.MaxWaves {
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

// rolloutSpec reads a rollout request into a spec, with the plan and the
// target version, reporting every problem at once (422, each at its
// pointer), with zeros (givenZeros) among them.
func (s *Server) rolloutSpec(ctx context.Context, req CreateRolloutRequest, zeros violation.List) (fleet.Spec, *fleet.Plan, *fleet.Version, error) {
	spec := fleet.Spec{Plan: req.Plan, From: req.FromVersion, To: req.ToVersion, MaxFailures: req.MaxFailures, Deadline: fleet.DefaultDeadline}
	for _, wv := range req.Waves {
		spec.Waves = append(spec.Waves, fleet.Wave{Name: wv.Name, Selector: wv.Selector, Count: wv.Count, Percent: wv.Percent, MaxInFlight: wv.MaxInFlight})
	}
	errs := slices.Clone(zeros)
	duration := func(at, v string, into *time.Duration) {
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs.Add(at, "%s is not a duration such as 10m or 1h30m", violation.Quote(v))
			return
		}
		*into = d
	}
	duration("/bake", req.Bake, &spec.Bake)
	duration("/deadline", req.Deadline, &spec.Deadline)
	if req.Deadline != "" && spec.Deadline == 0 {
		errs.Add("/deadline", "is 0; give a positive duration, or leave deadline out for %s", fleet.DefaultDeadline)
	}
	var plan *fleet.Plan
	var target *fleet.Version
	if tenant.ValidateName(req.Plan) == nil {
		p, err := s.fleet.GetPlan(ctx, req.Plan)
		switch {
		case errors.Is(err, fleet.ErrNotFound):
			var fe FieldError
			var pr *Problem
			if errors.As(s.noSuchPlan(ctx, req.Plan), &pr) && len(pr.Errors) > 0 {
				fe = pr.Errors[0]
			}
			errs.Add("/plan", "%s", fe.Message)
		case err != nil:
			return spec, nil, nil, err
		default:
			plan = p
		}
	}
	if plan != nil {
		if spec.To == 0 {
			spec.To = plan.Latest
		}
		switch {
		case plan.Latest == 0:
			errs.Add("/to_version", "plan %s has no version yet; publish one with POST /v1/plans/%s/versions", plan.Name, plan.Name)
		case spec.To > plan.Latest:
			errs.Add("/to_version", "plan %s has no version %d; its versions are 1 to %d", plan.Name, spec.To, plan.Latest)
		case spec.To >= 1:
			v, err := s.fleet.GetVersion(ctx, plan.Name, spec.To)
			if errors.Is(err, fleet.ErrNotFound) {
				errs.Add("/to_version", "plan %s has no version %d", plan.Name, spec.To)
			} else if err != nil {
				return spec, nil, nil, err
			}
			target = v
		}
		if spec.From > plan.Latest {
			errs.Add("/from_version", "plan %s has no version %d; its versions are 1 to %d", plan.Name, spec.From, plan.Latest)
		}
	}
	check := spec
	if check.To == 0 && len(errs) > 0 {
		check.To = 1 // the missing target is reported already
	}
	errs = append(errs, violation.Of(fleet.ValidateSpec(check))...)
	if err := errs.Err(fleet.ErrInvalid); err != nil {
		return spec, nil, nil, err
	}
	return spec, plan, target, nil
}

// followers lists every tenant that follows the plan, page by page.
func (s *Server) followers(ctx context.Context, plan string) ([]*tenant.Tenant, error) {
	return tenant.ListAll(ctx, s.store, tenant.ListOptions{Plan: plan})
}

// candidatesByID indexes tenants by id.
func candidatesByID(ts []*tenant.Tenant) map[string]*tenant.Tenant {
	out := make(map[string]*tenant.Tenant, len(ts))
	for _, t := range ts {
		out[t.ID] = t
	}
	return out
}

// move is what a rollout would do to one tenant's effective config.
type move struct {
	diff    string // the ID of its changes in the fleet plan's diffs
	changed bool   // some field of it changes
	same    bool   // the effective config does not change
}

// resolveMoves resolves each candidate's effective config at the target
// version; with diff, also at its current version, and compares them,
// keeping the changes in a planDiffs (nil without diff). A candidate that
// does not resolve at the target makes it a 422 naming every such tenant
// and its problems.
//
// What it keeps of a candidate is bounded whatever the size of the plan's
// configs: the resolved configs and their full changes are dropped once
// compared, and only the first changes of each different diff, cut short,
// are kept (planDiffs), so that a 1 MB version and its 109 tenants no
// longer made a 142 MB answer and a heap of a gigabyte.
func (s *Server) resolveMoves(ctx context.Context, plan *fleet.Plan, target *fleet.Version, candidates []*tenant.Tenant, diff bool) (map[string]move, *planDiffs, error) {
	versions := map[int64]json.RawMessage{target.Version: target.Config}
	out := map[string]move{}
	var diffs *planDiffs
	if diff {
		diffs = newPlanDiffs()
	}
	var broken []FieldError
	var names []string
	for _, t := range candidates {
		req := compute.ResolveRequest{TenantID: t.ID, TenantName: t.Name, Generation: t.Generation + 1, ComputeConfig: t.ComputeConfig,
			Plan: target.Config, Labels: t.Labels, Annotations: t.Annotations, Provider: t.Provider, ResourceIDs: t.ResourceIDs}
		to, err := s.compute.Resolve(ctx, req)
		if err != nil {
			names = append(names, t.Name)
			broken = append(broken, tenantProblems(t, err)...)
			continue
		}
		if !diff {
			continue
		}
		cur, ok := versions[t.Plan.Version]
		if !ok {
			v, err := s.fleet.GetVersion(ctx, plan.Name, t.Plan.Version)
			if err != nil && !errors.Is(err, fleet.ErrNotFound) {
				return nil, nil, err
			}
			if v != nil {
				cur = v.Config
			}
			versions[t.Plan.Version] = cur
		}
		req.Plan, req.Generation = cur, t.Generation
		from, err := s.compute.Resolve(ctx, req)
		if err != nil {
			// Its current config no longer resolves (the operator's
			// defaults changed): everything may change.
			changes := []compute.Change{{Field: "compute_config", From: "(does not resolve now)", To: "(resolves)"}}
			out[t.ID] = move{diff: diffs.add(changes), changed: true}
			continue
		}
		changes := compute.Diff(from.Spec, to.Spec)
		out[t.ID] = move{diff: diffs.add(changes), changed: len(changes) > 0, same: from.Spec.ConfigHash == to.Spec.ConfigHash}
	}
	if len(broken) > 0 {
		return nil, nil, problem(http.StatusUnprocessableEntity, CodePlanBreaksTenants,
			fmt.Sprintf("version %d of plan %s does not validate with the compute_config of %d tenants (%s); change their overrides, or publish a version that suits them, then start the rollout; nothing was started",
				target.Version, plan.Name, len(names), strings.Join(names, ", ")), broken...)
	}
	return out, diffs, nil
}

// planDiffs are the different changes of a fleet plan's tenants, each
// kept once, bounded as FleetPlanDiff says.
type planDiffs struct {
	list  []FleetPlanDiff
	byKey map[[sha256.Size]byte]int
	bytes int // of the changes listed
}

func newPlanDiffs() *planDiffs {
	return &planDiffs{list: []FleetPlanDiff{}, byKey: map[[sha256.Size]byte]int{}}
}

// add counts a tenant's changes and returns the ID of their diff, or ""
// when there are none. Changes that differ, however far into a value,
// are different diffs.
func (d *planDiffs) add(changes []compute.Change) string {
	if len(changes) == 0 {
		return ""
	}
	h := sha256.New()
	for _, c := range changes {
		for _, v := range []string{c.Field, c.From, c.To} {
			_ = binary.Write(h, binary.BigEndian, uint64(len(v)))
			_, _ = io.WriteString(h, v)
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	if i, ok := d.byKey[key]; ok {
		d.list[i].Tenants++
		return d.list[i].ID
	}
	fd := FleetPlanDiff{ID: fmt.Sprintf("d%d", len(d.list)+1), Tenants: 1, Changes: []ConfigChange{}}
	shown := changes[:min(len(changes), wire.MaxDiffChanges)]
	cut := make([]ConfigChange, len(shown))
	size := 0
	for i, c := range shown {
		cut[i] = ConfigChange{Field: cutValue(c.Field), From: cutValue(c.From), To: cutValue(c.To)}
		size += len(cut[i].Field) + len(cut[i].From) + len(cut[i].To)
	}
	if d.bytes+size <= wire.MaxFleetPlanDiffBytes {
		fd.Changes, d.bytes = cut, d.bytes+size
	}
	fd.ChangesOmitted = len(changes) - len(fd.Changes)
	d.byKey[key] = len(d.list)
	d.list = append(d.list, fd)
	return fd.ID
}

// cutValue is v, or its first MaxChangeValue bytes (whole characters)
// and its length when it is longer. The result shares no memory with v,
// which may be a large config's.
func cutValue(v string) string {
	if len(v) <= wire.MaxChangeValue {
		return v
	}
	n := wire.MaxChangeValue
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n] + fmt.Sprintf("… (%d bytes)", len(v))
}

// tenantProblems words what keeps a tenant from resolving, one field
// error for each problem, naming the tenant.
func tenantProblems(t *tenant.Tenant, err error) []FieldError {
	who := fmt.Sprintf("tenant %s (%s)", t.Name, t.ID)
	vs := violation.Of(err)
	if len(vs) == 0 {
		msg := err.Error()
		if p := problemFor(err); p != nil {
			msg = p.Detail
		}
		return []FieldError{{Pointer: "/to_version", Message: who + ": " + msg}}
	}
	out := make([]FieldError, len(vs))
	for i, v := range vs {
		out[i] = FieldError{Pointer: "/to_version", Message: fmt.Sprintf("%s: compute_config%s %s", who, v.Pointer, v.Message)}
	}
	return out
}

// rolloutActive is the 409 for a plan that has an active rollout already.
func (s *Server) rolloutActive(ctx context.Context, plan string) error {
	detail := fmt.Sprintf("plan %s has a rollout that has not finished; let it finish, or abort it, first", plan)
	if active, err := s.fleet.ListRollouts(ctx, fleet.RolloutListOptions{Plan: plan, Active: true}); err == nil && len(active) > 0 {
		detail = fmt.Sprintf("plan %s has rollout %s, which is %s; let it finish, or abort it (POST /v1/rollouts/%s/abort), first",
			plan, active[0].ID, active[0].State, active[0].ID)
	}
	return problem(http.StatusConflict, CodeRolloutActive, detail)
}

// fleetPlan is the answer to a dry run: what the rollout would do, tenant
// by tenant.
func (s *Server) fleetPlan(spec fleet.Spec, plan *fleet.Plan, sel fleet.Selection, waves []fleet.AssignedWave, members []fleet.Member, moves map[string]move, diffs *planDiffs) FleetPlan {
	now := s.opts.Now()
	inPlace := false
	if d, err := s.compute.Registry().Describe(plan.Provider); err == nil && d.Capabilities != nil {
		inPlace = d.Capabilities.InPlaceUpdate
	}
	byID := candidatesByID(sel.Candidates)
	out := FleetPlan{Plan: plan.Name, Provider: plan.Provider, FromVersion: spec.From, ToVersion: spec.To,
		Waves: make([]FleetPlanWave, len(waves)), Diffs: diffs.list, Pinned: planTenants(sel.Pinned), Current: planTenants(sel.Current),
		Counts: FleetPlanCounts{Waves: map[string]int{}, Tenants: len(members), Pinned: len(sel.Pinned), Current: len(sel.Current), Actions: map[string]int{}}}
	for i, wv := range waves {
		out.Waves[i] = FleetPlanWave{Name: wv.Name, Size: wv.Size, Tenants: []FleetPlanTenant{}}
		out.Counts.Waves[wv.Name] = wv.Size
	}
	for _, m := range members {
		t := byID[m.TenantID]
		mv := moves[m.TenantID]
		pt := FleetPlanTenant{ID: t.ID, Name: t.Name, FromVersion: m.From, ToVersion: spec.To, Wave: waves[m.Wave].Name,
			Diff: mv.diff, Action: providerAction(mv, inPlace)}
		open, opens := t.MaintenanceWindow.Open(now)
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

// providerAction is what the provider would do to a workload whose config
// moves as mv says.
func providerAction(mv move, inPlace bool) string {
	switch {
	case !mv.changed && mv.same:
		return wire.ActionNone
	case inPlace:
		return wire.ActionInPlace
	default:
		return wire.ActionReplace
	}
}

func planTenants(ts []*tenant.Tenant) []PlanTenant {
	out := make([]PlanTenant, len(ts))
	for i, t := range ts {
		out[i] = PlanTenant{ID: t.ID, Name: t.Name, Version: t.Plan.Version}
	}
	return out
}
