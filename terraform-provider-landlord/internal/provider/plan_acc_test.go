package provider_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// planConfig is a plan with one version, whose config is versionConfig
// (HCL), a tenant pinned at that version, and the data sources.
func planConfig(versionConfig string) string {
	return fmt.Sprintf(`resource "landlord_plan" "standard" {
  name        = "standard"
  description = "the usual tier"
}

resource "landlord_plan_version" "current" {
  plan    = landlord_plan.standard.name
  config  = %s
  message = "from terraform"
}

resource "landlord_tenant" "acme" {
  name           = "acme"
  plan           = landlord_plan.standard.name
  pin            = landlord_plan_version.current.version
  compute_config = jsonencode({ env = { CUSTOMER = "acme" } })
}

# Follows the plan's rollouts from the version current when it starts: it
# needs one published first.
resource "landlord_tenant" "initech" {
  name           = "initech"
  plan           = landlord_plan.standard.name
  compute_config = jsonencode({ env = { CUSTOMER = "initech" } })
  depends_on     = [landlord_plan_version.current]
}

data "landlord_compute_provider" "default" {}

data "landlord_tenant" "acme" {
  name = landlord_tenant.acme.name
}
`, versionConfig)
}

// TestAccPlans manages a plan and its versions with a tenant pinned at
// one: a new config publishes a new version (the old one stays in the
// plan's history) and moves the pinned tenant to it, the same config
// written otherwise publishes nothing; imports of the plan and a
// version; the data sources of the compute provider and the tenant.
func TestAccPlans(t *testing.T) {
	requireTerraform(t)
	ll := startLandlord(t, servetest.Options{Config: mockServe})
	api := ll.Client()
	v1 := `jsonencode({ image = "example.com/app:1", env = { TIER = "standard" } })`
	v1Otherwise := `"{ \"env\": { \"TIER\": \"standard\" }, \"image\": \"example.com/app:1\" }"`
	v2 := `jsonencode({ image = "example.com/app:2", env = { TIER = "standard" } })`
	versions := func(want int) func(*terraform.State) error {
		return func(*terraform.State) error {
			list, err := api.Plans().Versions(context.Background(), "standard")
			if err != nil {
				return err
			}
			if len(list.Versions) != want {
				return fmt.Errorf("plan standard has %d versions, want %d", len(list.Versions), want)
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		CheckDestroy: func(*terraform.State) error {
			if _, err := api.Plans().Get(context.Background(), "standard"); !llclient.IsNotFound(err) {
				return fmt.Errorf("after destroy, plan standard: %v, want not found", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: providerBlock(ll, planConfig(v1)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_plan.standard", tfjsonpath.New("compute_provider"), knownvalue.StringExact("mock")),
					statecheck.ExpectKnownValue("landlord_plan_version.current", tfjsonpath.New("version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("landlord_plan_version.current", tfjsonpath.New("id"), knownvalue.StringExact("standard/1")),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("plan_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("status"), knownvalue.StringExact("ready")),
					statecheck.ExpectKnownValue("landlord_tenant.initech", tfjsonpath.New("plan_version"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("landlord_tenant.initech", tfjsonpath.New("pin"), knownvalue.Null()),
					statecheck.ExpectKnownValue("data.landlord_compute_provider.default", tfjsonpath.New("name"), knownvalue.StringExact("mock")),
					statecheck.ExpectKnownValue("data.landlord_compute_provider.default", tfjsonpath.New("default"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.landlord_compute_provider.default", tfjsonpath.New("capabilities").AtMapKey("secrets"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue("data.landlord_compute_provider.default", tfjsonpath.New("schema"),
						knownvalue.StringRegexp(regexp.MustCompile(`"image":\{`))),
					statecheck.ExpectKnownValue("data.landlord_tenant.acme", tfjsonpath.New("plan"), knownvalue.StringExact("standard")),
					statecheck.ExpectKnownValue("data.landlord_tenant.acme", tfjsonpath.New("pin"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("data.landlord_tenant.acme", tfjsonpath.New("compute_config"),
						knownvalue.StringExact(`{"env":{"CUSTOMER":"acme"}}`)),
				},
				Check: versions(1),
			},
			{
				// The same JSON written otherwise publishes nothing.
				Config: providerBlock(ll, planConfig(v1Otherwise)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// A new config is a new version, and the pinned tenant
				// moves to it.
				Config: providerBlock(ll, planConfig(v2)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("landlord_plan_version.current", plancheck.ResourceActionReplace),
						plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionUpdate),
						plancheck.ExpectResourceAction("landlord_plan.standard", plancheck.ResourceActionNoop),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_plan_version.current", tfjsonpath.New("version"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("plan_version"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("pin"), knownvalue.Int64Exact(2)),
					// Publishing moves no tenant that follows the plan's
					// rollouts.
					statecheck.ExpectKnownValue("landlord_tenant.initech", tfjsonpath.New("plan_version"), knownvalue.Int64Exact(1)),
				},
				Check: versions(2),
			},
			{
				// acme leaves the plan: its config is then whole.
				Config: providerBlock(ll, strings.Replace(planConfig(v2), `  plan           = landlord_plan.standard.name
  pin            = landlord_plan_version.current.version
  compute_config = jsonencode({ env = { CUSTOMER = "acme" } })`, `  compute_config = jsonencode({ image = "example.com/app:3", env = { CUSTOMER = "acme" } })`, 1)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionUpdate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("plan"), knownvalue.Null()),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("plan_version"), knownvalue.Null()),
				},
				Check: func(*terraform.State) error {
					got, err := api.Tenants().Get(context.Background(), "acme", llclient.GetOptions{})
					if err != nil {
						return err
					}
					if got.Plan != nil || !strings.Contains(string(got.ComputeConfig), "example.com/app:3") {
						return fmt.Errorf("acme follows %+v with config %s, want no plan and its own image", got.Plan, got.ComputeConfig)
					}
					return nil
				},
			},
			{
				ResourceName:      "landlord_plan.standard",
				ImportState:       true,
				ImportStateId:     "standard",
				ImportStateVerify: true,
				// The import's id is the name: the plan has no other.
				ImportStateVerifyIdentifierAttribute: "name",
				// Publishing version 2 changed them after the plan's last
				// read; the next refresh reads them.
				ImportStateVerifyIgnore: []string{"latest_version", "current_version"},
			},
			{
				ResourceName:      "landlord_plan_version.current",
				ImportState:       true,
				ImportStateId:     "standard/2",
				ImportStateVerify: true,
			},
		},
	})
}
