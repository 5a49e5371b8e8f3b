package provider_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/servetest"
	"github.com/jaxxstorm/landlord/terraform-provider-landlord/internal/provider"
)

// The acceptance tests run the real terraform binary (or OpenTofu's tofu)
// against this provider, served in the test process (terraform-plugin-
// testing reattaches terraform to it: nothing comes from a registry), and
// a real `landlord serve`. They find the binary in TF_ACC_TERRAFORM_PATH,
// else as terraform or tofu on PATH, else as the OpenTofu that
// `testservers/build opentofu` builds into the test servers' cache, and
// skip without one, unless LANDLORD_REQUIRE_TERRAFORM=1, which fails them.

// dockerBase names what the Docker test makes on the Engine
// (dockertest.Prefix): what a crashed run left is swept by the next.
const dockerBase = "tfacc"

func TestMain(m *testing.M) {
	// No call to checkpoint.hashicorp.com for the latest version: the
	// tests talk to loopback alone. And an empty CLI configuration, not
	// the user's (whose plugin cache or mirrors the tests must not use).
	os.Setenv("CHECKPOINT_DISABLE", "1")
	rc, err := os.CreateTemp("", "terraformrc-")
	if err == nil {
		rc.Close()
		os.Setenv("TF_CLI_CONFIG_FILE", rc.Name())
	}
	if bin, why := terraformBinary(); bin != "" {
		os.Setenv("TF_ACC_TERRAFORM_PATH", bin)
		os.Setenv("TF_ACC", "1") // terraform-plugin-testing runs nothing without it
		if out, _ := exec.Command(bin, "version").Output(); strings.Contains(string(out), "OpenTofu v") && os.Getenv("TF_ACC_PROVIDER_HOST") == "" {
			// OpenTofu's implied registry: the provider it is given
			// (reattached, not downloaded) is named there.
			os.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
		}
	} else {
		terraformMissing = why
	}
	code := dockertest.Main(m, dockerBase)
	if rc != nil {
		os.Remove(rc.Name())
	}
	os.Exit(code)
}

// terraformMissing says why no terraform binary was found; empty when
// one was.
var terraformMissing string

// terraformBinary finds the binary the tests run, or says why there is
// none.
func terraformBinary() (string, string) {
	if p := os.Getenv("TF_ACC_TERRAFORM_PATH"); p != "" {
		return p, ""
	}
	for _, name := range []string{"terraform", "tofu"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, ""
		}
	}
	cache := os.Getenv("LANDLORD_TESTBIN")
	if cache == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", "no terraform or tofu on PATH, and no cache directory"
		}
		cache = filepath.Join(dir, "landlord", "testbin")
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "opentofu-*", "tofu"))
	if len(matches) > 0 {
		return matches[len(matches)-1], ""
	}
	return "", "no terraform or tofu on PATH or in " + cache + " (testservers/build opentofu builds one)"
}

// requireTerraform skips t without a terraform binary, or fails it under
// LANDLORD_REQUIRE_TERRAFORM=1.
func requireTerraform(t *testing.T) {
	t.Helper()
	if terraformMissing == "" {
		return
	}
	if os.Getenv("LANDLORD_REQUIRE_TERRAFORM") == "1" {
		t.Fatalf("LANDLORD_REQUIRE_TERRAFORM=1: %s", terraformMissing)
	}
	t.Skipf("%s; skipping the acceptance test", terraformMissing)
}

// factories serves the provider in the test process.
var factories = map[string]func() (tfprotov6.ProviderServer, error){
	"landlord": providerserver.NewProtocol6WithError(provider.New("test")()),
}

// mockServe is landlord on the mock provider, whose tenants are ready at
// once and run nothing.
const mockServe = `compute:
  default: mock
  mock: {}
`

// startLandlord starts `landlord serve` with config and returns it.
func startLandlord(t *testing.T, opts servetest.Options) *servetest.Process {
	t.Helper()
	p := servetest.New(t, opts)
	p.Start()
	return p
}

// providerBlock configures the provider for p, followed by config.
func providerBlock(p *servetest.Process, config string) string {
	return fmt.Sprintf("provider \"landlord\" {\n  address = %q\n}\n\n%s", "http://"+p.Addr(), config)
}

// getTenant reads a tenant through the API.
func getTenant(t *testing.T, c *llclient.Client, name string) *llclient.Tenant {
	t.Helper()
	got, err := c.Tenants().Get(context.Background(), name, llclient.GetOptions{})
	if err != nil {
		t.Fatalf("get tenant %s: %v", name, err)
	}
	return got
}

// noSecretIn fails when any attribute of any resource in the state holds
// one of secrets.
func noSecretIn(secrets ...string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		for _, m := range s.Modules {
			for addr, r := range m.Resources {
				for k, v := range r.Primary.Attributes {
					for _, secret := range secrets {
						if strings.Contains(v, secret) {
							return fmt.Errorf("the state holds a secret: %s.%s", addr, k)
						}
					}
				}
			}
		}
		return nil
	}
}
