package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/jaxxstorm/landlord/client"
)

// desired is what a tenant's configuration asks for, in the API's terms.
type desired struct {
	config      map[string]any    // compute_config with the secrets set
	secrets     map[string]string // secrets_wo; nil when left out
	labels      map[string]string
	annotations map[string]string
	plan        *client.PlanChoice
	window      *client.MaintenanceWindow
}

// desiredOf reads what m and the write-only secrets ask for; m's values
// are known.
func desiredOf(ctx context.Context, m *tenantModel, secrets types.Map, diags *diag.Diagnostics) *desired {
	d := &desired{window: windowOf(ctx, m.MaintenanceWindow, diags)}
	config, err := m.ComputeConfig.object()
	if err != nil {
		diags.AddAttributeError(path.Root("compute_config"), "Invalid compute_config", err.Error())
		return nil
	}
	for _, p := range nullPointers(config) {
		diags.AddAttributeError(path.Root("compute_config"), "Null in compute_config",
			fmt.Sprintf("compute_config holds null at %s. landlord_tenant sends changes as JSON merge patches, in which null removes a member rather than setting it: leave the member out.", p))
	}
	if !secrets.IsNull() {
		d.secrets = map[string]string{}
		diags.Append(secrets.ElementsAs(ctx, &d.secrets, false)...)
	}
	for _, sm := range []struct {
		v  types.Map
		to *map[string]string
	}{{m.Labels, &d.labels}, {m.Annotations, &d.annotations}} {
		if !sm.v.IsNull() {
			diags.Append(sm.v.ElementsAs(ctx, sm.to, false)...)
		}
	}
	if !m.Plan.IsNull() {
		d.plan = &client.PlanChoice{Name: m.Plan.ValueString()}
		if !m.Pin.IsNull() {
			d.plan.Version, d.plan.Pinned = m.Pin.ValueInt64(), true
		}
	}
	if diags.HasError() {
		return nil
	}
	if d.config, err = withSecrets(config, d.secrets); err != nil {
		diags.AddAttributeError(path.Root("secrets_wo"), "Invalid secrets_wo", fmt.Sprintf("A key is not a place in compute_config to put a secret: %v.", err))
		return nil
	}
	return d
}

// keptSecrets is config with each secret that shown, the tenant's config
// as landlord shows it, holds sent back as "[redacted]", which keeps the
// stored value; a secret whose place config no longer has (its sidecar
// gone) goes with it.
func keptSecrets(config, shown map[string]any) map[string]any {
	out := cloneObject(config)
	for _, p := range redactedPointers(shown) {
		if placeGone(out, shown, p) {
			continue
		}
		_ = setPointer(out, p, redacted)
	}
	return out
}

// placeGone reports whether config has lost the place of the secret at
// pointer in shown: an array on its way, or an item of one. (An object
// on its way that config lacks, such as secrets, is made again.)
func placeGone(config, shown any, pointer string) bool {
	tokens, err := pointerTokens(pointer)
	if err != nil {
		return true
	}
	for i := range tokens {
		prefix := pointerOf(tokens[:i])
		if _, isArray := mustValueAt(shown, prefix).([]any); isArray {
			if _, ok := valueAt(config, pointerOf(tokens[:i+1])); !ok {
				return true
			}
		}
	}
	return false
}

// mustValueAt is the value at pointer in doc, nil when there is none.
func mustValueAt(doc any, pointer string) any {
	v, _ := valueAt(doc, pointer)
	return v
}

// operatorAnnotation reports whether an annotation is one of those
// landlord's CLI and console set to ask something of the server
// (landlord.io/paused, landlord.io/retry): a configuration that does not
// declare one leaves it as it is.
func operatorAnnotation(key string) bool { return strings.HasPrefix(key, "landlord.io/") }

// pausedAnnotation, "true", stops landlord from reconciling a tenant.
const pausedAnnotation = "landlord.io/paused"

// createRequest is the create that d asks for.
func (d *desired) createRequest(name string) client.CreateTenantRequest {
	return client.CreateTenantRequest{Name: name, ComputeConfig: rawJSON(d.config), Labels: d.labels, Annotations: d.annotations,
		Plan: d.plan, MaintenanceWindow: d.window}
}

// patch is the JSON merge patch that makes cur what d asks for, or nil
// when cur is already. Secrets cur holds are kept when d leaves secrets
// out, and removed when d's secrets do not name them.
func (d *desired) patch(cur *client.Tenant) (map[string]any, error) {
	shown, err := decodeObject(cur.ComputeConfig)
	if err != nil {
		return nil, fmt.Errorf("tenant %s: its compute_config is %w", cur.Name, err)
	}
	want := d.config
	if d.secrets == nil {
		want = keptSecrets(d.config, shown)
	}
	patch := map[string]any{}
	if p, changed := mergeDiff(shown, want); changed {
		patch["compute_config"] = p
	}
	annotations := maps.Clone(d.annotations)
	for k, v := range cur.Annotations {
		if _, declared := d.annotations[k]; !declared && operatorAnnotation(k) {
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[k] = v
		}
	}
	for key, m := range map[string]struct{ cur, want map[string]string }{
		"labels": {cur.Labels, d.labels}, "annotations": {cur.Annotations, annotations}} {
		if p, changed := mergeDiff(anyMap(m.cur), anyMap(m.want)); changed {
			patch[key] = p
		}
	}
	switch {
	case d.plan == nil && cur.Plan != nil:
		patch["plan"] = nil
	case d.plan != nil && (cur.Plan == nil || cur.Plan.Name != d.plan.Name || cur.Plan.Pinned != d.plan.Pinned ||
		(d.plan.Pinned && cur.Plan.Version != d.plan.Version)):
		p := map[string]any{"name": d.plan.Name, "pinned": d.plan.Pinned}
		if d.plan.Pinned {
			p["version"] = d.plan.Version
		}
		patch["plan"] = p
	}
	if !sameWindow(cur.MaintenanceWindow, d.window) {
		if d.window == nil {
			patch["maintenance_window"] = nil
		} else {
			w := map[string]any{"start": d.window.Start, "end": d.window.End, "days": nil, "time_zone": nil}
			if len(d.window.Days) > 0 {
				w["days"] = d.window.Days
			}
			if d.window.TimeZone != "" {
				w["time_zone"] = d.window.TimeZone
			}
			patch["maintenance_window"] = w
		}
	}
	if len(patch) == 0 {
		return nil, nil
	}
	return patch, nil
}

func anyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sameWindow(a, b *client.MaintenanceWindow) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Start == b.Start && a.End == b.End && a.TimeZone == b.TimeZone && slices.Equal(a.Days, b.Days)
}
