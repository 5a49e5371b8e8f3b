package provider

import (
	"context"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jaxxstorm/landlord/client"
)

func newTenantDataSource() datasource.DataSource { return &tenantDataSource{} }

type tenantDataSource struct {
	data *providerData
}

var _ datasource.DataSourceWithConfigure = &tenantDataSource{}

// tenantDataModel is the landlord_tenant data source.
type tenantDataModel struct {
	Name          types.String `tfsdk:"name"`
	ComputeConfig JSONObject   `tfsdk:"compute_config"`
	declared
	observed
}

func (d *tenantDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_tenant"
}

func (d *tenantDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(doc string) schema.Attribute {
		return schema.StringAttribute{Computed: true, MarkdownDescription: doc}
	}
	num := func(doc string) schema.Attribute {
		return schema.Int64Attribute{Computed: true, MarkdownDescription: doc}
	}
	attrs := computed(observedTypes, observedDocs, str, num)
	attrs["endpoints"] = schema.ListNestedAttribute{
		Computed:            true,
		MarkdownDescription: observedDocs["endpoints"],
		NestedObject:        schema.NestedAttributeObject{Attributes: computed(endpointType.AttrTypes, endpointDocs, str, num)},
	}
	maps.Copy(attrs, map[string]schema.Attribute{
		"name": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "The tenant's name; give it or `id`.",
			Validators:          []validator.String{stringvalidator.ExactlyOneOf(path.MatchRoot("id"))},
		},
		"id": schema.StringAttribute{
			Optional: true, Computed: true,
			MarkdownDescription: "The tenant's id; give it or `name`.",
		},
		"compute_config": schema.StringAttribute{
			CustomType: JSONObjectType{}, Computed: true,
			MarkdownDescription: "The tenant's compute_config as a JSON object, without its secrets.",
		},
		"labels":      schema.MapAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "The tenant's labels, which select it (lists, rollouts' waves)."},
		"annotations": schema.MapAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "The tenant's annotations: notes that select nothing."},
		"plan":        schema.StringAttribute{Computed: true, MarkdownDescription: "The plan the tenant follows, if any."},
		"pin":         schema.Int64Attribute{Computed: true, MarkdownDescription: "The plan version the tenant is pinned at, if it is."},
		"maintenance_window": schema.SingleNestedAttribute{
			Computed:            true,
			MarkdownDescription: "The weekly window in which rollouts may change the tenant, if it has one.",
			Attributes: map[string]schema.Attribute{
				"days":      schema.ListAttribute{ElementType: types.StringType, Computed: true, MarkdownDescription: "Days, `mon` … `sun`; null is every day."},
				"start":     schema.StringAttribute{Computed: true, MarkdownDescription: "Opening time of day, `HH:MM`."},
				"end":       schema.StringAttribute{Computed: true, MarkdownDescription: "Closing time of day, `HH:MM`."},
				"time_zone": schema.StringAttribute{Computed: true, MarkdownDescription: "The IANA time zone; none is UTC."},
			},
		},
	})
	resp.Schema = schema.Schema{
		MarkdownDescription: "A landlord tenant, by name or id, as landlord holds it: its declared state (secrets left out) and what landlord observed.",
		Attributes:          attrs,
	}
}

func (d *tenantDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = dataOf(req.ProviderData, &resp.Diagnostics)
}

func (d *tenantDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m tenantDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	key := m.Name.ValueString()
	if !m.ID.IsNull() {
		key = m.ID.ValueString()
	}
	t, err := d.data.client.Tenants().Get(ctx, key, client.GetOptions{})
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read tenant "+key, err, nil)
		return
	}
	config, err := decodeObject(t.ComputeConfig)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read tenant "+key, fmt.Sprintf("its compute_config is %v", err))
		return
	}
	m.Name = types.StringValue(t.Name)
	m.ComputeConfig = NewJSONObject(encodeJSON(withoutRedacted(config)))
	m.declare(ctx, t, &resp.Diagnostics)
	m.observe(ctx, t, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func newComputeProviderDataSource() datasource.DataSource { return &computeProviderDataSource{} }

type computeProviderDataSource struct {
	data *providerData
}

var _ datasource.DataSourceWithConfigure = &computeProviderDataSource{}

// computeProviderModel is the landlord_compute_provider data source.
type computeProviderModel struct {
	Name         types.String `tfsdk:"name"`
	Default      types.Bool   `tfsdk:"default"`
	Healthy      types.Bool   `tfsdk:"healthy"`
	Message      types.String `tfsdk:"message"`
	Capabilities types.Map    `tfsdk:"capabilities"`
	Schema       JSONObject   `tfsdk:"schema"`
	Defaults     JSONObject   `tfsdk:"defaults"`
}

func (d *computeProviderDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_compute_provider"
}

func (d *computeProviderDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "A compute provider landlord has enabled: its compute_config schema, the defaults merged under each tenant's config, and what it can do.",
		Attributes: map[string]schema.Attribute{
			"name": schema.StringAttribute{
				Optional: true, Computed: true,
				MarkdownDescription: "The provider's name (`docker`, `ecs`, `kubernetes`, `nomad`, `mock` or a plugin's); landlord's default provider when left out.",
			},
			"default":      schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether it is landlord's default provider."},
			"healthy":      schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether its platform answers."},
			"message":      schema.StringAttribute{Computed: true, MarkdownDescription: "Why it is unhealthy, if it is."},
			"capabilities": schema.MapAttribute{ElementType: types.BoolType, Computed: true, MarkdownDescription: "What it supports, by capability: `in_place_update`, `multiple_containers`, `secrets`, `published_ports`, `public_networking`, `health_checks`, `scaling`, `volumes`."},
			"schema":       schema.StringAttribute{CustomType: JSONObjectType{}, Computed: true, MarkdownDescription: "The JSON Schema (2020-12) of its compute_config, as JSON."},
			"defaults":     schema.StringAttribute{CustomType: JSONObjectType{}, Computed: true, MarkdownDescription: "The defaults merged under each tenant's compute_config, as JSON; null when it has none."},
		},
	}
}

func (d *computeProviderDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.data = dataOf(req.ProviderData, &resp.Diagnostics)
}

func (d *computeProviderDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		notConfigured(&resp.Diagnostics)
		return
	}
	var m computeProviderModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	list, err := d.data.client.Compute().Providers(ctx)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot list compute providers", err, nil)
		return
	}
	var found *client.Provider
	var names []string
	for i, p := range list.Providers {
		names = append(names, p.Name)
		if (m.Name.IsNull() && p.Default) || p.Name == m.Name.ValueString() {
			found = &list.Providers[i]
		}
	}
	if found == nil {
		resp.Diagnostics.AddAttributeError(path.Root("name"), "No such compute provider",
			fmt.Sprintf("landlord has not enabled compute provider %q; it has %v.", m.Name.ValueString(), names))
		return
	}
	cc, err := d.data.client.Compute().Config(ctx, found.Name)
	if err != nil {
		addAPIError(&resp.Diagnostics, "Cannot read compute provider "+found.Name, err, nil)
		return
	}
	m.Name = types.StringValue(found.Name)
	m.Default = types.BoolValue(found.Default)
	m.Healthy = types.BoolValue(found.Healthy)
	m.Message = types.StringValue(found.Message)
	caps, diags := types.MapValueFrom(ctx, types.BoolType, found.Capabilities)
	resp.Diagnostics.Append(diags...)
	m.Capabilities = caps
	m.Schema = NewJSONObject(string(cc.Schema))
	m.Defaults = NullJSONObject()
	if len(cc.Defaults) > 0 && string(cc.Defaults) != "null" {
		m.Defaults = NewJSONObject(string(cc.Defaults))
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
