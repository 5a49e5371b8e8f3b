package nomad_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	llclient "github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/internal/servetest"
)

// TestEndToEndThroughServe drives `landlord serve` with a nomad block
// against the real agent, whose docker driver starts the tenants' real
// containers, through the public client. The controller polls once an
// hour: what moves tenants along is Nomad's event stream. It checks:
// create (the container answers on the reported endpoint, with its secret
// in its environment and not in the job), a new env value (a new job
// version and deployment; the endpoint answers the new value), a task that
// exits at once (the exit code in the tenant's message), `nomad job stop`
// behind landlord's back (repaired), and delete (no job, allocation,
// Variable or container left). It logs landlord's API calls per lifecycle
// and the time from register to ready beside the same job registered by
// hand.
func TestEndToEndThroughServe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	a, images := start(t)
	proxy := newAPIProxy(t, a.Address)
	l := startServe(t, proxy.URL, "workers: 4", "poll_interval: 1h", "resync: 1h", "lease_ttl: 2s")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tenants := l.Client().Tenants()

	// One whole lifecycle alone, to count landlord's API calls.
	proxy.counts()
	counted := servetest.CreateTenant(ctx, t, tenants, "e2e-count", appConfig(images[0], "hi", ""))
	if t.Failed() {
		t.FailNow()
	}
	waitTenant(ctx, t, tenants, counted.ID, llclient.UntilReady)
	if _, err := tenants.Delete(ctx, counted.ID, llclient.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitTenant(ctx, t, tenants, counted.ID, llclient.UntilDeleted)
	calls := proxy.counts()
	total := 0
	for _, n := range calls {
		total += n
	}
	t.Logf("landlord's Nomad API calls for one create → ready → delete: %d: %v", total, calls)

	// Create: the container answers on the endpoint landlord reports.
	app := servetest.CreateTenant(ctx, t, tenants, "e2e-app", appConfig(images[0], "hello", `"secrets": {"API_KEY": "k-1\"quoted\""}`))
	if t.Failed() {
		t.FailNow()
	}
	tn := waitTenant(ctx, t, tenants, app.ID, llclient.UntilReady)
	job, _, err := a.Client.Jobs().Info("landlord-e2e-app", nil)
	if err != nil {
		t.Fatal(err)
	}
	submitted := time.Unix(0, *job.SubmitTime)
	t.Logf("landlord: job registered → tenant ready in %v", readyAt(ctx, t, tenants, app.ID, tn.Generation).Sub(submitted).Round(time.Millisecond))
	env := endpointEnv(ctx, t, tn)
	if env["GREETING"] != "hello" || env["API_KEY"] != `k-1"quoted"` {
		t.Errorf("the container's environment: GREETING=%q API_KEY=%q", env["GREETING"], env["API_KEY"])
	}
	if b, _ := json.Marshal(job); strings.Contains(string(b), "k-1") {
		t.Error("the secret value is in the job, for anyone who may read it to see")
	}
	if tn.ResourceIDs["job"] != "landlord-e2e-app" || tn.ResourceIDs["namespace"] != "default" {
		t.Errorf("resource ids %v", tn.ResourceIDs)
	}
	byHand(ctx, t, a, job)

	// A new env value: a new job version, deployed; the endpoint answers it.
	set, err := tenants.Replace(ctx, app.ID, llclient.ReplaceTenantRequest{ComputeConfig: appConfig(images[0], "bonjour", `"secrets": {"API_KEY": "k-1\"quoted\""}`)},
		llclient.UpdateOptions{IfMatch: tn.Version})
	if err != nil {
		t.Fatalf("set: %v", err)
	}
	tn = waitTenant(ctx, t, tenants, app.ID, func(tn llclient.Tenant) (bool, error) {
		if tn.ObservedGeneration < set.Generation {
			return false, nil
		}
		return llclient.UntilReady(tn)
	})
	if env := endpointEnv(ctx, t, tn); env["GREETING"] != "bonjour" || env["API_KEY"] != `k-1"quoted"` {
		t.Errorf("after set the container's environment: GREETING=%q API_KEY=%q", env["GREETING"], env["API_KEY"])
	}
	dep, _, err := a.Client.Jobs().LatestDeployment("landlord-e2e-app", nil)
	if err != nil || dep == nil || dep.JobVersion != 1 || dep.Status != api.DeploymentStatusSuccessful {
		t.Errorf("after set the latest deployment is %+v (%v), want version 1 successful", dep, err)
	}

	// A task that exits at once: its exit code reaches the tenant, and once
	// the progress deadline passes (Nomad reschedules unhealthy allocations
	// until then), the deployment's failure.
	broken := servetest.CreateTenant(ctx, t, tenants, "e2e-broken", appConfig(images[0], "x", `"env": {"PORT": "not-a-port"}, "restart": {"attempts": 0, "mode": "fail"},
		"update": {"min_healthy_time": "500ms", "healthy_deadline": "5s", "progress_deadline": "10s"}`))
	waitCtx, waitCancel := context.WithTimeout(ctx, 60*time.Second)
	got, err := tenants.Wait(waitCtx, broken.ID, func(tn llclient.Tenant) (bool, error) {
		return strings.Contains(tn.StatusMessage, "deployment failed") && strings.Contains(tn.StatusMessage, "exited with code 1"), nil
	}, nil)
	waitCancel()
	if err != nil {
		t.Errorf("the message of a tenant whose task exits never gave the exit code: %v", err)
	} else {
		t.Logf("tenant whose task exits: %s: %s", got.Status, got.StatusMessage)
	}

	// nomad job stop behind landlord's back: the event stream tells the
	// controller, which registers the job again.
	if _, _, err := a.Client.Jobs().Deregister("landlord-e2e-app", false, nil); err != nil {
		t.Fatal(err)
	}
	stoppedAt := time.Now()
	poll.Until(t, "the stopped job is registered again", time.Minute, func() (bool, string) {
		j, _, err := a.Client.Jobs().Info("landlord-e2e-app", nil)
		if err != nil {
			return false, err.Error()
		}
		return j.Stop == nil || !*j.Stop, "the job is stopped"
	})
	t.Logf("the stopped job was registered again %v after nomad job stop", time.Since(stoppedAt).Round(time.Millisecond))
	tn = waitTenant(ctx, t, tenants, app.ID, func(tn llclient.Tenant) (bool, error) {
		if tn.Status != llclient.StatusReady || len(tn.Endpoints) == 0 {
			return false, nil
		}
		return endpointAnswers(ctx, tn), nil
	})
	if env := endpointEnv(ctx, t, tn); env["GREETING"] != "bonjour" {
		t.Errorf("the repaired job's container says GREETING=%q", env["GREETING"])
	}

	// Delete: nothing of either tenant is left.
	for _, id := range []string{app.ID, broken.ID} {
		if _, err := tenants.Delete(ctx, id, llclient.DeleteOptions{}); err != nil {
			t.Errorf("delete %s: %v", id, err)
		}
	}
	for id, jobID := range map[string]string{app.ID: "landlord-e2e-app", broken.ID: "landlord-e2e-broken"} {
		waitTenant(ctx, t, tenants, id, llclient.UntilDeleted)
		if n := countResources(t, a, id, jobID); n != 0 {
			t.Errorf("tenant %s: %d resources left (jobs, Variables, containers)", id, n)
		}
		allocs, _, err := a.Client.Jobs().Allocations(jobID, true, nil)
		if err != nil || slices.ContainsFunc(allocs, func(a *api.AllocationListStub) bool { return a.ClientStatus == api.AllocClientStatusRunning }) {
			t.Errorf("job %s: allocations still running: %v", jobID, err)
		}
	}
}

// appConfig is the echo image answering on 8080 with GREETING, plus extra
// members.
func appConfig(image, greeting, extra string) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(echoConfig(image, greeting), &m); err != nil {
		panic(err)
	}
	if extra != "" {
		var more map[string]any
		if err := json.Unmarshal([]byte("{"+extra+"}"), &more); err != nil {
			panic(err)
		}
		for k, v := range more {
			if k == "env" {
				for ek, ev := range v.(map[string]any) {
					m["env"].(map[string]any)[ek] = ev
				}
				continue
			}
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return b
}

// waitTenant waits until done holds for the tenant.
func waitTenant(ctx context.Context, t *testing.T, tenants *llclient.Tenants, id string, done func(llclient.Tenant) (bool, error)) llclient.Tenant {
	t.Helper()
	tn, err := tenants.Wait(ctx, id, done, nil)
	if err != nil && !(llclient.IsNotFound(err)) {
		t.Fatalf("wait for tenant %s: %v", id, err)
	}
	if tn == nil {
		return llclient.Tenant{}
	}
	return *tn
}

// endpointEnv is the environment the tenant's container reports on its
// first endpoint.
func endpointEnv(ctx context.Context, t *testing.T, tn llclient.Tenant) map[string]string {
	t.Helper()
	if len(tn.Endpoints) == 0 {
		t.Fatalf("tenant %s has no endpoint", tn.Name)
	}
	return envAt(ctx, t, tn.Endpoints[0].Address)
}

// endpointAnswers reports whether the tenant's first endpoint answers.
func endpointAnswers(ctx context.Context, tn llclient.Tenant) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+tn.Endpoints[0].Address+"/healthz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// readyAt is when the tenant became ready at generation, from its history.
func readyAt(ctx context.Context, t testing.TB, tenants *llclient.Tenants, id string, generation int64) time.Time {
	t.Helper()
	var at time.Time
	for ev, err := range tenants.AllEvents(ctx, id, llclient.EventOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.To == llclient.StatusReady && ev.Generation == generation {
			at = ev.Time
		}
	}
	return at
}

// byHand registers a copy of job under another ID, as `nomad job run`
// would, logs how long its deployment takes to succeed, and removes it.
func byHand(ctx context.Context, t *testing.T, a *nomadtest.Agent, job *api.Job) {
	t.Helper()
	id := "byhand-" + *job.ID
	cp := *job
	cp.ID, cp.Name = &id, &id
	cp.Stop, cp.Status, cp.Version, cp.SubmitTime, cp.CreateIndex, cp.ModifyIndex, cp.JobModifyIndex = nil, nil, nil, nil, nil, nil, nil
	cp.Meta = nil
	begin := time.Now()
	if _, _, err := a.Client.Jobs().Register(&cp, nil); err != nil {
		t.Fatalf("register %s by hand: %v", id, err)
	}
	defer func() {
		_, _, _ = a.Client.Jobs().Deregister(id, false, nil)
		for ctx.Err() == nil {
			allocs, _, err := a.Client.Jobs().Allocations(id, true, nil)
			if err != nil || !slices.ContainsFunc(allocs, func(al *api.AllocationListStub) bool {
				return al.ClientStatus == api.AllocClientStatusRunning || al.ClientStatus == api.AllocClientStatusPending
			}) {
				for _, al := range allocs {
					_ = a.Client.Allocations().GC(&api.Allocation{ID: al.ID}, nil)
				}
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_, _, _ = a.Client.Jobs().Deregister(id, true, nil)
	}()
	poll.Until(t, "the job registered by hand deploys", 2*time.Minute, func() (bool, string) {
		dep, _, err := a.Client.Jobs().LatestDeployment(id, nil)
		return err == nil && dep != nil && dep.Status == api.DeploymentStatusSuccessful, fmt.Sprintf("%+v %v", dep, err)
	})
	t.Logf("by hand: the same job registered → deployment successful in %v", time.Since(begin).Round(time.Millisecond))
}
