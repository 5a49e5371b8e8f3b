package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/jaxxstorm/landlord/client"
)

// endpointType is an endpoint of a tenant, as the endpoints attribute
// lists them.
var endpointType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"container":      types.StringType,
	"name":           types.StringType,
	"container_port": types.Int64Type,
	"protocol":       types.StringType,
	"address":        types.StringType,
}}

// observedTypes are the types of the attributes landlord sets on a
// tenant (observed's), but its endpoints.
var observedTypes = map[string]attr.Type{
	"id":                  types.StringType,
	"compute_provider":    types.StringType,
	"plan_version":        types.Int64Type,
	"status":              types.StringType,
	"status_message":      types.StringType,
	"generation":          types.Int64Type,
	"observed_generation": types.Int64Type,
	"version":             types.Int64Type,
}

// observedDocs and endpointDocs describe the attributes landlord sets on
// a tenant and its endpoints, for the resource and the data source alike.
var (
	observedDocs = map[string]string{
		"id":                  "The tenant's id.",
		"compute_provider":    "The compute provider the tenant runs on.",
		"plan_version":        "The version of `plan` the tenant runs.",
		"status":              "The tenant's status: `requested`, `provisioning`, `ready`, `updating`, `deleting`, `deleted` or `failed`.",
		"status_message":      "Why the tenant is in its status, e.g. the provider's error.",
		"generation":          "The generation of the desired state: each change adds one.",
		"observed_generation": "The generation landlord last applied.",
		"version":             "The record's version, which every write adds one to (the API's ETag).",
		"endpoints":           "Where the tenant's container ports can be reached.",
	}
	endpointDocs = map[string]string{
		"container":      "The container.",
		"name":           "The port's name, if it has one.",
		"container_port": "The port the container listens on.",
		"protocol":       "`tcp` or `udp`.",
		"address":        "`host:port` where the port answers.",
	}
)

// computed makes, in one schema package's terms (str and num make its
// computed string and number attributes from a description), an attribute
// for each of kinds, described by docs.
func computed[A any](kinds map[string]attr.Type, docs map[string]string, str, num func(doc string) A) map[string]A {
	out := make(map[string]A, len(kinds))
	for name, kind := range kinds {
		if kind.Equal(types.Int64Type) {
			out[name] = num(docs[name])
		} else {
			out[name] = str(docs[name])
		}
	}
	return out
}

// windowType is a maintenance window.
var windowType = types.ObjectType{AttrTypes: map[string]attr.Type{
	"days":      types.ListType{ElemType: types.StringType},
	"start":     types.StringType,
	"end":       types.StringType,
	"time_zone": types.StringType,
}}

// windowModel is a maintenance window's attributes.
type windowModel struct {
	Days     types.List   `tfsdk:"days"`
	Start    types.String `tfsdk:"start"`
	End      types.String `tfsdk:"end"`
	TimeZone types.String `tfsdk:"time_zone"`
}

// declared are the attributes of a tenant's declared state, but its
// name and compute_config: the same in the resource and the data source.
type declared struct {
	Labels            types.Map    `tfsdk:"labels"`
	Annotations       types.Map    `tfsdk:"annotations"`
	Plan              types.String `tfsdk:"plan"`
	Pin               types.Int64  `tfsdk:"pin"`
	MaintenanceWindow types.Object `tfsdk:"maintenance_window"`
}

// declare sets d from t; what d held is the prior value (see stringMap).
func (d *declared) declare(ctx context.Context, t *client.Tenant, diags *diag.Diagnostics) {
	d.Labels = stringMap(ctx, t.Labels, d.Labels, diags)
	d.Annotations = stringMap(ctx, t.Annotations, d.Annotations, diags)
	d.Plan, d.Pin = types.StringNull(), types.Int64Null()
	if t.Plan != nil {
		d.Plan = types.StringValue(t.Plan.Name)
		if t.Plan.Pinned {
			d.Pin = types.Int64Value(t.Plan.Version)
		}
	}
	d.MaintenanceWindow = windowValue(ctx, t.MaintenanceWindow, diags)
}

// observed are the attributes of a tenant that landlord sets: the same in
// the resource and the data source.
type observed struct {
	ID                 types.String `tfsdk:"id"`
	ComputeProvider    types.String `tfsdk:"compute_provider"`
	PlanVersion        types.Int64  `tfsdk:"plan_version"`
	Status             types.String `tfsdk:"status"`
	StatusMessage      types.String `tfsdk:"status_message"`
	Generation         types.Int64  `tfsdk:"generation"`
	ObservedGeneration types.Int64  `tfsdk:"observed_generation"`
	Version            types.Int64  `tfsdk:"version"`
	Endpoints          types.List   `tfsdk:"endpoints"`
}

// observe sets o from t.
func (o *observed) observe(ctx context.Context, t *client.Tenant, diags *diag.Diagnostics) {
	o.ID = types.StringValue(t.ID)
	o.ComputeProvider = types.StringValue(t.ComputeProvider)
	o.PlanVersion = types.Int64Null()
	if t.Plan != nil {
		o.PlanVersion = types.Int64Value(t.Plan.Version)
	}
	o.Status = types.StringValue(t.Status)
	o.StatusMessage = types.StringValue(t.StatusMessage)
	o.Generation = types.Int64Value(t.Generation)
	o.ObservedGeneration = types.Int64Value(t.ObservedGeneration)
	o.Version = types.Int64Value(t.Version)
	endpoints := make([]attr.Value, len(t.Endpoints))
	for i, e := range t.Endpoints {
		v, d := types.ObjectValue(endpointType.AttrTypes, map[string]attr.Value{
			"container":      types.StringValue(e.Container),
			"name":           types.StringValue(e.Name),
			"container_port": types.Int64Value(int64(e.ContainerPort)),
			"protocol":       types.StringValue(string(e.Protocol)),
			"address":        types.StringValue(e.Address),
		})
		diags.Append(d...)
		endpoints[i] = v
	}
	list, d := types.ListValue(endpointType, endpoints)
	diags.Append(d...)
	o.Endpoints = list
}

// stringMap is labels or annotations as Terraform holds them: null when
// the tenant has none, unless prior, what the configuration said, is an
// empty map (landlord does not tell none from empty).
func stringMap(ctx context.Context, m map[string]string, prior types.Map, diags *diag.Diagnostics) types.Map {
	if len(m) == 0 {
		if !prior.IsNull() && !prior.IsUnknown() && len(prior.Elements()) == 0 {
			return prior
		}
		return types.MapNull(types.StringType)
	}
	v, d := types.MapValueFrom(ctx, types.StringType, m)
	diags.Append(d...)
	return v
}

// windowValue is a maintenance window as the attribute holds it.
func windowValue(ctx context.Context, w *client.MaintenanceWindow, diags *diag.Diagnostics) types.Object {
	if w == nil {
		return types.ObjectNull(windowType.AttrTypes)
	}
	days := types.ListNull(types.StringType)
	if len(w.Days) > 0 {
		var d diag.Diagnostics
		days, d = types.ListValueFrom(ctx, types.StringType, w.Days)
		diags.Append(d...)
	}
	tz := types.StringNull()
	if w.TimeZone != "" {
		tz = types.StringValue(w.TimeZone)
	}
	v, d := types.ObjectValueFrom(ctx, windowType.AttrTypes, windowModel{Days: days, Start: types.StringValue(w.Start), End: types.StringValue(w.End), TimeZone: tz})
	diags.Append(d...)
	return v
}

// windowOf is the maintenance window an attribute declares; nil when null.
func windowOf(ctx context.Context, v types.Object, diags *diag.Diagnostics) *client.MaintenanceWindow {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var m windowModel
	diags.Append(v.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	w := &client.MaintenanceWindow{Start: m.Start.ValueString(), End: m.End.ValueString(), TimeZone: m.TimeZone.ValueString()}
	diags.Append(m.Days.ElementsAs(ctx, &w.Days, false)...)
	return w
}

// shownConfig is a tenant's compute_config as the configuration would
// write it: landlord's answer without the secrets it redacts; prior when
// that is the same config (sameConfig), so that neither landlord's
// encoding nor a default written out shows as a change.
func shownConfig(ctx context.Context, data *providerData, t *client.Tenant, prior JSONObject) (JSONObject, error) {
	server, err := decodeObject(t.ComputeConfig)
	if err != nil {
		return JSONObject{}, fmt.Errorf("tenant %s: its compute_config is %w", t.Name, err)
	}
	shown := NewJSONObject(encodeJSON(withoutRedacted(server)))
	same, err := sameConfig(ctx, data, defaultsOf(t.ComputeProvider, t.Plan != nil), prior, shown)
	if err != nil {
		return JSONObject{}, err
	}
	if same {
		return prior, nil
	}
	return shown, nil
}

// defaultsOf is the compute provider whose defaults are merged right
// under a tenant's config: its provider's, unless it follows a plan, whose
// version's config lies between (then none: "").
func defaultsOf(provider string, onPlan bool) string {
	if onPlan {
		return ""
	}
	return provider
}

// sameConfig reports whether two compute_configs of a tenant are the same
// JSON, or, with a provider (see defaultsOf), become the same once its
// defaults are merged under both, as landlord merges them.
func sameConfig(ctx context.Context, data *providerData, provider string, a, b JSONObject) (bool, error) {
	if a.IsNull() || a.IsUnknown() || b.IsNull() || b.IsUnknown() {
		return false, nil
	}
	x, errX := a.object()
	y, errY := b.object()
	if errX != nil || errY != nil {
		return false, nil
	}
	if jsonEqual(x, y) {
		return true, nil
	}
	if data == nil || provider == "" {
		return false, nil
	}
	defaults, err := data.computeDefaults(ctx, provider)
	if err != nil || defaults == nil {
		return false, err
	}
	return jsonEqual(mergePatch(defaults, x), mergePatch(defaults, y)), nil
}
