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

// TestAccTenantChanges takes a tenant through the changes a configuration
// makes over its life, on a mock provider with defaults, and wants landlord
// to hold exactly what each step declares with no diff left behind: a
// default written out is no change; a secret whose value is known only at
// apply; a maintenance window set, changed and removed; annotations, with
// the operator's pause set through the API left alone; a sidecar removed
// with secrets_wo left out, its secret gone and the others kept;
// wait_for_ready off; and a rename, which replaces the tenant.
func TestAccTenantChanges(t *testing.T) {
	requireTerraform(t)
	ll := startLandlord(t, servetest.Options{Config: "compute:\n  default: mock\n  mock:\n    env: {LOG_LEVEL: info}\n"})
	api := ll.Client()
	base := `{ image = "example.com/app:1", sidecars = [{ name = "s0", image = "example.com/s:1" }, { name = "s1", image = "example.com/s:1" }] }`
	tenant := func(name, config, more string) string {
		return providerBlock(ll, fmt.Sprintf(`resource "terraform_data" "password" {
  input = "known-only-at-apply"
}

resource "landlord_tenant" "acme" {
  name           = %q
  compute_config = jsonencode(%s)
  %s
}
`, name, config, more))
	}
	secrets := `secrets_wo = {
    "/secrets/DB"            = terraform_data.password.output
    "/sidecars/0/secrets/T0" = "t0"
    "/sidecars/1/secrets/T1" = "t1"
  }`
	holds := func(name string, check func(*llclient.Tenant) error) func(*terraform.State) error {
		return func(*terraform.State) error {
			got, err := api.Tenants().Get(context.Background(), name, llclient.GetOptions{})
			if err != nil {
				return err
			}
			return check(got)
		}
	}
	config := func(want ...string) func(*llclient.Tenant) error {
		return func(got *llclient.Tenant) error {
			for _, w := range want {
				if !strings.Contains(string(got.ComputeConfig), w) {
					return fmt.Errorf("landlord's compute_config %s lacks %s", got.ComputeConfig, w)
				}
			}
			return nil
		}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		Steps: []resource.TestStep{
			{
				// A secret known only at apply: the plan cannot validate,
				// the apply does.
				Config: tenant("acme", base, secrets),
				Check:  holds("acme", config(`"DB":"[redacted]"`, `"T0":"[redacted]"`, `"T1":"[redacted]"`)),
			},
			{
				// The provider's default written out is no change.
				Config: tenant("acme", strings.Replace(base, `image = "example.com/app:1"`, `image = "example.com/app:1", env = { LOG_LEVEL = "info" }`, 1), secrets),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config: tenant("acme", base, secrets+`
  maintenance_window = { days = ["sat"], start = "02:00", end = "04:00", time_zone = "Europe/Paris" }
  annotations        = { owner = "team-a" }`),
				Check: holds("acme", func(got *llclient.Tenant) error {
					if w := got.MaintenanceWindow; w == nil || w.Start != "02:00" || w.TimeZone != "Europe/Paris" || len(w.Days) != 1 {
						return fmt.Errorf("maintenance window %+v", w)
					}
					return nil
				}),
			},
			{
				// The window changes to every day, UTC; the operator pauses
				// the tenant through the API, which is no drift.
				PreConfig: func() {
					patch := json.RawMessage(`{"annotations":{"landlord.io/paused":"true"}}`)
					if _, err := api.Tenants().Patch(context.Background(), "acme", patch, llclient.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
				},
				Config: tenant("acme", base, secrets+`
  maintenance_window = { start = "01:00", end = "05:00" }
  annotations        = { owner = "team-b" }`),
				Check: holds("acme", func(got *llclient.Tenant) error {
					if w := got.MaintenanceWindow; w == nil || w.Start != "01:00" || w.TimeZone != "" || len(w.Days) != 0 {
						return fmt.Errorf("maintenance window %+v, want 01:00–05:00 every day, UTC", w)
					}
					if got.Annotations["landlord.io/paused"] != "true" || got.Annotations["owner"] != "team-b" {
						return fmt.Errorf("annotations %v, want the pause kept and owner team-b", got.Annotations)
					}
					return nil
				}),
			},
			{
				// The window goes; sidecar s1 goes with secrets_wo left out:
				// the secrets still in place stay, T1 goes with s1.
				Config: tenant("acme", `{ image = "example.com/app:1", sidecars = [{ name = "s0", image = "example.com/s:1" }] }`, `annotations = { owner = "team-b" }
  wait_for_ready = false`),
				Check: holds("acme", func(got *llclient.Tenant) error {
					if got.MaintenanceWindow != nil {
						return fmt.Errorf("maintenance window %+v, want none", got.MaintenanceWindow)
					}
					if strings.Contains(string(got.ComputeConfig), "T1") {
						return fmt.Errorf("compute_config %s still holds T1", got.ComputeConfig)
					}
					return config(`"DB":"[redacted]"`, `"T0":"[redacted]"`)(got)
				}),
			},
			{
				// A new name is a new tenant.
				Config: tenant("acme-2", `{ image = "example.com/app:1" }`, ""),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("name"), knownvalue.StringExact("acme-2")),
				},
				Check: func(*terraform.State) error {
					if _, err := api.Tenants().Get(context.Background(), "acme", llclient.GetOptions{}); !llclient.IsNotFound(err) {
						return fmt.Errorf("tenant acme after the rename: %v, want not found", err)
					}
					return nil
				},
			},
			{
				// A null cannot be sent in a merge patch: refused at plan.
				Config:      tenant("acme-2", `{ image = "example.com/app:1", env = { LOG_LEVEL = null } }`, ""),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)Null\s+in\s+compute_config.*/env/LOG_LEVEL`),
			},
		},
	})
}
