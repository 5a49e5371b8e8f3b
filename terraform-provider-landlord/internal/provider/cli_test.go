package provider_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestCompleteExampleWithTheCLI installs the provider as a user does
// without a registry (its binary, named in a CLI configuration's
// dev_overrides) and runs terraform itself on examples/complete, the
// example docs/terraform.md shows, against landlord serve: a plan with a
// config the compute provider refuses fails naming the field; apply makes
// it all, with a state file that holds no secret; a second plan changes
// nothing; destroy leaves landlord with no tenant and no plan.
func TestCompleteExampleWithTheCLI(t *testing.T) {
	requireTerraform(t)
	ll := startLandlord(t, servetest.Options{Config: mockServe})
	tf := newTerraformCLI(t)
	work := t.TempDir()
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "complete", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), example, 0o644); err != nil {
		t.Fatal(err)
	}
	const secret = "cli-secret-never-in-state"
	vars := []string{"-var", "landlord_address=http://" + ll.Addr(), "-var", "db_password=" + secret}

	out, err := tf.run(work, append([]string{"plan", "-input=false", "-var", "image="}, vars...)...)
	if err == nil {
		t.Fatalf("terraform plan with an empty image succeeded:\n%s", out)
	}
	for _, want := range []string{"Error: landlord refuses tenant globex", `on main.tf line`, "/compute_config/image: minLength: got 0, want 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("terraform plan with an empty image does not say %q:\n%s", want, out)
		}
	}
	t.Logf("terraform plan with an empty image:\n%s", out)

	if out, err := tf.run(work, append([]string{"apply", "-input=false", "-auto-approve"}, vars...)...); err != nil {
		t.Fatalf("terraform apply: %v\n%s", err, out)
	}
	state, err := os.ReadFile(filepath.Join(work, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(state, []byte(secret)) {
		t.Errorf("terraform.tfstate holds the secret:\n%s", state)
	}
	if !bytes.Contains(state, []byte(`"secrets_wo": null`)) {
		t.Errorf("terraform.tfstate has no null secrets_wo:\n%s", state)
	}
	globex, err := ll.Client().Tenants().Get(context.Background(), "globex", llclient.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(globex.ComputeConfig), `"DB_PASSWORD":"[redacted]"`) {
		t.Errorf("landlord's globex has no secret DB_PASSWORD: %s", globex.ComputeConfig)
	}

	// -detailed-exitcode: 0 is no change, 2 a change.
	if out, err := tf.run(work, append([]string{"plan", "-input=false", "-detailed-exitcode"}, vars...)...); err != nil {
		t.Errorf("a plan after the apply is not empty (%v):\n%s", err, out)
	}
	if out, err := tf.run(work, append([]string{"destroy", "-input=false", "-auto-approve"}, vars...)...); err != nil {
		t.Fatalf("terraform destroy: %v\n%s", err, out)
	}
	list, err := ll.Client().Tenants().List(context.Background(), llclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	plans, err := ll.Client().Plans().List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Tenants) != 0 || len(plans.Plans) != 0 {
		t.Errorf("after destroy, landlord has %d tenants and %d plans", len(list.Tenants), len(plans.Plans))
	}
}

// terraformCLI runs the terraform binary with this module's provider
// installed through dev_overrides.
type terraformCLI struct {
	bin string
	env []string
}

func newTerraformCLI(t *testing.T) *terraformCLI {
	t.Helper()
	bin, _ := terraformBinary()
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "terraform-provider-landlord"), ".")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build terraform-provider-landlord: %v\n%s", err, out)
	}
	rc := filepath.Join(dir, "terraform.rc")
	config := `provider_installation {
  dev_overrides {
    "jaxxstorm/landlord" = "` + dir + `"
  }
  direct {}
}
`
	if err := os.WriteFile(rc, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return &terraformCLI{bin: bin, env: append(os.Environ(), "TF_CLI_CONFIG_FILE="+rc, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1", "NO_COLOR=1")}
}

// run runs terraform with args in dir and returns what it printed.
func (c *terraformCLI) run(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, append(args, "-no-color")...)
	cmd.Dir = dir
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && ctx.Err() != nil {
		err = ctx.Err()
	}
	return string(out), err
}

// TestDocsShowTheCompleteExample: docs/terraform.md shows
// examples/complete/main.tf as it is, the example the test above applies.
func TestDocsShowTheCompleteExample(t *testing.T) {
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "complete", "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "terraform.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, []byte("```hcl\n"+string(example)+"```\n")) {
		t.Error("docs/terraform.md does not show terraform-provider-landlord/examples/complete/main.tf as it is: copy it into its hcl block")
	}
}
