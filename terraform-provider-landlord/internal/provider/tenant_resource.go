package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jaxxstorm/landlord/client"
)

// Default timeouts of a tenant's operations.
const (
	defaultCreateTimeout = 10 * time.Minute
	defaultUpdateTimeout = 10 * time.Minute
	defaultDeleteTimeout = 10 * time.Minute
)

func newTenantResource() resource.Resource { return &tenantResource{} }

type tenantResource struct {
	data *providerData
}

var (
	_ resource.ResourceWithConfigure   = &tenantResource{}
	_ resource.ResourceWithImportState = &tenantResource{}
	_ resource.ResourceWithModifyPlan  = &tenantResource{}
)

// tenantModel is the landlord_tenant resource.
type tenantModel struct {
	Name             types.String   `tfsdk:"name"`
	ComputeConfig    JSONObject     `tfsdk:"compute_config"`
	SecretsWO        types.Map      `tfsdk:"secrets_wo"`
	SecretsWOVersion types.Int64    `tfsdk:"secrets_wo_version"`
	WaitForReady     types.Bool     `tfsdk:"wait_for_ready"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
	declared
	observed
}

func (r *tenantResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tenant"
}

func (r *tenantResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Required:            true,
			MarkdownDescription: "The tenant's name: unique among tenants that are not deleted. Changing it replaces the tenant.",
			PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
		},
		"compute_config": schema.StringAttribute{
			CustomType: JSONObjectType{},
			Required:   true,
			MarkdownDescription: "The tenant's compute_config as a JSON object (`jsonencode({...})`), validated at plan time against its compute provider's schema " +
				"through landlord's dry run. Key order, spacing and values equal to the provider's defaults show no diff. " +
				"Its `compute_provider` member chooses the provider (landlord's default when left out); a change of provider replaces the tenant. " +
				"For a tenant on a `plan`, it holds the tenant's overrides of the plan version's config. It must hold no secret (a field the provider's schema marks `writeOnly`): put those in `secrets_wo`.",
		},
		"secrets_wo": schema.MapAttribute{
			ElementType: types.StringType,
			Optional:    true,
			Sensitive:   true,
			WriteOnly:   true,
			MarkdownDescription: "The tenant's secrets, write-only: each key is a JSON pointer into compute_config (e.g. `/secrets/DB_PASSWORD`, `/sidecars/0/secrets/TOKEN`), " +
				"each value the secret, set there when the config is sent. Terraform never stores them in plan or state, and landlord never returns them. " +
				"Left out, the tenant keeps the secrets it has; set, it holds exactly these. A change of a value alone is not seen by Terraform: change `secrets_wo_version` with it.",
		},
		"secrets_wo_version": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Any number; changing it sends `secrets_wo` again (rotate a secret by changing its value and this).",
		},
		"labels": schema.MapAttribute{
			ElementType:         types.StringType,
			Optional:            true,
			MarkdownDescription: "Labels, for selection (lists, rollouts' waves).",
		},
		"annotations": schema.MapAttribute{
			ElementType:         types.StringType,
			Optional:            true,
			MarkdownDescription: "Annotations: notes that select nothing.",
		},
		"plan": schema.StringAttribute{
			Optional:            true,
			MarkdownDescription: "The plan the tenant follows: its compute_config then holds overrides of the plan version's config, and rollouts move it to new versions unless `pin` is set. Left out, the tenant follows no plan.",
		},
		"pin": schema.Int64Attribute{
			Optional:            true,
			MarkdownDescription: "Pins the tenant at this version of `plan`: rollouts leave it alone. Left out, the tenant starts at the plan's current version and follows its rollouts.",
			Validators: []validator.Int64{
				int64validator.AtLeast(1),
				int64validator.AlsoRequires(path.MatchRoot("plan")),
			},
		},
		"maintenance_window": schema.SingleNestedAttribute{
			Optional:            true,
			MarkdownDescription: "A weekly window in which rollouts may change the tenant; left out, any time.",
			Attributes: map[string]schema.Attribute{
				"days": schema.ListAttribute{
					ElementType:         types.StringType,
					Optional:            true,
					MarkdownDescription: "Days, `mon` … `sun`; left out, every day.",
					Validators: []validator.List{listvalidator.ValueStringsAre(
						stringvalidator.OneOf("mon", "tue", "wed", "thu", "fri", "sat", "sun"))},
				},
				"start": schema.StringAttribute{Required: true, MarkdownDescription: "Opening time of day, `HH:MM`."},
				"end":   schema.StringAttribute{Required: true, MarkdownDescription: "Closing time of day, `HH:MM`; at or before `start`, the window closes the next day."},
				"time_zone": schema.StringAttribute{
					Optional:            true,
					MarkdownDescription: "An IANA time zone, e.g. `Europe/Paris`; left out, UTC.",
				},
			},
		},
		"wait_for_ready": schema.BoolAttribute{
			Optional:            true,
			Computed:            true,
			Default:             booldefault.StaticBool(true),
			MarkdownDescription: "Wait, after a create or a change, until landlord has applied it and the tenant is `ready` (its endpoints answer); a tenant that fails is an error, and a created one is then tainted. Default `true`. A destroy always waits until the workload is gone.",
		},
		"timeouts": timeouts.Attributes(ctx, timeouts.Opts{Create: true, Update: true, Delete: true,
			CreateDescription: "How long a create may take, waiting included, as a Go duration (`10m`, `1h30m`). Default `10m`.",
			UpdateDescription: "How long a change may take, waiting included. Default `10m`.",
			DeleteDescription: "How long a destroy may wait for the workload to be gone. Default `10m`.",
		}),
	}
	maps.Copy(attrs, observedAttributes())
	resp.Schema = schema.Schema{
		MarkdownDescription: "A landlord tenant: a customer's dedicated workload, which landlord provisions on its compute provider and keeps as declared. " +
			"Import by name or id; after an import, a configuration that sets `secrets_wo_version` or `timeouts` (which landlord does not hold) plans one update in place that records them. " +
			"A tenant with several placements cannot be managed by this resource yet.",
		Attributes: attrs,
	}
}

// observedAttributes are the attributes landlord sets.
func observedAttributes() map[string]schema.Attribute {
	str := func(doc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: doc}
	}
	num := func(doc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: doc}
	}
	attrs := computed(observedTypes, observedDocs, str, num)
	attrs["id"] = schema.StringAttribute{
		Computed:            true,
		MarkdownDescription: observedDocs["id"],
		PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
	attrs["endpoints"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: observedDocs["endpoints"],
		NestedObject:        schema.NestedAttributeObject{Attributes: computed(endpointType.AttrTypes, endpointDocs, str, num)},
	}
	return attrs
}

func (r *tenantResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataOf(req.ProviderData, &resp.Diagnostics)
}

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
		// Keep each secret the tenant has: "[redacted]" sent back keeps
		// the stored value. One whose place is gone goes with it.
		kept := map[string]string{}
		for _, p := range redactedPointers(shown) {
			kept[p] = redacted
		}
		if want, err = withSecrets(want, kept); err != nil {
			want = d.config
		}
	}
	patch := map[string]any{}
	if p, changed := mergeDiff(shown, want); changed {
		patch["compute_config"] = p
	}
	for key, m := range map[string]struct{ cur, want map[string]string }{
		"labels": {cur.Labels, d.labels}, "annotations": {cur.Annotations, d.annotations}} {
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

// ModifyPlan validates a create or a change of a tenant through landlord's
// dry run, so that what the provider would refuse is an error of the plan,
// at the attribute at fault; and replaces a tenant whose compute_config
// asks for another compute provider.
func (r *tenantResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // a destroy
	}
	var plan tenantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var secrets types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("secrets_wo"), &secrets)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *tenantModel
	if !req.State.Raw.IsNull() {
		state = &tenantModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if !plan.ComputeConfig.IsUnknown() {
		config, err := plan.ComputeConfig.object()
		if err != nil {
			return // ValidateAttribute said why
		}
		switch want := providerOf(config); {
		case state == nil:
			if want != "" {
				resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("compute_provider"), want)...)
			}
		case want != "" && want != state.ComputeProvider.ValueString():
			resp.RequiresReplace.Append(path.Root("compute_config"))
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("compute_provider"), want)...)
			state = nil // validated as the create it becomes
		default:
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("compute_provider"), state.ComputeProvider)...)
		}
	}
	if plan.Plan.IsNull() {
		// No plan, no plan version: known now, not after apply.
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("plan_version"), types.Int64Null())...)
	}
	if state != nil {
		// The config as written may be the state's in other words (key
		// order, spacing, a default written out): then the plan keeps the
		// state's, and shows no change.
		same, err := sameConfig(ctx, r.data, state.ComputeProvider.ValueString(), plan.ComputeConfig, state.ComputeConfig)
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot read the defaults of compute provider "+state.ComputeProvider.ValueString(), err, nil)
			return
		}
		if same {
			plan.ComputeConfig = state.ComputeConfig
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("compute_config"), state.ComputeConfig)...)
		}
		if sameDesire(ctx, &plan, state) && plan.WaitForReady.Equal(state.WaitForReady) && plan.Timeouts.Equal(state.Timeouts) {
			// Nothing to change: not even the attributes landlord sets,
			// which the framework made unknown for the config's new words.
			resp.Plan.Raw = req.State.Raw.Copy()
			return
		}
	}
	if r.data == nil || !knownDesire(&plan, secrets) {
		return // validated at apply
	}
	if state != nil && sameDesire(ctx, &plan, state) {
		return
	}
	d := desiredOf(ctx, &plan, secrets, &resp.Diagnostics)
	if d == nil || !r.planPublished(ctx, d.plan, &resp.Diagnostics) {
		return
	}
	if state == nil {
		r.validateCreate(ctx, d, plan.Name.ValueString(), &resp.Diagnostics)
		return
	}
	cur, err := r.data.client.Tenants().Get(ctx, state.ID.ValueString(), client.GetOptions{})
	if client.IsNotFound(err) {
		return // gone since the refresh: the apply says so
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read tenant "+state.Name.ValueString(), err, nil)
		return
	}
	patch, err := d.patch(cur)
	if err != nil {
		resp.Diagnostics.AddError("Cannot plan a change of tenant "+cur.Name, err.Error())
		return
	}
	if patch != nil {
		r.validateChange(ctx, d, cur, patch, &resp.Diagnostics)
	}
}

// planPublished reports whether the plan (and the version) a tenant is
// to follow exist, so that a dry run can judge the tenant. When they do
// not, the configuration may create them in the same apply, before the
// tenant: the tenant is judged then, and the plan says so in a warning.
func (r *tenantResource) planPublished(ctx context.Context, choice *client.PlanChoice, diags *diag.Diagnostics) bool {
	if choice == nil {
		return true
	}
	p, err := r.data.client.Plans().Get(ctx, choice.Name)
	switch {
	case client.IsNotFound(err):
		diags.AddAttributeWarning(path.Root("plan"), "Tenant not validated at plan time",
			fmt.Sprintf("landlord has no plan %s yet. If this configuration creates it, the apply creates it first and validates the tenant then; if not, the apply fails.", choice.Name))
		return false
	case err != nil:
		addAPIError(diags, "Cannot read plan "+choice.Name, err, nil)
		return false
	case choice.Pinned && choice.Version > p.LatestVersion:
		diags.AddAttributeWarning(path.Root("pin"), "Tenant not validated at plan time",
			fmt.Sprintf("Plan %s has no version %d yet (its latest is %d). If this configuration publishes it, the apply publishes it first and validates the tenant then; if not, the apply fails.",
				choice.Name, choice.Version, p.LatestVersion))
		return false
	}
	return true
}

// knownDesire reports whether every attribute that makes the desired
// state is known: a dry run needs them all.
func knownDesire(m *tenantModel, secrets types.Map) bool {
	return !m.Name.IsUnknown() && !m.ComputeConfig.IsUnknown() && !m.Labels.IsUnknown() && !m.Annotations.IsUnknown() &&
		!m.Plan.IsUnknown() && !m.Pin.IsUnknown() && !m.MaintenanceWindow.IsUnknown() && !secrets.IsUnknown()
}

// sameDesire reports whether plan asks for what state holds.
func sameDesire(ctx context.Context, plan, state *tenantModel) bool {
	same, _ := plan.ComputeConfig.StringSemanticEquals(ctx, state.ComputeConfig)
	return same && plan.Labels.Equal(state.Labels) && plan.Annotations.Equal(state.Annotations) && plan.Plan.Equal(state.Plan) &&
		plan.Pin.Equal(state.Pin) && plan.MaintenanceWindow.Equal(state.MaintenanceWindow) && plan.SecretsWOVersion.Equal(state.SecretsWOVersion)
}

// validateCreate asks landlord, with a dry run, whether it would create
// a tenant named name as d asks. Its refusals, and secrets given in
// compute_config rather than secrets_wo, are errors of diags.
func (r *tenantResource) validateCreate(ctx context.Context, d *desired, name string, diags *diag.Diagnostics) {
	would, err := r.data.client.Tenants().Create(ctx, d.createRequest(name), client.CreateOptions{DryRun: true})
	if e, ok := problemOf(err); ok && e.Problem.Code == "name_taken" {
		diags.AddAttributeError(path.Root("name"), "Tenant name taken",
			fmt.Sprintf("landlord already has a tenant named %s. To manage it with Terraform, import it: terraform import <resource address> %s", name, name))
		return
	}
	r.judged(d, name, would, err, diags)
}

// validateChange asks landlord, with a dry run, whether it would make cur
// what d asks with patch (d.patch(cur)), at cur's version.
func (r *tenantResource) validateChange(ctx context.Context, d *desired, cur *client.Tenant, patch map[string]any, diags *diag.Diagnostics) {
	would, err := r.data.client.Tenants().Patch(ctx, cur.ID, rawJSON(patch), client.UpdateOptions{DryRun: true, IfMatch: cur.Version})
	if client.IsPreconditionFailed(err) {
		diags.AddError("Tenant changed meanwhile", fmt.Sprintf("Tenant %s changed since it was read: %v. Plan again.", cur.Name, err))
		return
	}
	r.judged(d, cur.Name, would, err, diags)
}

// judged reports a dry run's answer: its refusal, at the attributes at
// fault, or the secrets in clear of the tenant it would make.
func (r *tenantResource) judged(d *desired, name string, would *client.Tenant, err error, diags *diag.Diagnostics) {
	if err != nil {
		addAPIError(diags, "landlord refuses tenant "+name, err, tenantAttribute(d.secrets))
		return
	}
	checkSecretsInClear(d, would, diags)
}

// checkSecretsInClear refuses a config whose secrets are written in
// compute_config, where Terraform would keep them in state in clear.
func checkSecretsInClear(d *desired, would *client.Tenant, diags *diag.Diagnostics) {
	shown, err := decodeJSON(would.ComputeConfig)
	if err != nil {
		return
	}
	for _, p := range clearSecrets(d.config, shown) {
		if _, ok := d.secrets[p]; ok {
			continue
		}
		diags.AddAttributeError(path.Root("compute_config"), "Secret in compute_config",
			fmt.Sprintf("%s is a secret (its provider's schema marks it writeOnly), and compute_config is kept in Terraform's state in clear. "+
				"Take it out of compute_config and give it in secrets_wo instead: secrets_wo = { %q = ... }.", p, p))
	}
}

func (r *tenantResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var plan tenantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	var secrets types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("secrets_wo"), &secrets)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultCreateTimeout)
	resp.Diagnostics.Append(diags...)
	d := desiredOf(ctx, &plan, secrets, &resp.Diagnostics)
	if d == nil || resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := plan.Name.ValueString()
	// The plan's dry run ran without the values known only at apply.
	r.validateCreate(ctx, d, name, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	t, err := r.data.client.Tenants().Create(ctx, d.createRequest(name), client.CreateOptions{IdempotencyKey: idempotencyKey()})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot create tenant "+name, err, tenantAttribute(d.secrets))
		return
	}
	t = r.await(ctx, plan.WaitForReady.ValueBool(), t, "created", &resp.Diagnostics)
	r.settle(ctx, &plan, t, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// await waits, when asked, until t is ready at its generation, and
// returns the tenant last read; a wait that fails is an error of diags.
func (r *tenantResource) await(ctx context.Context, wait bool, t *client.Tenant, did string, diags *diag.Diagnostics) *client.Tenant {
	if !wait {
		return t
	}
	last, err := r.data.client.Tenants().Wait(ctx, t.ID, client.UntilReady, nil)
	if last != nil {
		t = last
	}
	if err != nil {
		var failed *client.TenantFailedError
		detail := err.Error()
		switch {
		case errors.As(err, &failed):
			detail = fmt.Sprintf("landlord %s the tenant, and it failed: %s.", did, failed.Tenant.StatusMessage)
		case errors.Is(err, context.DeadlineExceeded):
			detail = fmt.Sprintf("landlord %s the tenant, which is not ready within the timeout: %v. "+
				"Raise timeouts, or set wait_for_ready = false; landlord goes on with the tenant either way.", did, err)
		}
		diags.AddError(fmt.Sprintf("Tenant %s is not ready", t.Name), detail+" Its history: landlord history "+t.Name)
	}
	return t
}

// settle sets m's observed attributes from t, as an apply ends.
func (r *tenantResource) settle(ctx context.Context, m *tenantModel, t *client.Tenant, diags *diag.Diagnostics) {
	m.observe(ctx, t, diags)
}

func (r *tenantResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var state tenantModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	t, err := r.data.client.Tenants().Get(ctx, state.ID.ValueString(), client.GetOptions{})
	if client.IsNotFound(err) || (err == nil && t.Status == client.StatusDeleting) {
		// Deleted, or being deleted, outside Terraform: a plan creates
		// it again.
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read tenant "+state.Name.ValueString(), err, nil)
		return
	}
	r.read(ctx, &state, t, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// read sets m from t, as landlord holds it: a change made outside
// Terraform shows as a diff in the next plan.
func (r *tenantResource) read(ctx context.Context, m *tenantModel, t *client.Tenant, diags *diag.Diagnostics) {
	if len(t.Placements) > 0 {
		diags.AddError("Tenant has placements", fmt.Sprintf("Tenant %s is declared with placements (%d), which landlord_tenant cannot manage yet: manage it with the landlord CLI or the API.", t.Name, len(t.Placements)))
		return
	}
	config, err := shownConfig(ctx, r.data, t, m.ComputeConfig)
	if err != nil {
		diags.AddError("Cannot read tenant "+t.Name, err.Error())
		return
	}
	m.Name = types.StringValue(t.Name)
	m.ComputeConfig = config
	m.declare(ctx, t, diags)
	if m.WaitForReady.IsNull() {
		m.WaitForReady = types.BoolValue(true) // an import's
	}
	m.observe(ctx, t, diags)
}

func (r *tenantResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var plan, state tenantModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	var secrets types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root("secrets_wo"), &secrets)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Update(ctx, defaultUpdateTimeout)
	resp.Diagnostics.Append(diags...)
	d := desiredOf(ctx, &plan, secrets, &resp.Diagnostics)
	if d == nil || resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tenants := r.data.client.Tenants()
	name := state.Name.ValueString()
	cur, err := tenants.Get(ctx, state.ID.ValueString(), client.GetOptions{})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read tenant "+name, err, nil)
		return
	}
	if cur.Version != state.Version.ValueInt64() {
		resp.Diagnostics.AddError("Tenant changed meanwhile",
			fmt.Sprintf("Tenant %s is at version %d, not %d as when this plan was made: someone changed it since. Plan again.", name, cur.Version, state.Version.ValueInt64()))
		return
	}
	patch, err := d.patch(cur)
	if err != nil {
		resp.Diagnostics.AddError("Cannot change tenant "+name, err.Error())
		return
	}
	t := cur
	if patch != nil {
		r.validateChange(ctx, d, cur, patch, &resp.Diagnostics)
		if resp.Diagnostics.HasError() {
			return
		}
		t, err = tenants.Patch(ctx, cur.ID, rawJSON(patch), client.UpdateOptions{IfMatch: cur.Version})
		if client.IsPreconditionFailed(err) {
			resp.Diagnostics.AddError("Tenant changed meanwhile", fmt.Sprintf("Tenant %s changed while it was being changed: %v. Plan again.", name, err))
			return
		}
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot change tenant "+name, err, tenantAttribute(d.secrets))
			return
		}
	}
	t = r.await(ctx, plan.WaitForReady.ValueBool(), t, "changed", &resp.Diagnostics)
	r.settle(ctx, &plan, t, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *tenantResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var state tenantModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := state.Timeouts.Delete(ctx, defaultDeleteTimeout)
	resp.Diagnostics.Append(diags...)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tenants := r.data.client.Tenants()
	name, id := state.Name.ValueString(), state.ID.ValueString()
	if _, err := tenants.Delete(ctx, id, client.DeleteOptions{}); err != nil {
		if client.IsNotFound(err) {
			return
		}
		addAPIError(&resp.Diagnostics, "Cannot delete tenant "+name, err, nil)
		return
	}
	// Until the workload is gone: what Terraform forgets must not run.
	if _, err := tenants.Wait(ctx, id, client.UntilDeleted, nil); err != nil && !client.IsNotFound(err) {
		resp.Diagnostics.AddError("Tenant "+name+" is not deleted",
			fmt.Sprintf("landlord is deleting the tenant, and has not finished: %v. It goes on; run terraform destroy again to wait for it, or raise timeouts.delete.", err))
	}
}

// ImportState imports a tenant by name or id.
func (r *tenantResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	t, err := r.data.client.Tenants().Get(ctx, req.ID, client.GetOptions{})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot import tenant "+req.ID, err, nil)
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), t.ID)...)
}

// idempotencyKey makes a create's retries safe: the client sends the same
// key with each.
func idempotencyKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "terraform-" + strings.ToLower(hex.EncodeToString(b))
}
