package provider_test

import (
	"context"
	"encoding/json"
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

// tenantConfig is a landlord_tenant named acme with the given
// compute_config (HCL) and more attributes.
func tenantConfig(config, more string) string {
	return fmt.Sprintf(`resource "landlord_tenant" "acme" {
  name           = "acme"
  compute_config = %s
  %s
}
`, config, more)
}

// TestAccTenant takes a tenant through its life with the real terraform
// binary against landlord serve on the mock provider: create with a
// write-only secret that never reaches the state, a plan of the same
// config written otherwise showing nothing, an update in place whose plan
// shows the compute_config diff, a change made through the API (drift)
// that the next plan shows and the apply puts back, import by name, and
// destroy.
func TestAccTenant(t *testing.T) {
	requireTerraform(t)
	ll := startLandlord(t, servetest.Options{Config: mockServe})
	api := ll.Client()
	const secret = "s3cr3t-value-never-in-state"
	secrets := `secrets_wo = { "/secrets/DB_PASSWORD" = "` + secret + `" }
  secrets_wo_version = 1
  labels = { tier = "gold" }`
	v1 := `jsonencode({ image = "example.com/app:1", ports = [{ container_port = 8080 }], env = { MODE = "one" } })`
	// The same JSON, written with other key order and spacing.
	v1Otherwise := `"{\"env\": {\"MODE\": \"one\"},   \"ports\": [{\"container_port\": 8080}], \"image\": \"example.com/app:1\"}"`
	v2 := `jsonencode({ image = "example.com/app:2", ports = [{ container_port = 8080 }], env = { MODE = "two" } })`

	var id string
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		CheckDestroy: func(*terraform.State) error {
			_, err := api.Tenants().Get(context.Background(), "acme", llclient.GetOptions{})
			if !llclient.IsNotFound(err) {
				return fmt.Errorf("after destroy, tenant acme: %v, want not found", err)
			}
			return nil
		},
		Steps: []resource.TestStep{
			{
				Config: providerBlock(ll, tenantConfig(v1, secrets)),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("status"), knownvalue.StringExact("ready")),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("compute_provider"), knownvalue.StringExact("mock")),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("generation"), knownvalue.Int64Exact(1)),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("secrets_wo"), knownvalue.Null()),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("endpoints"), knownvalue.ListSizeExact(1)),
				},
				Check: resource.ComposeTestCheckFunc(
					noSecretIn(secret),
					func(s *terraform.State) error {
						id = s.RootModule().Resources["landlord_tenant.acme"].Primary.ID
						got := getTenant(t, api, "acme")
						if got.ID != id || got.Labels["tier"] != "gold" {
							return fmt.Errorf("landlord holds %s with labels %v, state says id %s", got.ID, got.Labels, id)
						}
						// The secret reached landlord: it shows it redacted.
						if !strings.Contains(string(got.ComputeConfig), `"DB_PASSWORD":"[redacted]"`) {
							return fmt.Errorf("landlord's compute_config %s has no secret DB_PASSWORD", got.ComputeConfig)
						}
						return nil
					},
				),
			},
			{
				// Key order and spacing are no change.
				Config: providerBlock(ll, tenantConfig(v1Otherwise, secrets)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// An update in place, whose plan shows the new config.
				Config: providerBlock(ll, tenantConfig(v2, secrets)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionUpdate),
						plancheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("compute_config"),
							knownvalue.StringRegexp(regexp.MustCompile(`"image":"example.com/app:2"`))),
						plancheck.ExpectUnknownValue("landlord_tenant.acme", tfjsonpath.New("generation")),
					},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("generation"), knownvalue.Int64Exact(2)),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("status"), knownvalue.StringExact("ready")),
				},
				Check: func(s *terraform.State) error {
					got := getTenant(t, api, "acme")
					if got.ID != id {
						return fmt.Errorf("the update replaced the tenant: id %s, was %s", got.ID, id)
					}
					if !strings.Contains(string(got.ComputeConfig), `"DB_PASSWORD":"[redacted]"`) {
						return fmt.Errorf("the update lost the secret: %s", got.ComputeConfig)
					}
					return nil
				},
			},
			{
				// Drift: someone changes the tenant through the API; the
				// plan shows it, and the apply puts the declared config
				// back.
				PreConfig: func() {
					patch := json.RawMessage(`{"compute_config":{"env":{"MODE":"by hand"}},"labels":{"tier":"silver"}}`)
					if _, err := api.Tenants().Patch(context.Background(), "acme", patch, llclient.UpdateOptions{}); err != nil {
						t.Fatalf("change the tenant by hand: %v", err)
					}
				},
				Config: providerBlock(ll, tenantConfig(v2, secrets)),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionUpdate),
					},
				},
				Check: func(*terraform.State) error {
					got := getTenant(t, api, "acme")
					if strings.Contains(string(got.ComputeConfig), "by hand") || got.Labels["tier"] != "gold" {
						return fmt.Errorf("after the apply, landlord holds %s with labels %v: the change by hand stayed", got.ComputeConfig, got.Labels)
					}
					return nil
				},
			},
			{
				// Import by name.
				Config:                  providerBlock(ll, tenantConfig(v2, secrets)),
				ResourceName:            "landlord_tenant.acme",
				ImportState:             true,
				ImportStateId:           "acme",
				ImportStateVerify:       true,
				ImportStateVerifyIgnore: []string{"secrets_wo_version", "timeouts"},
			},
		},
	})
}

// TestAccTenantPlanTimeValidation runs terraform plan on configs landlord
// refuses: the plan fails, naming the field by its JSON pointer at the
// attribute at fault, and nothing is created.
func TestAccTenantPlanTimeValidation(t *testing.T) {
	requireTerraform(t)
	ll := startLandlord(t, servetest.Options{Config: mockServe})
	api := ll.Client()
	if _, err := api.Tenants().Create(context.Background(), llclient.CreateTenantRequest{Name: "taken", ComputeConfig: json.RawMessage(`{"image":"a"}`)},
		llclient.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	plan := func(config string, want string) resource.TestStep {
		// Terraform wraps a diagnostic's lines: any space may be a newline.
		return resource.TestStep{Config: providerBlock(ll, config), PlanOnly: true, ExpectError: regexp.MustCompile(strings.ReplaceAll(want, " ", `\s+`))}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		Steps: []resource.TestStep{
			plan(tenantConfig(`jsonencode({ image = "", ports = [{ container_port = "http" }] })`, ""),
				`(?s)landlord refuses tenant acme.*with landlord_tenant.acme.*compute_config.*/compute_config/image: minLength.*/compute_config/ports/0/container_port: must be an integer`),
			plan(tenantConfig(`jsonencode({ image = "a", bogus = 1 })`, ""),
				`(?s)/compute_config/bogus: unknown field`),
			plan(tenantConfig(`jsonencode({ image = "a", secrets = { DB_PASSWORD = "in clear" } })`, ""),
				`(?s)Secret in compute_config.*/secrets/DB_PASSWORD is a secret.*secrets_wo`),
			plan(tenantConfig(`jsonencode({ image = "a" })`, `secrets_wo = { "/image/x" = "v" }`),
				`(?s)Invalid secrets_wo.*is not an object or an array`),
			plan(tenantConfig(`jsonencode({ image = "a" })`, `labels = { "bad key!" = "x" }`),
				`(?s)landlord refuses tenant acme.*labels = \{ "bad key!".*/labels/bad key!: key must be`),
			// A plan that does not exist may be created by the same
			// apply: the plan warns, the apply fails.
			{
				Config:      providerBlock(ll, tenantConfig(`jsonencode({ image = "a" })`, `plan = "none"`)),
				ExpectError: regexp.MustCompile(`(?s)landlord\s+refuses\s+tenant\s+acme.*/plan/name:\s+no\s+plan\s+has\s+this\s+name`),
			},
			plan(tenantConfig(`"[1, 2]"`, ""), `(?s)Invalid JSON object.*not a JSON object`),
			plan(`resource "landlord_tenant" "taken" {
  name           = "taken"
  compute_config = jsonencode({ image = "a" })
}`,
				`(?s)Tenant name taken.*terraform import <resource address> taken`),
		},
	})
	list, err := api.Tenants().List(context.Background(), llclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tenants) != 1 {
		t.Errorf("after refused plans, landlord has %d tenants, want the one taken", len(list.Tenants))
	}
}
