package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/jaxxstorm/landlord/internal/compute"
	"github.com/jaxxstorm/landlord/internal/fleet"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant's plan and maintenance window, as requests set them: the plan a
// request names is looked up (its version, 0 for the plan's current one,
// must exist), and the version's config is the plan layer of the tenant's
// effective config.

// needFleet refuses a request that needs plans on a server without them.
func (s *Server) needFleet() error {
	if s.fleet == nil {
		return problem(http.StatusNotImplemented, CodeFleetUnavailable,
			"this server keeps no plans or rollouts (it was started without a fleet store); use a landlord built and configured with one")
	}
	return nil
}

// planLayer looks up the plan ref names, for a tenant on provider (empty
// for a new tenant): it returns ref with its version resolved (0 is the
// plan's current version), the plan and the version. Problems are 422
// invalid_plan at /plan/name or /plan/version.
func (s *Server) planLayer(ctx context.Context, ref *tenant.PlanRef, provider string) (*tenant.PlanRef, *fleet.Plan, *fleet.Version, error) {
	if err := s.needFleet(); err != nil {
		return nil, nil, nil, err
	}
	if err := tenant.ValidateName(ref.Name); err != nil {
		return nil, nil, nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan, "the plan's name is not valid",
			FieldError{Pointer: "/plan/name", Message: strings.TrimPrefix(err.Error(), tenant.ErrInvalid.Error()+": ")})
	}
	p, err := s.fleet.GetPlan(ctx, ref.Name)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, nil, nil, s.noSuchPlan(ctx, ref.Name)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if provider != "" && p.Provider != provider {
		return nil, nil, nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan,
			fmt.Sprintf("plan %s is for provider %s; the tenant runs on %s and cannot follow it", p.Name, p.Provider, provider),
			FieldError{Pointer: "/plan/name", Message: fmt.Sprintf("is a plan for provider %s, not %s", p.Provider, provider)})
	}
	out := *ref
	if out.Version == 0 {
		if p.Current == 0 {
			return nil, nil, nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan,
				fmt.Sprintf("plan %s has no version yet; publish one with POST /v1/plans/%s/versions", p.Name, p.Name),
				FieldError{Pointer: "/plan/version", Message: "the plan has no version yet"})
		}
		out.Version = p.Current
	}
	v, err := s.fleet.GetVersion(ctx, p.Name, out.Version)
	if errors.Is(err, fleet.ErrNotFound) {
		return nil, nil, nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan,
			fmt.Sprintf("plan %s has no version %d; its versions are 1 to %d", p.Name, out.Version, p.Latest),
			FieldError{Pointer: "/plan/version", Message: fmt.Sprintf("is not a version of plan %s (1 to %d)", p.Name, p.Latest)})
	}
	if err != nil {
		return nil, nil, nil, err
	}
	return &out, p, v, nil
}

// noSuchPlan is the 422 for a tenant that names a plan that does not exist.
func (s *Server) noSuchPlan(ctx context.Context, name string) error {
	msg := "no plan has this name; there are no plans (create one with POST /v1/plans)"
	if plans, err := s.fleet.ListPlans(ctx); err == nil && len(plans) > 0 {
		names := make([]string, len(plans))
		for i, p := range plans {
			names[i] = p.Name
		}
		msg = "no plan has this name; the plans are " + strings.Join(names, ", ")
	}
	return problem(http.StatusUnprocessableEntity, CodeInvalidPlan, fmt.Sprintf("there is no plan %s", name),
		FieldError{Pointer: "/plan/name", Message: msg})
}

// choosePlan is the plan a create or a replace asks for: nil keeps cur;
// a name left out is cur's; a version left out is cur's when the plan is
// cur's, else 0 (the plan's current version).
func choosePlan(cur *tenant.PlanRef, choice *PlanChoice) (*tenant.PlanRef, error) {
	if choice == nil {
		return clonePlanRef(cur), nil
	}
	ref := &tenant.PlanRef{Name: choice.Name, Version: choice.Version, Pinned: choice.Pinned}
	if ref.Name == "" {
		if cur == nil {
			return nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan, "the plan's name is required",
				FieldError{Pointer: "/plan/name", Message: "is required"})
		}
		ref.Name = cur.Name
	}
	if ref.Version < 0 {
		return nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan, "the plan's version is not valid",
			FieldError{Pointer: "/plan/version", Message: "must be at least 1, or left out for the plan's current version"})
	}
	if ref.Version == 0 && cur != nil && cur.Name == ref.Name {
		ref.Version = cur.Version
	}
	return ref, nil
}

// patchPlan applies a merge patch's plan member to cur: null leaves the
// plan; an object changes the members it names (a new name starts from
// that plan's current version unless it names one; version null is the
// plan's current version; pinned null unpins).
func patchPlan(cur *tenant.PlanRef, raw json.RawMessage) (*tenant.PlanRef, error) {
	if isNull(raw) {
		return nil, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, problem(http.StatusBadRequest, CodeInvalidBody, "plan must be an object", FieldError{Pointer: "/plan", Message: "must be an object or null"})
	}
	var choice PlanChoice
	if err := json.Unmarshal(raw, &choice); err != nil {
		return nil, problem(http.StatusBadRequest, CodeInvalidBody, "plan is not valid: "+err.Error(), FieldError{Pointer: "/plan", Message: "has a member of the wrong type"})
	}
	next := clonePlanRef(cur)
	if next == nil {
		next = &tenant.PlanRef{}
	}
	if v, ok := members["name"]; ok && !isNull(v) && choice.Name != next.Name {
		next.Name, next.Version = choice.Name, 0
	}
	if v, ok := members["version"]; ok {
		next.Version = 0
		if !isNull(v) {
			next.Version = choice.Version
		}
	}
	if _, ok := members["pinned"]; ok {
		next.Pinned = choice.Pinned
	}
	if next.Name == "" {
		return nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan, "the tenant follows no plan; name one",
			FieldError{Pointer: "/plan/name", Message: "is required: the tenant follows no plan"})
	}
	if next.Version < 0 {
		return nil, problem(http.StatusUnprocessableEntity, CodeInvalidPlan, "the plan's version is not valid",
			FieldError{Pointer: "/plan/version", Message: "must be at least 1, or null for the plan's current version"})
	}
	return next, nil
}

// patchWindow applies a merge patch's maintenance_window member to cur:
// null removes the window, an object merges into it.
func patchWindow(cur *tenant.Window, raw json.RawMessage) (*tenant.Window, error) {
	if isNull(raw) {
		return nil, nil
	}
	doc := json.RawMessage("{}")
	if cur != nil {
		doc, _ = json.Marshal(wireWindow(cur))
	}
	merged, err := mergeJSON(doc, raw)
	if err != nil {
		return nil, err
	}
	var w MaintenanceWindow
	if err := json.Unmarshal(merged, &w); err != nil {
		return nil, problem(http.StatusBadRequest, CodeInvalidBody, "maintenance_window must be an object", FieldError{Pointer: "/maintenance_window", Message: "must be an object or null"})
	}
	return domainWindow(&w), nil
}

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

func clonePlanRef(p *tenant.PlanRef) *tenant.PlanRef {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

func wireWindow(w *tenant.Window) *MaintenanceWindow {
	if w == nil {
		return nil
	}
	return &MaintenanceWindow{Days: w.Days, Start: w.Start, End: w.End, TimeZone: w.TimeZone}
}

func domainWindow(w *MaintenanceWindow) *tenant.Window {
	if w == nil {
		return nil
	}
	return &tenant.Window{Days: w.Days, Start: w.Start, End: w.End, TimeZone: w.TimeZone}
}

func wirePlan(p *tenant.PlanRef) *TenantPlan {
	if p == nil {
		return nil
	}
	return &TenantPlan{Name: p.Name, Version: p.Version, Pinned: p.Pinned}
}

// checkProviderChoice refuses a compute_config that chooses another
// provider than the plan's, saying why.
func checkProviderChoice(config json.RawMessage, p *fleet.Plan) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(config, &top) != nil {
		return nil // Resolve reports it
	}
	raw, ok := top[compute.SelectionKey]
	if !ok {
		return nil
	}
	var chosen string
	if json.Unmarshal(raw, &chosen) == nil && chosen != "" && chosen != p.Provider {
		return problem(http.StatusUnprocessableEntity, CodeInvalidComputeConfig,
			fmt.Sprintf("the tenant follows plan %s, whose provider is %s", p.Name, p.Provider),
			FieldError{Pointer: "/compute_config/" + compute.SelectionKey, Message: fmt.Sprintf("must be %s, the provider of plan %s, or left out", p.Provider, p.Name)})
	}
	return nil
}

// configLayers are the layers of a resolved config, each redacted.
func (s *Server) configLayers(provider string, plan, own json.RawMessage) (*ConfigLayers, error) {
	layers := &ConfigLayers{Defaults: json.RawMessage("null"), Plan: json.RawMessage("null"), Tenant: json.RawMessage("null")}
	redact := func(raw json.RawMessage) (json.RawMessage, error) {
		if len(raw) == 0 || isNull(raw) {
			return json.RawMessage("null"), nil
		}
		return s.compute.RedactConfig(provider, raw)
	}
	d, err := s.compute.Registry().Describe(provider)
	if err != nil {
		return nil, err
	}
	if layers.Defaults, err = redact(d.Defaults); err != nil {
		return nil, err
	}
	if layers.Plan, err = redact(plan); err != nil {
		return nil, err
	}
	if layers.Tenant, err = redact(own); err != nil {
		return nil, err
	}
	return layers, nil
}
