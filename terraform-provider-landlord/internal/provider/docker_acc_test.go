package provider_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
	"github.com/moby/moby/client"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/demo"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestAccTenantOnDocker runs a tenant of landlord's demo image on the
// mock provider, then moves it to the Docker Engine by a change of its
// compute_provider, which replaces it, through terraform apply: ready, its endpoint serves the
// demo page with the tenant's name, the write-only secret reached the
// container's environment (and not the state); then a change of args in
// place, and terraform destroy leaves no container or network behind.
func TestAccTenantOnDocker(t *testing.T) {
	requireTerraform(t)
	cli := dockertest.Engine(t)
	bin := staticLandlord(t)
	// A hang guard: alone it takes about a minute.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	ref := "landlord-test/tfacc-demo:" + dockertest.RunID()
	if _, err := demo.Load(ctx, cli, demo.Options{Binary: bin, Ref: ref}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cli.ImageRemove(context.Background(), ref, client.ImageRemoveOptions{Force: true, PruneChildren: true})
	})
	prefix := dockertest.Prefix(dockerBase)
	t.Cleanup(func() { dockertest.RemoveManaged(cli, prefix) })
	ll := startLandlord(t, servetest.Options{Binary: bin,
		Config: "compute:\n  default: docker\n  mock: {}\n  docker:\n    label_prefix: " + prefix + "\n    stop_timeout: 2s\n    address_pool: " + dockertest.AddressPool + "\n"})

	const secret = "tf-docker-secret-5678"
	tenantOn := func(provider, args string) string {
		return providerBlock(ll, fmt.Sprintf(`resource "landlord_tenant" "acme" {
  name           = "acme"
  compute_config = jsonencode({ compute_provider = %q, image = %q, args = %s, ports = [{ container_port = %d }], env = { GREETING = "hello" } })
  secrets_wo     = { "/secrets/API_TOKEN" = %q }
  timeouts       = { create = "3m", update = "3m", delete = "3m" }
}
`, provider, ref, args, demo.Port, secret))
	}
	tenant := func(args string) string { return tenantOn("docker", args) }
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: factories,
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_11_0)},
		CheckDestroy: func(*terraform.State) error {
			return managedLeft(ctx, cli, prefix)
		},
		Steps: []resource.TestStep{
			{
				// First on the mock provider, ...
				Config: tenantOn("mock", `["acme"]`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("compute_provider"), knownvalue.StringExact("mock")),
				},
			},
			{
				// ... then on Docker: another provider replaces the tenant.
				Config: tenant(`["acme"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionDestroyBeforeCreate)},
				},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("status"), knownvalue.StringExact("ready")),
					statecheck.ExpectKnownValue("landlord_tenant.acme", tfjsonpath.New("compute_provider"), knownvalue.StringExact("docker")),
				},
				Check: resource.ComposeTestCheckFunc(
					noSecretIn(secret),
					demoPageSays(ctx, "landlord demo: tenant acme", "API_TOKEN", "GREETING"),
					containerEnvHas(ctx, cli, prefix, "API_TOKEN="+secret),
				),
			},
			{
				Config: tenant(`["acme", "--tier", "gold"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("landlord_tenant.acme", plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeTestCheckFunc(
					noSecretIn(secret),
					demoPageSays(ctx, "args:     --tier gold"),
					containerEnvHas(ctx, cli, prefix, "API_TOKEN="+secret),
				),
			},
		},
	})
}

// staticLandlord builds a static landlord, which the demo image runs (and
// landlord serve too), into the test's directory.
func staticLandlord(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "landlord")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/landlord")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build landlord: %v\n%s", err, out)
	}
	return bin
}

// demoPageSays GETs the page at the tenant's endpoint in the state and
// wants each of says in it, and not the secret's value.
func demoPageSays(ctx context.Context, says ...string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		attrs := s.RootModule().Resources["landlord_tenant.acme"].Primary.Attributes
		addr := attrs["endpoints.0.address"]
		if addr == "" {
			return fmt.Errorf("the tenant has no endpoint: %v", attrs)
		}
		var page string
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
			res, err := http.DefaultClient.Do(req)
			if err == nil {
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				page = string(body)
				if res.StatusCode == http.StatusOK && !slices.ContainsFunc(says, func(s string) bool { return !strings.Contains(page, s) }) {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("GET http://%s/ never said %q (last %v):\n%s", addr, says, err, page)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// containerEnvHas wants the tenant's container, on the Engine, to hold
// env in its environment.
func containerEnvHas(ctx context.Context, cli *client.Client, prefix, env string) func(*terraform.State) error {
	return func(*terraform.State) error {
		list, err := cli.ContainerList(ctx, client.ContainerListOptions{Filters: client.Filters{}.Add("label", prefix+".managed-by=landlord")})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("%d containers run under %s, want the tenant's one", len(list.Items), prefix)
		}
		c, err := cli.ContainerInspect(ctx, list.Items[0].ID, client.ContainerInspectOptions{})
		if err != nil {
			return err
		}
		if !slices.Contains(c.Container.Config.Env, env) {
			return fmt.Errorf("container %s's environment lacks %s", c.Container.Name, strings.SplitN(env, "=", 2)[0])
		}
		return nil
	}
}

// managedLeft fails when a container or network landlord made under
// prefix is left.
func managedLeft(ctx context.Context, cli *client.Client, prefix string) error {
	f := client.Filters{}.Add("label", prefix+".managed-by=landlord")
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return err
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return err
	}
	if len(cs.Items)+len(ns.Items) > 0 {
		return fmt.Errorf("after destroy, %d containers and %d networks are left under %s", len(cs.Items), len(ns.Items), prefix)
	}
	return nil
}
