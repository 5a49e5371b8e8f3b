// Package deploy tests the Nomad job landlord ships
// (deploy/nomad/landlord.nomad.hcl) on a real Nomad agent; the Helm chart
// and the systemd unit are tested in deploy/helm and deploy/systemd.
package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/demo"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/release"
	"github.com/jaxxstorm/landlord/internal/release/releasetest"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

func TestMain(m *testing.M) { os.Exit(nomadtest.Main(m)) }

// TestNomadJob runs the shipped job file on the test agent, as its header
// says to: landlord from its release image, its secrets from the Nomad
// Variable, HTTPS, SQLite on the allocation's disk. Its deployment turns
// healthy on the /readyz check, and it provisions a tenant on the same
// agent (the nomad provider) whose page answers, then deletes it.
func TestNomadJob(t *testing.T) {
	a := nomadtest.Start(t)
	cli := dockertest.Engine(t)
	// 41 s alone; the budget is for a machine CI loads with every other
	// test at once (6 minutes were once not enough there).
	ctx, cancel := context.WithTimeout(t.Context(), 12*time.Minute)
	defer cancel()
	runID := dockertest.RunID()

	ref := "landlord-test/nomad-job:" + runID
	bin := releasetest.LoadImage(ctx, t, ref, release.Meta{Version: "v0.0.0-nomad", Commit: "nomad", Date: time.Now().UTC().Truncate(time.Second)})
	demoRef := "landlord-test/nomad-job-demo:" + runID
	if _, err := demo.Load(ctx, cli, demo.Options{Binary: bin, Ref: demoRef}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exec.Command("docker", "image", "rm", "--force", demoRef).Run() })

	pki := clienttest.NewPKI(t, "127.0.0.1")
	crt, _ := os.ReadFile(pki.ServerCertFile)
	key, _ := os.ReadFile(pki.ServerKeyFile)
	const token = "nomad-job-admin-token"
	if _, _, err := a.Client.Variables().Create(&api.Variable{Path: "nomad/jobs/landlord", Items: api.VariableItems{
		"admin_token": token, "tls_crt": string(crt), "tls_key": string(key),
	}}, nil); err != nil {
		t.Fatal(err)
	}
	hcl, err := os.ReadFile("nomad/landlord.nomad.hcl")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(servetest.FreeAddr(t), ":")
	job, err := a.Client.Jobs().ParseHCLOpts(&api.JobsParseRequest{
		JobHCL:    string(hcl),
		Variables: fmt.Sprintf("image = %q\nport = %s\nnomad_addr = %q\n", ref, port, a.Address),
	})
	if err != nil {
		t.Fatalf("the agent refuses the job file: %v", err)
	}
	if _, _, err := a.Client.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register: %v", err)
	}
	t.Cleanup(func() { _, _, _ = a.Client.Jobs().Deregister("landlord", true, nil) })
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := exec.Command("docker", "ps", "--all", "--filter", "label=com.hashicorp.nomad.job_id=landlord", "--format", "{{.ID}} {{.Status}}").CombinedOutput()
			t.Logf("landlord's containers: %s", out)
			for id := range strings.FieldsSeq(string(out)) {
				logs, _ := exec.Command("docker", "logs", "--tail", "40", id).CombinedOutput()
				t.Logf("%s", logs)
				break
			}
		}
	})
	poll.Until(t, "the job's deployment successful: its /readyz check passes", 6*time.Minute, func() (bool, string) {
		d, _, err := a.Client.Jobs().LatestDeployment("landlord", nil)
		if err != nil || d == nil {
			return false, fmt.Sprint(err)
		}
		return d.Status == "successful", d.Status + ": " + d.StatusDescription
	})

	lc, err := llclient.New(llclient.Config{Address: "https://127.0.0.1:" + port, Token: token, CACertFile: pki.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	tenants := lc.Tenants()
	cfg := fmt.Sprintf(`{"image": %q, "args": ["on-nomad"], "ports": [{"container_port": 8080, "name": "http"}],
		"health_check": {"http": {"port": 8080, "path": "/"}, "interval": "1s", "timeout": "1s"},
		"resources": {"cpu_millicores": 100, "memory_mib": 32}}`, demoRef)
	tn := servetest.CreateReady(ctx, t, tenants, "on-nomad", json.RawMessage(cfg))
	res, err := http.Get("http://" + tn.Endpoints[0].Address + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(body), "on-nomad") {
		t.Errorf("the tenant's page: %s %.200s", res.Status, body)
	}
	if _, err := tenants.Delete(ctx, tn.ID, llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := tenants.Wait(ctx, tn.ID, llclient.UntilDeleted, nil); err != nil {
		t.Fatal(err)
	}
}
