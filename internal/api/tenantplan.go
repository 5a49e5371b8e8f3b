package api

import (
	"encoding/json"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
)

// A tenant's plan and maintenance window as the wire carries them: the
// rules of choosing a plan are service.ChoosePlan and service.PatchPlan.

// planChoice is the plan a create or a replace asks for, nil for none.
func planChoice(c *wire.PlanChoice) *tenant.PlanRef {
	if c == nil {
		return nil
	}
	return &tenant.PlanRef{Name: c.Name, Version: c.Version, Pinned: c.Pinned}
}

func wireWindow(w *tenant.Window) *wire.MaintenanceWindow {
	if w == nil {
		return nil
	}
	return &wire.MaintenanceWindow{Days: w.Days, Start: w.Start, End: w.End, TimeZone: w.TimeZone}
}

func domainWindow(w *wire.MaintenanceWindow) *tenant.Window {
	if w == nil {
		return nil
	}
	return &tenant.Window{Days: w.Days, Start: w.Start, End: w.End, TimeZone: w.TimeZone}
}

func wirePlan(p *tenant.PlanRef) *wire.TenantPlan {
	if p == nil {
		return nil
	}
	return &wire.TenantPlan{Name: p.Name, Version: p.Version, Pinned: p.Pinned}
}

// configLayers are the layers of a resolved config, each redacted.
func (s *Server) configLayers(provider string, plan, own json.RawMessage) (*wire.ConfigLayers, error) {
	layers := &wire.ConfigLayers{Defaults: json.RawMessage("null"), Plan: json.RawMessage("null"), Tenant: json.RawMessage("null")}
	redact := func(raw json.RawMessage) (json.RawMessage, error) {
		if jsonscan.IsNull(raw) {
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
