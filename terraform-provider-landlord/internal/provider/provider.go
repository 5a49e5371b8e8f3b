// Package provider is landlord's Terraform provider: the landlord_tenant,
// landlord_plan and landlord_plan_version resources and the
// landlord_tenant and landlord_compute_provider data sources, on the
// Terraform Plugin Framework, speaking to landlord through its public Go
// client alone.
package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/jaxxstorm/landlord/client"
)

// Address is the provider's source address, as a configuration's
// required_providers block names it.
const Address = "registry.terraform.io/jaxxstorm/landlord"

// New returns a constructor of the provider, of the given version.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &landlordProvider{version: version} }
}

type landlordProvider struct {
	version string
}

// providerModel is the provider block.
type providerModel struct {
	Address        types.String `tfsdk:"address"`
	Token          types.String `tfsdk:"token"`
	CACertFile     types.String `tfsdk:"ca_cert_file"`
	ClientCertFile types.String `tfsdk:"client_cert_file"`
	ClientKeyFile  types.String `tfsdk:"client_key_file"`
	TLSServerName  types.String `tfsdk:"tls_server_name"`
}

func (p *landlordProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "landlord"
	resp.Version = p.version
}

func (p *landlordProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Manages [landlord](https://github.com/jaxxstorm/landlord)'s tenants, plans and plan versions " +
			"through its HTTP API. Each setting left out is read from the environment variable the landlord CLI reads.",
		Attributes: map[string]schema.Attribute{
			"address": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The API's base URL, e.g. `https://landlord.example.com`; a bare `host:port` means http. Default `LANDLORD_ADDR`, else `" + client.DefaultAddress + "`.",
			},
			"token": schema.StringAttribute{
				Optional:            true,
				Sensitive:           true,
				MarkdownDescription: "The bearer token sent with every request (a writer's, to change anything). Default `LANDLORD_TOKEN`.",
			},
			"ca_cert_file": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "A PEM file of the CA certificates that sign the server's certificate; only they are trusted. Default `LANDLORD_CA_CERT`, else the system's roots.",
			},
			"client_cert_file": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "A PEM client certificate for a server that asks for one (mTLS), with `client_key_file`. Default `LANDLORD_CLIENT_CERT`.",
			},
			"client_key_file": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The PEM key of `client_cert_file`. Default `LANDLORD_CLIENT_KEY`.",
			},
			"tls_server_name": schema.StringAttribute{
				Optional:            true,
				MarkdownDescription: "The name the server's certificate must hold, sent in SNI. Default `LANDLORD_TLS_SERVER_NAME`, else the address's host.",
			},
		},
	}
}

func (p *landlordProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cfg := client.DefaultConfig()
	for _, s := range []struct {
		attr string
		v    types.String
		to   *string
	}{
		{"address", m.Address, &cfg.Address},
		{"token", m.Token, &cfg.Token},
		{"ca_cert_file", m.CACertFile, &cfg.CACertFile},
		{"client_cert_file", m.ClientCertFile, &cfg.ClientCertFile},
		{"client_key_file", m.ClientKeyFile, &cfg.ClientKeyFile},
		{"tls_server_name", m.TLSServerName, &cfg.TLSServerName},
	} {
		if s.v.IsUnknown() {
			// Known only after another resource's apply: the resources
			// find no client and say so (a plan of this provider's
			// resources needs its settings known).
			return
		}
		if !s.v.IsNull() {
			*s.to = s.v.ValueString()
		}
	}
	c, err := client.New(cfg)
	if err != nil {
		resp.Diagnostics.AddError("Cannot configure the landlord client", err.Error())
		return
	}
	data := &providerData{client: c}
	resp.ResourceData, resp.DataSourceData = data, data
}

func (p *landlordProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{newTenantResource, newPlanResource, newPlanVersionResource}
}

func (p *landlordProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{newTenantDataSource, newComputeProviderDataSource}
}

// providerData is what the provider gives its resources and data sources:
// the API's client, and what they read once per run.
type providerData struct {
	client *client.Client

	mu       sync.Mutex
	defaults map[string]any // a provider's compute_config defaults, by provider name
}

// computeDefaults returns a compute provider's defaults, read once per run.
func (d *providerData) computeDefaults(ctx context.Context, name string) (any, error) {
	d.mu.Lock()
	v, ok := d.defaults[name]
	d.mu.Unlock()
	if ok {
		return v, nil
	}
	cc, err := d.client.Compute().Config(ctx, name)
	if err != nil {
		return nil, err
	}
	var defaults any
	if len(cc.Defaults) > 0 {
		if defaults, err = decodeJSON(cc.Defaults); err != nil {
			return nil, fmt.Errorf("the defaults of compute provider %s: %w", name, err)
		}
	}
	d.mu.Lock()
	if d.defaults == nil {
		d.defaults = map[string]any{}
	}
	d.defaults[name] = defaults
	d.mu.Unlock()
	return defaults, nil
}

// dataOf is what Configure of a resource or data source does with the
// provider's data: nil (the provider is not configured yet, as during
// validation) or the data.
func dataOf(in any, diags *diag.Diagnostics) *providerData {
	if in == nil {
		return nil
	}
	d, ok := in.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("got %T; this is a bug of the provider, please report it", in))
	}
	return d
}

// notConfigured is the error of an operation that needs the API while the
// provider's settings are not known.
func notConfigured(diags *diag.Diagnostics) {
	diags.AddError("The landlord provider is not configured",
		"Its settings (address, token, TLS files) are not known yet, as when they come from a resource not yet created. "+
			"Give them as values known at plan time, or apply that resource first (terraform apply -target).")
}
