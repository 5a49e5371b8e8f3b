package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
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

func (r *tenantResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataOf(req.ProviderData, &resp.Diagnostics)
}

func (r *tenantResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	plan, secrets := planned(ctx, req.Plan, req.Config, &resp.Diagnostics)
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
	r.validateCreate(ctx, d, name, false, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	t, err := r.data.client.Tenants().Create(ctx, d.createRequest(name), client.CreateOptions{IdempotencyKey: idempotencyKey()})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot create tenant "+name, err, tenantAttribute(d.secrets))
		return
	}
	t = r.await(ctx, plan.WaitForReady.ValueBool(), t, "created", &resp.Diagnostics)
	plan.observe(ctx, t, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// planned reads the tenant a plan holds, and the write-only secrets,
// which only the configuration holds.
func planned(ctx context.Context, plan tfsdk.Plan, config tfsdk.Config, diags *diag.Diagnostics) (tenantModel, types.Map) {
	var m tenantModel
	diags.Append(plan.Get(ctx, &m)...)
	var secrets types.Map
	diags.Append(config.GetAttribute(ctx, path.Root("secrets_wo"), &secrets)...)
	return m, secrets
}

// await waits, when asked, until t is ready at its generation, and
// returns the tenant last read; a wait that fails is an error of diags.
func (r *tenantResource) await(ctx context.Context, wait bool, t *client.Tenant, did string, diags *diag.Diagnostics) *client.Tenant {
	if !wait {
		return t
	}
	if t.Annotations[pausedAnnotation] == "true" {
		diags.AddWarning(fmt.Sprintf("Tenant %s is paused", t.Name),
			fmt.Sprintf("landlord %s the tenant, but it is paused (annotation %s is \"true\"): landlord applies the change once the annotation is removed, and Terraform does not wait for that.",
				did, pausedAnnotation))
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
	declared := m.Annotations
	m.declare(ctx, t, diags)
	m.Annotations = withoutOperatorAnnotations(ctx, m.Annotations, declared, diags)
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
	var state tenantModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	plan, secrets := planned(ctx, req.Plan, req.Config, &resp.Diagnostics)
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
		changedMeanwhile(&resp.Diagnostics, name)
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
			changedMeanwhile(&resp.Diagnostics, name)
			return
		}
		if err != nil {
			addAPIError(&resp.Diagnostics, "Cannot change tenant "+name, err, tenantAttribute(d.secrets))
			return
		}
	}
	// Nothing sent (wait_for_ready or timeouts changed), nothing to wait
	// for: a failed tenant stays failed, and says so in its status.
	t = r.await(ctx, patch != nil && plan.WaitForReady.ValueBool(), t, "changed", &resp.Diagnostics)
	plan.observe(ctx, t, &resp.Diagnostics)
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
	return "terraform-" + hex.EncodeToString(b)
}

// withoutOperatorAnnotations is annotations, as landlord holds them,
// without the operator annotations (landlord.io/paused, …) that declared,
// what the configuration said, does not name: the CLI's pause is not
// drift.
func withoutOperatorAnnotations(ctx context.Context, annotations, declared types.Map, diags *diag.Diagnostics) types.Map {
	var held, named map[string]string
	diags.Append(annotations.ElementsAs(ctx, &held, false)...)
	if !declared.IsNull() && !declared.IsUnknown() {
		diags.Append(declared.ElementsAs(ctx, &named, false)...)
	}
	kept := maps.Clone(held)
	maps.DeleteFunc(kept, func(k, _ string) bool {
		_, ok := named[k]
		return operatorAnnotation(k) && !ok
	})
	if len(kept) == len(held) {
		return annotations
	}
	return stringMap(ctx, kept, declared, diags)
}
