package provider

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jaxxstorm/landlord/client"
)

func newPlanResource() resource.Resource { return &planResource{} }

type planResource struct {
	data *providerData
}

var (
	_ resource.ResourceWithConfigure   = &planResource{}
	_ resource.ResourceWithImportState = &planResource{}
)

// planModel is the landlord_plan resource.
type planModel struct {
	Name           types.String `tfsdk:"name"`
	Provider       types.String `tfsdk:"compute_provider"`
	Description    types.String `tfsdk:"description"`
	CurrentVersion types.Int64  `tfsdk:"current_version"`
	LatestVersion  types.Int64  `tfsdk:"latest_version"`
	CreatedAt      types.String `tfsdk:"created_at"`
}

func (r *planResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_plan"
}

func (r *planResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A landlord plan: a named line of compute_config versions for one compute provider, which tenants follow " +
			"(`landlord_tenant.plan`) and rollouts move them along. Its versions are `landlord_plan_version` resources. " +
			"landlord changes no plan in place: a change of any attribute replaces it, which landlord refuses while tenants follow it. " +
			"Import by name.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "The plan's name."},
			"compute_provider": schema.StringAttribute{
				Optional: true, Computed: true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace(), stringplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "The compute provider its tenants run on; landlord's default when left out.",
			},
			"description": schema.StringAttribute{Optional: true, PlanModifiers: replace, MarkdownDescription: "What the plan is for.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"current_version": schema.Int64Attribute{
				Computed:            true,
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				MarkdownDescription: "The version a tenant that starts to follow the plan gets: the first published, then each a rollout completes; 0 before the first.",
			},
			"latest_version": schema.Int64Attribute{
				Computed:            true,
				PlanModifiers:       []planmodifier.Int64{int64planmodifier.UseStateForUnknown()},
				MarkdownDescription: "The newest version published; 0 before the first.",
			},
			"created_at": schema.StringAttribute{
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
				MarkdownDescription: "When the plan was created (RFC 3339).",
			},
		},
	}
}

func (r *planResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataOf(req.ProviderData, &resp.Diagnostics)
}

func (m *planModel) observe(p *client.Plan) {
	m.Name = types.StringValue(p.Name)
	m.Provider = types.StringValue(p.Provider)
	m.Description = types.StringNull()
	if p.Description != "" {
		m.Description = types.StringValue(p.Description)
	}
	m.CurrentVersion = types.Int64Value(p.CurrentVersion)
	m.LatestVersion = types.Int64Value(p.LatestVersion)
	m.CreatedAt = types.StringValue(p.CreatedAt.Format(time.RFC3339Nano))
}

// planAttribute maps the pointers of a plan's create to the attributes.
func planAttribute(pointer string) (path.Path, bool) {
	switch pointer {
	case "/name", "/description":
		return path.Root(pointer[1:]), true
	case "/provider":
		return path.Root("compute_provider"), true
	}
	return path.Empty(), false
}

func (r *planResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m planModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, err := r.data.client.Plans().Create(ctx, client.CreatePlanRequest{
		Name: m.Name.ValueString(), Provider: m.Provider.ValueString(), Description: m.Description.ValueString(),
	}, client.CreatePlanOptions{IdempotencyKey: idempotencyKey()})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot create plan "+m.Name.ValueString(), err, planAttribute)
		return
	}
	m.observe(p)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *planResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m planModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	p, err := r.data.client.Plans().Get(ctx, m.Name.ValueString())
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx)
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read plan "+m.Name.ValueString(), err, nil)
		return
	}
	m.observe(p)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Update is never called: every attribute a configuration sets replaces
// the plan.
func (r *planResource) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("Plans change only by replacement", "landlord changes no plan in place; this is a bug of the provider, please report it.")
}

func (r *planResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m planModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if err := r.data.client.Plans().Delete(ctx, m.Name.ValueString()); err != nil && !client.IsNotFound(err) {
		addAPIError(&resp.Diagnostics, "Cannot delete plan "+m.Name.ValueString(), err, nil)
	}
}

func (r *planResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resource.ImportStatePassthroughID(ctx, path.Root("name"), req, resp)
}

func newPlanVersionResource() resource.Resource { return &planVersionResource{} }

type planVersionResource struct {
	data *providerData
}

var (
	_ resource.ResourceWithConfigure   = &planVersionResource{}
	_ resource.ResourceWithImportState = &planVersionResource{}
	_ resource.ResourceWithModifyPlan  = &planVersionResource{}
)

// differentJSON asks for a replacement when the config is not the same
// JSON as the state's.
func differentJSON(ctx context.Context, req planmodifier.StringRequest, resp *stringplanmodifier.RequiresReplaceIfFuncResponse) {
	var plan, state JSONObject
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, req.Path, &plan)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, req.Path, &state)...)
	same, _ := plan.StringSemanticEquals(ctx, state)
	resp.RequiresReplace = !same
}

// ModifyPlan keeps the state's config when the configuration writes the
// same JSON otherwise (key order, spacing): no new version for that.
func (r *planVersionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || req.State.Raw.IsNull() {
		return
	}
	var plan, state JSONObject
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("config"), &plan)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("config"), &state)...)
	if same, _ := plan.StringSemanticEquals(ctx, state); same && !plan.IsUnknown() && !state.IsNull() {
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("config"), state)...)
	}
}

// planVersionModel is the landlord_plan_version resource.
type planVersionModel struct {
	ID        types.String `tfsdk:"id"`
	Plan      types.String `tfsdk:"plan"`
	Config    JSONObject   `tfsdk:"config"`
	Message   types.String `tfsdk:"message"`
	Version   types.Int64  `tfsdk:"version"`
	CreatedBy types.String `tfsdk:"created_by"`
	CreatedAt types.String `tfsdk:"created_at"`
}

func (r *planVersionResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_plan_version"
}

func (r *planVersionResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	kept := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A published version of a landlord plan. Versions are immutable: a change of `config` or `message` publishes a new version, " +
			"and the one it replaces stays in the plan's history (landlord deletes no version but with its plan). " +
			"Publishing changes no tenant: rollouts move the plan's tenants to it. Import as `<plan>/<version>`.",
		Attributes: map[string]schema.Attribute{
			"id":   schema.StringAttribute{Computed: true, PlanModifiers: kept, MarkdownDescription: "`<plan>/<version>`."},
			"plan": schema.StringAttribute{Required: true, PlanModifiers: replace, MarkdownDescription: "The plan's name."},
			"config": schema.StringAttribute{
				CustomType: JSONObjectType{}, Required: true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplaceIf(differentJSON,
					"A config that is not the same JSON publishes a new version.", "A config that is not the same JSON publishes a new version.")},
				MarkdownDescription: "The version's compute_config fragment as a JSON object, checked against the plan's provider's schema: " +
					"every key a field of it; the fields it requires may be left to each tenant. No secret and no `compute_provider`. " +
					"A member `placements` may hold a fragment per placement name.",
			},
			"message": schema.StringAttribute{Optional: true, PlanModifiers: replace, MarkdownDescription: "What the version changes.",
				Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
			"version":    schema.Int64Attribute{Computed: true, PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}, MarkdownDescription: "The version's number."},
			"created_by": schema.StringAttribute{Computed: true, PlanModifiers: kept, MarkdownDescription: "Who published it."},
			"created_at": schema.StringAttribute{Computed: true, PlanModifiers: kept, MarkdownDescription: "When it was published (RFC 3339)."},
		},
	}
}

func (r *planVersionResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.data = dataOf(req.ProviderData, &resp.Diagnostics)
}

func (m *planVersionModel) observe(v *client.PlanVersion, diags *diag.Diagnostics) {
	m.ID = types.StringValue(fmt.Sprintf("%s/%d", v.Plan, v.Version))
	m.Plan = types.StringValue(v.Plan)
	if same, _ := m.Config.StringSemanticEquals(context.Background(), NewJSONObject(string(v.Config))); !same || m.Config.IsNull() {
		doc, err := decodeJSON(v.Config)
		if err != nil {
			diags.AddError("Cannot read plan version "+m.ID.ValueString(), fmt.Sprintf("its config is not JSON: %v", err))
			return
		}
		m.Config = NewJSONObject(encodeJSON(doc))
	}
	m.Message = types.StringNull()
	if v.Message != "" {
		m.Message = types.StringValue(v.Message)
	}
	m.Version = types.Int64Value(v.Version)
	m.CreatedBy = types.StringValue(v.CreatedBy)
	m.CreatedAt = types.StringValue(v.CreatedAt.Format(time.RFC3339Nano))
}

// versionAttribute maps the pointers of a publish to the attributes.
func versionAttribute(pointer string) (path.Path, bool) {
	switch {
	case pointer == "/config" || strings.HasPrefix(pointer, "/config/"):
		return path.Root("config"), true
	case pointer == "/message":
		return path.Root("message"), true
	}
	return path.Empty(), false
}

func (r *planVersionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m planVersionModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	v, err := r.data.client.Plans().Publish(ctx, m.Plan.ValueString(), client.PublishVersionRequest{
		Config: []byte(m.Config.ValueString()), Message: m.Message.ValueString(),
	}, client.PublishOptions{IdempotencyKey: idempotencyKey()})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot publish a version of plan "+m.Plan.ValueString(), err, versionAttribute)
		return
	}
	m.observe(v, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *planVersionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	if r.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m planVersionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	plan, version, err := splitVersionID(m.ID.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Invalid plan version id", err.Error())
		return
	}
	v, err := r.data.client.Plans().Version(ctx, plan, version)
	if client.IsNotFound(err) {
		resp.State.RemoveResource(ctx) // its plan was deleted
		return
	}
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read plan version "+m.ID.ValueString(), err, nil)
		return
	}
	m.observe(v, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// Update is never called: every attribute a configuration sets replaces
// the version.
func (r *planVersionResource) Update(_ context.Context, _ resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.AddError("Plan versions are immutable", "A change publishes a new version; this is a bug of the provider, please report it.")
}

// Delete forgets the version: landlord deletes a plan's versions only with
// the plan, so it stays in the plan's history, and tenants pinned at it
// keep it.
func (r *planVersionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m planVersionModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.AddWarning("Plan version kept in landlord",
		fmt.Sprintf("Version %d of plan %s is no longer managed by Terraform, but stays in the plan's history: landlord deletes versions only with their plan.",
			m.Version.ValueInt64(), m.Plan.ValueString()))
}

func (r *planVersionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if _, _, err := splitVersionID(req.ID); err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return
	}
	resource.ImportStatePassthroughID(ctx, path.Root("id"), req, resp)
}

// splitVersionID reads "<plan>/<version>".
func splitVersionID(id string) (string, int64, error) {
	plan, v, ok := strings.Cut(id, "/")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || plan == "" || err != nil || n < 1 {
		return "", 0, fmt.Errorf("%q is not <plan>/<version>, e.g. standard/3", id)
	}
	return plan, n, nil
}
