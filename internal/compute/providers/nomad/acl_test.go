package nomad_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute/providers/docker/dockertest"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// policyFile is the ACL policy landlord's documentation gives operators.
const policyFile = "../../../../deploy/nomad/landlord-policy.hcl"

// refusal is Nomad's answer to a request the token may not make.
var refusal = regexp.MustCompile(`\(HTTP 403\)|Permission denied`)

// A token with the policy of deploy/nomad/landlord-policy.hcl, on an
// agent with ACLs on, may do everything landlord does: the health check,
// Provision, GetStatus, the change watch (the event stream and the
// blocking query on the Variables), Inspect (a plan, the Variables' list
// and items), Update putting back a scaled job and a purged Variable, and
// Destroy (the allocations' collection among it). A token without it is
// refused, which shows that the ACLs are on.
func TestPolicyAllowsWhatLandlordDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an agent of its own")
	}
	a := nomadtest.StartWithACL(t)
	images := dockertest.EchoImage(t)
	rules, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Client.Namespaces().Register(&api.Namespace{Name: "landlord"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Client.ACLPolicies().Upsert(&api.ACLPolicy{Name: "landlord", Rules: string(rules)}, nil); err != nil {
		t.Fatalf("apply %s: %v", policyFile, err)
	}
	token, _, err := a.Client.ACLTokens().Create(&api.ACLToken{Name: "landlord", Type: "client", Policies: []string{"landlord"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := &api.WriteOptions{Namespace: "landlord"}
	const id, job = "00000000-0000-4000-8000-00000000ac01", "landlord-acl"

	unprivileged := newProvider(t, block(a, `"namespace": "landlord"`), nil)
	if _, err := unprivileged.Provision(context.Background(), resolve(t, unprivileged, id, "acl", echoConfig(images[0], "x"))); err == nil || !refusal.MatchString(err.Error()) {
		t.Fatalf("Provision without a token = %v; want Nomad's refusal (are the ACLs on?)", err)
	}

	logs := &providertest.LogBuffer{}
	p := newProvider(t, block(a, `"namespace": "landlord", "token": "`+token.SecretID+`"`), logs)
	t.Cleanup(func() {
		// Nomad's refusal, as the provider words it ("nomad: …:
		// Permission denied (HTTP 403)"); not any "403", which an index
		// or a duration in the log may hold.
		if refusal.Match(logs.Bytes()) {
			t.Errorf("the provider's log has a refusal:\n%s", logs.Bytes())
		}
	})
	if err := p.CheckHealth(context.Background()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	heard := make(chan string, 1024)
	watched := make(chan error, 1)
	go func() { watched <- p.WatchChanges(ctx, func(id string) { heard <- id }) }()
	defer func() {
		cancel()
		<-watched
	}()

	spec := resolve(t, p, id, "acl", appConfig(images[0], "acl", `"secrets": {"API_KEY": "k-acl"}`))
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	waitState(t, p, id, provider.StateRunning)
	if in, err := p.Inspect(context.Background(), spec); err != nil || len(in.Drift) != 0 {
		t.Fatalf("Inspect: %+v, %v", in, err)
	}
	eventually(t, "the deployment", func() bool {
		dep, _, err := a.Client.Jobs().LatestDeployment(job, &api.QueryOptions{Namespace: "landlord"})
		return err == nil && dep != nil && dep.Status == api.DeploymentStatusSuccessful
	})

	// Changes with the management token, heard and put back with landlord's.
	drain(heard)
	if _, err := a.Client.Variables().Delete("nomad/jobs/"+job+"/tenant/app", ns); err != nil {
		t.Fatal(err)
	}
	expectNotice(t, heard, id, "nomad var purge")
	if _, _, err := a.Client.Jobs().Scale(job, "tenant", new(2), "", false, nil, ns); err != nil {
		t.Fatal(err)
	}
	expectNotice(t, heard, id, "nomad job scale")
	in, err := p.Inspect(context.Background(), spec)
	if err != nil || !slices.Equal(paths(in.Drift), []string{"job/count", "variable/app"}) {
		t.Fatalf("Inspect after the changes: %+v, %v; want job/count and variable/app", in, err)
	}
	if _, err := p.Update(context.Background(), id, spec); err != nil {
		t.Fatalf("Update: %v", err)
	}
	if in, err := p.Inspect(context.Background(), spec); err != nil || len(in.Drift) != 0 {
		t.Fatalf("Inspect after Update: %+v, %v", in, err)
	}
	waitState(t, p, id, provider.StateRunning)
	if err := p.Destroy(context.Background(), id); err != nil {
		t.Fatalf("Destroy: %v", err)
	}
	if n := len(a.Containers(t, job)); n != 0 {
		t.Errorf("%d containers left after Destroy", n)
	}
}

func drain(ch chan string) {
	for len(ch) > 0 {
		<-ch
	}
}

// expectNotice waits until the change watch names the tenant.
func expectNotice(t *testing.T, heard chan string, id, after string) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case got := <-heard:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("no notice for tenant %s after %s", id, after)
		}
	}
}
