package ecs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs"
	"github.com/jaxxstorm/landlord/internal/compute/providers/ecs/ecsfake"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// pullFailure is the stoppedReason ECS gives a task whose image does not
// exist.
const pullFailure = "CannotPullContainerError: pull image manifest has been retried 5 time(s): failed to resolve ref ghcr.io/example/missing:1.0: not found"

// TestEndToEndThroughServe drives `landlord serve` with the ecs provider,
// pointed at a fake ECS in this process, through the public client:
// create, a new image, an image that never pulls, a SIGKILL while tenants
// provision, and delete.
func TestEndToEndThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	// Latency makes a provision take long enough to be killed halfway.
	srv := ecsfake.Start(t, ecsfake.Options{StepTime: 50 * time.Millisecond, DrainTime: 200 * time.Millisecond, Latency: 5 * time.Millisecond})
	l := startServeECS(t, srv, `controller:
  workers: 4
  resync: 1s
  lease_ttl: 2s
  progress_deadline: 5s
`)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tenants := l.Client().Tenants()

	// The tenant whose image never pulls runs alongside the others.
	srv.FailImage("ghcr.io/example/missing:1.0", pullFailure)
	broken := servetest.CreateTenant(ctx, t, tenants, "e2e-broken", appConfig("ghcr.io/example/missing:1.0"))
	brokenDone := make(chan struct{})
	go func() {
		defer close(brokenDone)
		checkPullFailure(ctx, t, tenants, broken.ID)
	}()

	app := servetest.CreateTenant(ctx, t, tenants, "e2e-app", appConfig("ghcr.io/example/app:1.0"))
	tn, err := tenants.Wait(ctx, app.ID, llclient.UntilReady, nil)
	if err != nil {
		t.Fatalf("wait ready: %v", err)
	}
	first := checkServes(t, srv, tn)

	// A new image: a new revision, rolled out.
	cfg := appConfig("ghcr.io/example/app:2.0")
	set, err := tenants.Replace(ctx, app.ID, llclient.ReplaceTenantRequest{ComputeConfig: cfg}, llclient.UpdateOptions{IfMatch: tn.Version})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	tn, err = tenants.Wait(ctx, app.ID, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < set.Generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	}, nil)
	if err != nil {
		t.Fatalf("wait ready at generation %d: %v", set.Generation, err)
	}
	if tn.ObservedGeneration != tn.Generation {
		t.Errorf("after set the tenant is ready at observed_generation %d, generation %d", tn.ObservedGeneration, tn.Generation)
	}
	second := checkServes(t, srv, tn)
	if second == first {
		t.Errorf("after set the service still runs %s", first)
	}
	// The first revision stays while the second rolls out, for a circuit
	// breaker's rollback; it goes at the next change of the task definition.
	checkRevisions(t, srv, "landlord-e2e-app", map[string]types.TaskDefinitionStatus{first: types.TaskDefinitionStatusActive, second: types.TaskDefinitionStatusActive})
	if img := taskImages(srv, "landlord-e2e-app"); !slices.Equal(img, []string{"ghcr.io/example/app:2.0"}) {
		t.Errorf("after set the running tasks run %v, want only ghcr.io/example/app:2.0", img)
	}

	crashed := crashWhileProvisioning(ctx, t, srv, l, 10)
	<-brokenDone
	checkNoOrphans(t, srv, append([]string{app.ID, broken.ID}, crashed...))

	// Delete everything: services deleted, revisions deregistered.
	all := map[string]string{app.ID: "e2e-app", broken.ID: "e2e-broken"}
	for i, id := range crashed {
		all[id] = fmt.Sprintf("e2e-crash-%02d", i)
	}
	var wg sync.WaitGroup
	for id := range all {
		wg.Go(func() {
			if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
				t.Errorf("delete %s: %v", id, err)
				return
			}
			if _, err := tenants.Wait(ctx, id, llclient.UntilDeleted, nil); err != nil {
				t.Errorf("wait deleted %s: %v", id, err)
			}
		})
	}
	wg.Wait()
	for id, name := range all {
		checkDeleted(t, srv, id, ecs.DefaultServiceNamePrefix+name)
	}
}

// checkPullFailure waits until the tenant's status message carries the
// stopped tasks' reason, then until the deployment circuit breaker has
// failed the tenant with it: the progress deadline (5s) and a few polls.
func checkPullFailure(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var reported bool
	_, err := tenants.Wait(ctx, id, llclient.UntilReady, func(tn llclient.Tenant) {
		reported = reported || strings.Contains(tn.StatusMessage, "CannotPullContainerError")
	})
	var failed *llclient.TenantFailedError
	if !errors.As(err, &failed) {
		t.Errorf("a tenant whose image never pulls: want it failed, got %v", err)
		return
	}
	if !reported {
		t.Errorf("a tenant whose image never pulls: no status message before it failed named CannotPullContainerError")
	}
	for _, want := range []string{"circuit breaker", pullFailure} {
		if !strings.Contains(failed.Tenant.StatusMessage, want) {
			t.Errorf("a tenant whose image never pulls failed with %q, which lacks %q", failed.Tenant.StatusMessage, want)
		}
	}
}

// crashWhileProvisioning creates n tenants, kills `landlord serve` with
// SIGKILL once some are provisioning and at least one of their services
// exists, starts it again on the same database, and checks that every
// tenant ends ready with exactly one service and one active revision. It
// returns the tenants' ids.
func crashWhileProvisioning(ctx context.Context, t *testing.T, srv *ecsfake.Server, l *servetest.Process, n int) []string {
	t.Helper()
	tenants := l.Client().Tenants()
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ids[i] = servetest.CreateTenant(ctx, t, tenants, fmt.Sprintf("e2e-crash-%02d", i), appConfig(fmt.Sprintf("ghcr.io/example/app:1.%d", i))).ID
		})
	}
	wg.Wait()
	if slices.Contains(ids, "") {
		t.FailNow()
	}
	var provisioning, services int
	poll.Until(t, "3 tenants provisioning and a service created", 30*time.Second, func() (bool, string) {
		list, err := tenants.List(ctx, llclient.ListOptions{NamePrefix: "e2e-crash-", PageSize: 100})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		provisioning, services = 0, 0
		for _, tn := range list.Tenants {
			if tn.Status == llclient.StatusRequested || tn.Status == llclient.StatusProvisioning {
				provisioning++
			}
		}
		for _, s := range srv.Services("landlord") {
			if strings.HasPrefix(aws.ToString(s.ServiceName), "landlord-e2e-crash-") {
				services++
			}
		}
		if provisioning == 0 {
			t.Fatalf("every tenant settled before landlord serve could be killed mid-provision")
		}
		return provisioning >= 3 && services > 0, fmt.Sprintf("%d tenants provisioning, %d services", provisioning, services)
	})
	l.Kill()
	t.Logf("killed landlord serve with %d of %d tenants provisioning and %d of their services created", provisioning, n, services)
	l.Start()

	for i, id := range ids {
		wg.Go(func() {
			if _, err := tenants.Wait(ctx, id, llclient.UntilReady, nil); err != nil {
				t.Errorf("tenant %d after the restart: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i, id := range ids {
		name := fmt.Sprintf("landlord-e2e-crash-%02d", i)
		if got := liveServices(srv, id); len(got) != 1 {
			t.Errorf("after the restart tenant %d has %d live services %v, want 1", i, len(got), serviceNames(got))
		}
		active := 0
		for _, td := range srv.TaskDefinitions(name) {
			if td.Status == types.TaskDefinitionStatusActive {
				active++
			}
		}
		if active != 1 {
			t.Errorf("after the restart the family %s has %d active revisions, want 1", name, active)
		}
	}
	return ids
}

// startServeECS starts `landlord serve` with the ecs provider's block
// pointed at srv, on Fargate in its landlord cluster, plus extra YAML; the
// process finds static credentials in its environment and reads no AWS
// configuration of the machine.
func startServeECS(tb testing.TB, srv *ecsfake.Server, extra string) *servetest.Process {
	tb.Helper()
	return startServeECSBlock(tb, srv, "execution_role_arn: "+executionRole, extra)
}

// startServeECSBlock is startServeECS with more keys (YAML, one a line) in
// the ecs block, which otherwise has no execution role.
func startServeECSBlock(tb testing.TB, srv *ecsfake.Server, keys, extra string) *servetest.Process {
	tb.Helper()
	home := tb.TempDir()
	config := fmt.Sprintf(`compute:
  default: ecs
  ecs:
    cluster_arn: %s
    endpoint: %s
    launch_type: FARGATE
    subnets: [subnet-0a1b2c3d]
    security_groups: [sg-0a1b2c3d]
    drain_wait: 10s
`, srv.ClusterARN("landlord"), srv.URL)
	for line := range strings.Lines(keys) {
		config += "    " + strings.TrimSpace(line) + "\n"
	}
	config += extra
	env := []string{
		"AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret", "AWS_EC2_METADATA_DISABLED=true",
		"HOME=" + home, "AWS_CONFIG_FILE=" + filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(home, "credentials"),
	}
	// Empty is unset to the SDK: none of the machine's own may reach it.
	for _, k := range []string{"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_ECS", "AWS_CA_BUNDLE", "AWS_REGION", "AWS_DEFAULT_REGION"} {
		env = append(env, k+"=")
	}
	l := servetest.New(tb, servetest.Options{Config: config, Env: env})
	l.Start()
	return l
}

// appConfig is a tenant's compute_config running image on port 8080.
func appConfig(image string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": %q, "ports": [{"container_port": 8080}]}`, image))
}

// checkServes checks that a ready tenant has exactly one live service,
// tagged with its id and named in its resource ids, and that its endpoints
// are the addresses of the service's running tasks; it returns the task
// definition the service runs.
func checkServes(t *testing.T, srv *ecsfake.Server, tn *llclient.Tenant) string {
	t.Helper()
	svcs := liveServices(srv, tn.ID)
	if len(svcs) != 1 {
		t.Fatalf("tenant %s has %d live services %v, want 1", tn.Name, len(svcs), serviceNames(svcs))
	}
	s := svcs[0]
	if want := ecs.DefaultServiceNamePrefix + tn.Name; aws.ToString(s.ServiceName) != want {
		t.Errorf("tenant %s's service is named %s, want %s", tn.Name, aws.ToString(s.ServiceName), want)
	}
	if got := tn.ResourceIDs["service"]; got != aws.ToString(s.ServiceArn) {
		t.Errorf("tenant %s's resource_ids name service %q, want %s", tn.Name, got, aws.ToString(s.ServiceArn))
	}
	if got := tn.ResourceIDs["task_definition"]; got != aws.ToString(s.TaskDefinition) {
		t.Errorf("tenant %s's resource_ids name task definition %q; the service runs %s", tn.Name, got, aws.ToString(s.TaskDefinition))
	}
	var addrs []string
	for _, task := range srv.Tasks("landlord", aws.ToString(s.ServiceName)) {
		if aws.ToString(task.LastStatus) != "RUNNING" || aws.ToString(task.TaskDefinitionArn) != aws.ToString(s.TaskDefinition) {
			continue
		}
		for _, a := range task.Attachments {
			for _, d := range a.Details {
				if aws.ToString(d.Name) == "privateIPv4Address" {
					addrs = append(addrs, aws.ToString(d.Value)+":8080")
				}
			}
		}
	}
	var got []string
	for _, e := range tn.Endpoints {
		got = append(got, e.Address)
	}
	slices.Sort(addrs)
	slices.Sort(got)
	if len(addrs) == 0 || !slices.Equal(got, addrs) {
		t.Errorf("tenant %s's endpoints are %v; its running tasks are at %v", tn.Name, got, addrs)
	}
	return aws.ToString(s.TaskDefinition)
}

// checkRevisions checks the status of revisions of family.
func checkRevisions(t *testing.T, srv *ecsfake.Server, family string, want map[string]types.TaskDefinitionStatus) {
	t.Helper()
	got := map[string]types.TaskDefinitionStatus{}
	for _, td := range srv.TaskDefinitions(family) {
		got[aws.ToString(td.TaskDefinitionArn)] = td.Status
	}
	for arn, status := range want {
		if got[arn] != status {
			t.Errorf("revision %s is %q, want %s", arn, got[arn], status)
		}
	}
}

// checkNoOrphans checks that every service in the fake that is not
// INACTIVE belongs to one of the tenants.
func checkNoOrphans(t *testing.T, srv *ecsfake.Server, ids []string) {
	t.Helper()
	for _, s := range srv.Services("landlord") {
		if aws.ToString(s.Status) == "INACTIVE" {
			continue
		}
		if owner := serviceTag(s, "landlord:tenant-id"); !slices.Contains(ids, owner) {
			t.Errorf("service %s (%s) belongs to no tenant: its tenant-id tag is %q", aws.ToString(s.ServiceName), aws.ToString(s.Status), owner)
		}
	}
}

// checkDeleted checks that a deleted tenant's service is DRAINING or
// INACTIVE and that no revision of its family is active.
func checkDeleted(t *testing.T, srv *ecsfake.Server, id, name string) {
	t.Helper()
	if live := liveServices(srv, id); len(live) != 0 {
		t.Errorf("after delete tenant %s still has live services %v", name, serviceNames(live))
	}
	seen := false
	for _, s := range srv.Services("landlord") {
		if aws.ToString(s.ServiceName) == name {
			seen = true
			if st := aws.ToString(s.Status); st != "DRAINING" && st != "INACTIVE" {
				t.Errorf("after delete service %s is %s", name, st)
			}
		}
	}
	if !seen {
		t.Errorf("the fake never had a service %s", name)
	}
	for _, td := range srv.TaskDefinitions(name) {
		if td.Status != types.TaskDefinitionStatusInactive {
			t.Errorf("after delete revision %s is %s, want INACTIVE", aws.ToString(td.TaskDefinitionArn), td.Status)
		}
	}
}

func serviceNames(svcs []types.Service) []string {
	out := make([]string, len(svcs))
	for i, s := range svcs {
		out[i] = aws.ToString(s.ServiceArn)
	}
	return out
}

// liveServices are the ACTIVE services tagged with the tenant's id.
func liveServices(srv *ecsfake.Server, tenantID string) []types.Service {
	var out []types.Service
	for _, s := range srv.Services("landlord") {
		if aws.ToString(s.Status) == "ACTIVE" && serviceTag(s, "landlord:tenant-id") == tenantID {
			out = append(out, s)
		}
	}
	return out
}

// taskImages are the images of the service's running tasks, sorted and
// without repeats.
func taskImages(srv *ecsfake.Server, service string) []string {
	var out []string
	for _, task := range srv.Tasks("landlord", service) {
		if aws.ToString(task.LastStatus) != "RUNNING" {
			continue
		}
		for _, c := range task.Containers {
			out = append(out, aws.ToString(c.Image))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func serviceTag(s types.Service, key string) string {
	for _, t := range s.Tags {
		if aws.ToString(t.Key) == key {
			return aws.ToString(t.Value)
		}
	}
	return ""
}
