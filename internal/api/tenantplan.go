package api

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// A tenant's plan and maintenance window as the wire carries them: the
// rules of choosing a plan are service.ChoosePlan and service.PatchPlan.

// planChoice is the plan a create or a replace asks for, nil for none.
func planChoice(c *PlanChoice) *tenant.PlanRef {
	if c == nil {
		return nil
	}
	return &tenant.PlanRef{Name: c.Name, Version: c.Version, Pinned: c.Pinned}
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
	var p service.PlanPatch
	if v, ok := members["name"]; ok && !isNull(v) {
		p.SetName, p.Name = true, choice.Name
	}
	if v, ok := members["version"]; ok {
		p.SetVersion = true
		if !isNull(v) {
			p.Version = choice.Version
		}
	}
	if _, ok := members["pinned"]; ok {
		p.SetPinned, p.Pinned = true, choice.Pinned
	}
	return service.PatchPlan(cur, p)
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

// isNull reports whether a JSON value is null: a member given as null,
// which a merge patch reads as "remove".
func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

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
