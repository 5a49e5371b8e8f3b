package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/jaxxstorm/landlord/client"
)

// ModifyPlan validates a create or a change of a tenant through landlord's
// dry run, so that what the provider would refuse is an error of the plan,
// at the attribute at fault; and replaces a tenant whose compute_config
// asks for another compute provider.
func (r *tenantResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // a destroy
	}
	plan, secrets := planned(ctx, req.Plan, req.Config, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	var state *tenantModel
	replacing := false
	if !req.State.Raw.IsNull() {
		state = &tenantModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, state)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if state != nil && !plan.Name.IsUnknown() && !plan.Name.Equal(state.Name) {
		state, replacing = nil, true // a new name is a new tenant
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
			state, replacing = nil, true // validated as the create it becomes
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
		same, err := sameConfig(ctx, r.data, defaultsOf(state.ComputeProvider.ValueString(), !plan.Plan.IsNull()), plan.ComputeConfig, state.ComputeConfig)
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot read the defaults of compute provider "+state.ComputeProvider.ValueString(), err, nil)
			return
		}
		if same {
			plan.ComputeConfig = state.ComputeConfig
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("compute_config"), state.ComputeConfig)...)
		}
		if sameDesire(ctx, &plan, state) && plan.Name.Equal(state.Name) && plan.WaitForReady.Equal(state.WaitForReady) && plan.Timeouts.Equal(state.Timeouts) {
			// Nothing to change: not even the attributes landlord sets,
			// which the framework made unknown for the config's new words.
			resp.Plan.Raw = req.State.Raw.Copy()
			return
		}
	}
	if r.data == nil || !knownDesire(ctx, &plan, secrets) {
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
		r.validateCreate(ctx, d, plan.Name.ValueString(), replacing, &resp.Diagnostics)
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
	case p.LatestVersion == 0:
		diags.AddAttributeWarning(path.Root("plan"), "Tenant not validated at plan time",
			fmt.Sprintf("Plan %s has no version yet. If this configuration publishes one, the apply publishes it first and validates the tenant then; if not, the apply fails.", choice.Name))
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
// state is wholly known (a map's values, a window's fields): a dry run
// needs them all.
func knownDesire(ctx context.Context, m *tenantModel, secrets types.Map) bool {
	for _, v := range []attr.Value{m.Name, m.ComputeConfig, m.Labels, m.Annotations, m.Plan, m.Pin, m.MaintenanceWindow, secrets} {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil || !tv.IsFullyKnown() {
			return false
		}
	}
	return true
}

// sameDesire reports whether plan asks for what state holds.
func sameDesire(ctx context.Context, plan, state *tenantModel) bool {
	same, _ := plan.ComputeConfig.StringSemanticEquals(ctx, state.ComputeConfig)
	return same && plan.Labels.Equal(state.Labels) && plan.Annotations.Equal(state.Annotations) && plan.Plan.Equal(state.Plan) &&
		plan.Pin.Equal(state.Pin) && plan.MaintenanceWindow.Equal(state.MaintenanceWindow) && plan.SecretsWOVersion.Equal(state.SecretsWOVersion)
}

// validateCreate asks landlord, with a dry run, whether it would create
// a tenant named name as d asks; replacing, the tenant of that name is the
// one the create replaces, destroyed first, so that its name is no fault.
// Refusals, and secrets given in compute_config rather than secrets_wo,
// are errors of diags.
func (r *tenantResource) validateCreate(ctx context.Context, d *desired, name string, replacing bool, diags *diag.Diagnostics) {
	tenants := r.data.client.Tenants()
	would, err := tenants.Create(ctx, d.createRequest(name), client.CreateOptions{DryRun: true})
	if e, ok := problemOf(err); ok && e.Problem.Code == "name_taken" {
		switch holder, gerr := tenants.Get(ctx, name, client.GetOptions{}); {
		case replacing:
			// The rest of the tenant was judged before its name.
		case gerr == nil && providerOf(d.config) != "" && holder.ComputeProvider != providerOf(d.config):
			// Terraform plans the create of a replacement on its own,
			// without the tenant it replaces: one of that name on another
			// provider is, most likely, that tenant.
			diags.AddAttributeWarning(path.Root("name"), "Tenant name taken",
				fmt.Sprintf("landlord has a tenant named %s on compute provider %s. If this plan replaces it (a change of compute_provider), the apply destroys it first; if not, the apply fails: import it instead.", name, holder.ComputeProvider))
		case gerr == nil && holder.Status == client.StatusDeleting:
			diags.AddAttributeError(path.Root("name"), "Tenant name taken",
				fmt.Sprintf("landlord is deleting a tenant named %s (asked outside Terraform). Apply again once it is gone: landlord history %s", name, name))
		default:
			diags.AddAttributeError(path.Root("name"), "Tenant name taken",
				fmt.Sprintf("landlord already has a tenant named %s. To manage it with Terraform, import it: terraform import <resource address> %s", name, name))
		}
		return
	}
	r.judged(d, name, would, err, diags)
}

// validateChange asks landlord, with a dry run, whether it would make cur
// what d asks with patch (d.patch(cur)), at cur's version.
func (r *tenantResource) validateChange(ctx context.Context, d *desired, cur *client.Tenant, patch map[string]any, diags *diag.Diagnostics) {
	would, err := r.data.client.Tenants().Patch(ctx, cur.ID, rawJSON(patch), client.UpdateOptions{DryRun: true, IfMatch: cur.Version})
	if client.IsPreconditionFailed(err) {
		changedMeanwhile(diags, cur.Name)
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

// changedMeanwhile is the error of a change refused because the tenant
// changed since it was read (412).
func changedMeanwhile(diags *diag.Diagnostics, name string) {
	diags.AddError("Tenant changed meanwhile",
		fmt.Sprintf("Tenant %s changed since Terraform read it: someone changed it outside this run. Plan again, to see the change and decide.", name))
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
