package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

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
					Validators: []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(
						stringvalidator.OneOf("mon", "tue", "wed", "thu", "fri", "sat", "sun"))},
				},
				"start": schema.StringAttribute{Required: true, MarkdownDescription: "Opening time of day, `HH:MM`."},
				"end":   schema.StringAttribute{Required: true, MarkdownDescription: "Closing time of day, `HH:MM`; at or before `start`, the window closes the next day."},
				"time_zone": schema.StringAttribute{
					Optional:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
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
