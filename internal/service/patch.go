package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/jaxxstorm/landlord/internal/jsonscan"
	"github.com/jaxxstorm/landlord/internal/tenant"
	"github.com/jaxxstorm/landlord/internal/wire"
	"github.com/jaxxstorm/landlord/sdk/workload"
)

// Replacement is a tenant's whole desired state, as a replace sends it.
type Replacement struct {
	// ComputeConfig is the config of a tenant of one placement;
	// Placements, every placement of a tenant as it is to be.
	ComputeConfig json.RawMessage
	Placements    []PlacementRequest
	// Labels, Annotations and MaintenanceWindow left nil keep the
	// tenant's, so that a client that knows nothing of them does not wipe
	// them; empty ones clear them.
	Labels            map[string]string
	Annotations       map[string]string
	MaintenanceWindow *tenant.Window
	// Plan is the plan chosen (see ChoosePlan); nil keeps the tenant's.
	Plan *tenant.PlanRef
}

// Replace is the change (Change.Next) that replaces a tenant's desired
// state with r.
func Replace(r Replacement) func(cur *tenant.Tenant) (Desired, error) {
	return func(cur *tenant.Tenant) (Desired, error) {
		next := Desired{ComputeConfig: r.ComputeConfig, Placements: r.Placements, Labels: r.Labels, Annotations: r.Annotations, MaintenanceWindow: r.MaintenanceWindow}
		if r.Labels == nil {
			next.Labels = cur.Labels
		}
		if r.Annotations == nil {
			next.Annotations = cur.Annotations
		}
		if r.MaintenanceWindow == nil {
			next.MaintenanceWindow = cur.MaintenanceWindow
		}
		var err error
		next.Plan, err = ChoosePlan(cur.Plan, r.Plan)
		return next, err
	}
}

// Patch is the change (Change.Next) that applies a JSON merge patch (RFC
// 7396), given as its top-level members, to a tenant's desired state.
// Members the patch does not name stay exactly as stored.
func Patch(members map[string]json.RawMessage) func(cur *tenant.Tenant) (Desired, error) {
	return func(cur *tenant.Tenant) (Desired, error) {
		next := Desired{ComputeConfig: cur.ComputeConfig, Labels: cur.Labels, Annotations: cur.Annotations,
			Plan: clonePlanRef(cur.Plan), MaintenanceWindow: cur.MaintenanceWindow}
		if len(cur.Placements) > 1 {
			next.ComputeConfig, next.Placements = nil, requestsOf(cur)
		}
		var err error
		if raw, ok := members["placements"]; ok {
			// A merge patch replaces an array whole (RFC 7396).
			if next.Placements, err = patchPlacements(raw); err != nil {
				return next, err
			}
			next.ComputeConfig = nil
			if _, both := members["compute_config"]; both {
				return next, refuse(KindMalformed, wire.CodeInvalidBody, "a patch changes compute_config or placements, not both",
					Field{Pointer: "/placements", Message: "cannot be given with compute_config"})
			}
		}
		if _, ok := members["compute_config"]; ok && next.Placements != nil {
			return next, refuse(KindInvalid, wire.CodeInvalidBody,
				fmt.Sprintf("tenant %s has placements %s: patch placements, not compute_config", cur.Name, strings.Join(cur.PlacementNames(), ", ")),
				Field{Pointer: "/compute_config", Message: "cannot be patched on a tenant with placements; patch placements"})
		}
		if raw, ok := members["compute_config"]; ok {
			if next.ComputeConfig, err = mergeJSON(cur.ComputeConfig, raw); err != nil {
				return next, err
			}
			if err := RequireObject(next.ComputeConfig, "/compute_config"); err != nil {
				return next, err
			}
		}
		if raw, ok := members["labels"]; ok {
			if next.Labels, err = mergeStrings(cur.Labels, raw, "/labels"); err != nil {
				return next, err
			}
		}
		if raw, ok := members["annotations"]; ok {
			if next.Annotations, err = mergeStrings(cur.Annotations, raw, "/annotations"); err != nil {
				return next, err
			}
		}
		if raw, ok := members["plan"]; ok {
			if next.Plan, err = patchPlan(cur.Plan, raw); err != nil {
				return next, err
			}
		}
		if raw, ok := members["maintenance_window"]; ok {
			if next.MaintenanceWindow, err = patchWindow(cur.MaintenanceWindow, raw); err != nil {
				return next, err
			}
		}
		return next, nil
	}
}

// mergeJSON applies a JSON merge patch to a document, keeping numbers
// exactly as written.
func mergeJSON(doc, patch json.RawMessage) (json.RawMessage, error) {
	decode := func(raw json.RawMessage) (any, error) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v)
	}
	target, err := decode(doc)
	if err != nil {
		return nil, fmt.Errorf("service: stored compute_config: %w", err)
	}
	p, err := decode(patch)
	if err != nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidBody, "compute_config in the patch is not valid JSON")
	}
	return json.Marshal(workload.MergePatch(target, p))
}

// mergeStrings applies a merge patch to a map of strings: null removes a key
// (or, for the whole map, every key).
func mergeStrings(cur map[string]string, raw json.RawMessage, at string) (map[string]string, error) {
	if jsonscan.IsNull(raw) {
		return nil, nil
	}
	var patch map[string]*string
	if err := json.Unmarshal(raw, &patch); err != nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidBody, at[1:]+" must be an object of strings", Field{Pointer: at, Message: "must be an object of strings (null removes a key)"})
	}
	out := maps.Clone(cur)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = *v
		}
	}
	return out, nil
}

// patchPlan applies a merge patch's plan member to cur: null leaves the
// plan; an object changes the members it names (see PatchPlan; version
// null is the plan's current version; pinned null unpins).
func patchPlan(cur *tenant.PlanRef, raw json.RawMessage) (*tenant.PlanRef, error) {
	if jsonscan.IsNull(raw) {
		return nil, nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidBody, "plan must be an object", Field{Pointer: "/plan", Message: "must be an object or null"})
	}
	var choice wire.PlanChoice
	if err := json.Unmarshal(raw, &choice); err != nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidBody, "plan is not valid: "+err.Error(), Field{Pointer: "/plan", Message: "has a member of the wrong type"})
	}
	var p PlanPatch
	if v, ok := members["name"]; ok && !jsonscan.IsNull(v) {
		p.SetName, p.Name = true, choice.Name
	}
	if v, ok := members["version"]; ok {
		p.SetVersion = true
		if !jsonscan.IsNull(v) {
			p.Version = choice.Version
		}
	}
	if _, ok := members["pinned"]; ok {
		p.SetPinned, p.Pinned = true, choice.Pinned
	}
	return PatchPlan(cur, p)
}

// patchWindow applies a merge patch's maintenance_window member to cur:
// null removes the window, an object merges into it.
func patchWindow(cur *tenant.Window, raw json.RawMessage) (*tenant.Window, error) {
	if jsonscan.IsNull(raw) {
		return nil, nil
	}
	doc := json.RawMessage("{}")
	if cur != nil {
		doc, _ = json.Marshal(cur)
	}
	merged, err := mergeJSON(doc, raw)
	if err != nil {
		return nil, err
	}
	var w tenant.Window
	if err := json.Unmarshal(merged, &w); err != nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidBody, "maintenance_window must be an object", Field{Pointer: "/maintenance_window", Message: "must be an object or null"})
	}
	return &w, nil
}

// patchPlacements reads a merge patch's placements member: the whole list
// of placements as it is to be.
func patchPlacements(raw json.RawMessage) ([]PlacementRequest, error) {
	var in []struct {
		Name          string          `json:"name"`
		ComputeConfig json.RawMessage `json:"compute_config"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, refuse(KindMalformed, wire.CodeInvalidBody, "placements in the patch must be an array of placements",
			Field{Pointer: "/placements", Message: "must be an array of objects with name and compute_config"})
	}
	out := make([]PlacementRequest, len(in))
	for i, p := range in {
		out[i] = PlacementRequest{Name: p.Name, ComputeConfig: p.ComputeConfig}
	}
	return out, nil
}
