package nomad_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/sdk/provider"
)

// inspect returns the paths of the tenant's drift, failing t on an error
// or a secret value shown.
func inspect(t *testing.T, p *nomad.Provider, spec *provider.TenantComputeSpec, secret string) []provider.Drift {
	t.Helper()
	in, err := p.Inspect(context.Background(), spec)
	if err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	if b, _ := json.Marshal(in); secret != "" && strings.Contains(string(b), secret) {
		t.Fatalf("Inspect shows a secret value: %s", b)
	}
	return in.Drift
}

func paths(drift []provider.Drift) []string {
	out := make([]string, len(drift))
	for i, d := range drift {
		out[i] = d.Path
	}
	return out
}

// Each change an operator can make to a tenant's job or its Variables with
// the nomad CLI is reported at its path, with nothing else (what Nomad
// fills in is not drift), and Update puts it back.
func TestInspectReportsEachChangeAndUpdateRepairsIt(t *testing.T) {
	a, images := start(t)
	p := newProvider(t, block(a, ""), nil)
	const id, job, secret = "00000000-0000-4000-8000-00000000d001", "landlord-edits", "s3cret-edits"
	spec := resolve(t, p, id, "edits", appConfig(images[0], "hi", `"secrets": {"API_KEY": "`+secret+`"}, "args": ["-v"]`))
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if d := inspect(t, p, spec, secret); len(d) != 0 {
		t.Fatalf("Inspect after Provision reports drift: %v", d)
	}
	waitDeployed(t, a, job)
	varPath := "nomad/jobs/" + job + "/tenant/app"
	editJob := func(edit func(j *api.Job)) func(t *testing.T) {
		return func(t *testing.T) {
			j, _, err := a.Client.Jobs().Info(job, nil)
			if err != nil {
				t.Fatal(err)
			}
			edit(j)
			if _, _, err := a.Client.Jobs().Register(j, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	app := func(j *api.Job) *api.Task { return j.TaskGroups[0].Tasks[0] }
	writeVar := func(items map[string]string) func(t *testing.T) {
		return func(t *testing.T) {
			if _, _, err := a.Client.Variables().Update(&api.Variable{Path: varPath, Items: items}, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct {
		name string
		do   func(t *testing.T)
		want []provider.Drift
	}{
		{"nomad job scale", func(t *testing.T) {
			if _, _, err := a.Client.Jobs().Scale(job, "tenant", new(2), "", false, nil, nil); err != nil {
				t.Fatal(err)
			}
		}, []provider.Drift{{Path: "job/count", Kind: provider.DriftScale, Expected: "1", Found: "2"}}},
		{"env value", editJob(func(j *api.Job) { app(j).Env["GREETING"] = "hacked" }),
			[]provider.Drift{{Path: "containers/app/env/GREETING", Kind: provider.DriftEnv, Expected: "hi", Found: "hacked"}}},
		{"env added and removed", editJob(func(j *api.Job) { delete(app(j).Env, "GREETING"); app(j).Env["NEW"] = "1" }), []provider.Drift{
			{Path: "containers/app/env/GREETING", Kind: provider.DriftEnv, Expected: "hi"},
			{Path: "containers/app/env/NEW", Kind: provider.DriftEnv, Found: "1"}}},
		{"a secret's name in the env", editJob(func(j *api.Job) { app(j).Env["API_KEY"] = "typed-by-hand" }),
			[]provider.Drift{{Path: "containers/app/env/API_KEY", Kind: provider.DriftEnv, Found: "[redacted]"}}},
		{"image", editJob(func(j *api.Job) { app(j).Config["image"] = images[1] }),
			[]provider.Drift{{Path: "containers/app/image", Kind: provider.DriftImage, Expected: images[0], Found: images[1]}}},
		{"args", editJob(func(j *api.Job) { app(j).Config["args"] = []string{"-v", "-x"} }),
			[]provider.Drift{{Path: "containers/app/args", Kind: provider.DriftCommand, Expected: "-v", Found: "-v -x"}}},
		{"entrypoint", editJob(func(j *api.Job) { app(j).Config["entrypoint"] = []string{"/bin/sh", "-c"} }),
			[]provider.Drift{{Path: "containers/app/command", Kind: provider.DriftCommand, Found: "/bin/sh -c"}}},
		{"labels", editJob(func(j *api.Job) { app(j).Config["labels"] = []map[string]string{{"team": "x"}} }),
			[]provider.Drift{{Path: "containers/app/labels", Kind: provider.DriftSettings,
				Expected: "dev.landlord.job=" + job + ",dev.landlord.tenant-id=" + id, Found: "team=x"}}},
		{"resources", editJob(func(j *api.Job) { app(j).Resources.CPU, app(j).Resources.MemoryMB = new(300), new(64) }), []provider.Drift{
			{Path: "containers/app/resources/cpu_millicores", Kind: provider.DriftResources, Expected: "100", Found: "300"},
			{Path: "containers/app/resources/memory_mib", Kind: provider.DriftResources, Expected: "32", Found: "64"}}},
		{"port", editJob(func(j *api.Job) { j.TaskGroups[0].Networks[0].DynamicPorts[0].To = 9090 }),
			[]provider.Drift{{Path: "containers/app/ports", Kind: provider.DriftPorts, Expected: "app_http to 8080", Found: "app_http to 9090"}}},
		{"port added", editJob(func(j *api.Job) {
			j.TaskGroups[0].Networks[0].ReservedPorts = []api.Port{{Label: "debug", Value: 23456}}
		}), []provider.Drift{{Path: "job/network/ports", Kind: provider.DriftPorts, Found: "debug 23456"}}},
		{"health check", editJob(func(j *api.Job) { j.TaskGroups[0].Services[0].Checks[0].Path = "/other" }),
			[]provider.Drift{{Path: "containers/app/health_check", Kind: provider.DriftHealth,
				Expected: "http /healthz every 1s, timeout 1s", Found: "http /other every 1s, timeout 1s"}}},
		{"service removed", editJob(func(j *api.Job) { j.TaskGroups[0].Services = nil }),
			[]provider.Drift{{Path: "service/landlord-edits-app-http", Kind: provider.DriftMissing, Expected: "present"}}},
		{"template removed", editJob(func(j *api.Job) { app(j).Templates = nil }),
			[]provider.Drift{{Path: "containers/app/template", Kind: provider.DriftMissing, Expected: "present"}}},
		{"meta", editJob(func(j *api.Job) { j.Meta["team"] = "x"; j.Meta["landlord_tenant_name"] = "other" }), []provider.Drift{
			{Path: "job/meta/landlord_tenant_name", Kind: provider.DriftSettings, Expected: "edits", Found: "other"},
			{Path: "job/meta/team", Kind: provider.DriftSettings, Found: "x"}}},
		{"datacenters", editJob(func(j *api.Job) { j.Datacenters = []string{"dc1"} }),
			[]provider.Drift{{Path: "job/datacenters", Kind: provider.DriftPlacement, Expected: "*", Found: "dc1"}}},
		{"constraint", editJob(func(j *api.Job) {
			j.Constraints = []*api.Constraint{api.NewConstraint("${attr.kernel.name}", "=", "linux")}
		}),
			[]provider.Drift{{Path: "job/constraints", Kind: provider.DriftPlacement, Found: "${attr.kernel.name} = linux"}}},
		{"update block", editJob(func(j *api.Job) { j.TaskGroups[0].Update.MinHealthyTime = new(2 * time.Second) }),
			[]provider.Drift{{Path: "job/update/min_healthy_time", Kind: provider.DriftSettings, Expected: "500ms", Found: "2s"}}},
		{"restart block", editJob(func(j *api.Job) { j.TaskGroups[0].RestartPolicy.Attempts = new(7) }),
			[]provider.Drift{{Path: "job/restart/attempts", Kind: provider.DriftSettings, Expected: "2", Found: "7"}}},
		{"nomad job stop", func(t *testing.T) {
			if _, _, err := a.Client.Jobs().Deregister(job, false, nil); err != nil {
				t.Fatal(err)
			}
		}, []provider.Drift{{Path: "job/status", Kind: provider.DriftState, Expected: "running", Found: "stopped"}}},
		{"nomad var purge", func(t *testing.T) {
			if _, err := a.Client.Variables().Delete(varPath, nil); err != nil {
				t.Fatal(err)
			}
		}, []provider.Drift{{Path: "variable/app", Kind: provider.DriftMissing, Expected: varPath}}},
		{"a secret value", writeVar(map[string]string{"API_KEY": "guessed"}),
			[]provider.Drift{{Path: "containers/app/secrets/API_KEY", Kind: provider.DriftEnv, Expected: "[redacted]", Found: "[redacted]"}}},
		{"a secret added", writeVar(map[string]string{"API_KEY": secret, "EXTRA": "x"}),
			[]provider.Drift{{Path: "containers/app/secrets/EXTRA", Kind: provider.DriftEnv, Found: "[redacted]"}}},
		{"another Variable", func(t *testing.T) {
			if _, _, err := a.Client.Variables().Update(&api.Variable{Path: "nomad/jobs/" + job + "/tenant/ghost", Items: map[string]string{"K": "v"}}, nil); err != nil {
				t.Fatal(err)
			}
		}, []provider.Drift{{Path: "variable/ghost", Kind: provider.DriftEnv, Found: "nomad/jobs/" + job + "/tenant/ghost"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.do(t)
			if diff := cmp.Diff(tt.want, inspect(t, p, spec, secret)); diff != "" {
				t.Errorf("Inspect after the change (-want +got):\n%s", diff)
			}
			res, err := p.Update(context.Background(), id, spec)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if res.Changes == nil {
				t.Errorf("Update wrote nothing over drift %v", paths(tt.want))
			}
			if d := inspect(t, p, spec, secret); len(d) != 0 {
				t.Errorf("Inspect after Update still reports %v", d)
			}
		})
	}
	vars, _, err := a.Client.Variables().PrefixList("nomad/jobs/"+job+"/", nil)
	if err != nil || len(vars) != 1 || vars[0].Path != varPath {
		t.Errorf("the job's Variables after the repairs: %v, %v; want only %s (the stray one removed)", vars, err, varPath)
	}
}

// What landlord registers shows no drift, whatever the config asks of
// Nomad: the plan compares canonical jobs, and landlord's bookkeeping is
// not drift.
func TestInspectFindsNoDriftInWhatLandlordRegisters(t *testing.T) {
	a, images := start(t)
	p := newProvider(t, block(a, `"allow_raw_exec": true`), nil)
	configs := map[string]string{
		"sidecar, static and udp ports, command, constraints, update, restart, meta": fmt.Sprintf(`{"image": %q, "command": ["/echo"], "args": ["-v"],
			"env": {"A": "1"}, "secrets": {"K": "v"},
			"ports": [{"container_port": 8080, "name": "http"}, {"container_port": 9000, "host_port": 29000, "protocol": "udp"}],
			"health_check": {"tcp": {"port": 8080}, "interval": "2s", "timeout": "1s", "retries": 3},
			"resources": {"cpu_millicores": 250, "memory_mib": 64},
			"sidecars": [{"name": "side-car", "image": %q, "env": {"PORT": "8081"}, "secrets": {"S": "w"}, "ports": [{"container_port": 8081}]}],
			"constraints": [{"attribute": "${attr.kernel.name}", "operator": "=", "value": "linux"}, {"operator": "distinct_hosts", "value": "true"}],
			"datacenters": ["dc1", "dc*"], "node_pool": "default", "meta": {"team": "payments"},
			"update": {"canary": 1, "max_parallel": 2, "auto_revert": true, "min_healthy_time": "1s", "healthy_deadline": "20s", "progress_deadline": "1m"},
			"restart": {"attempts": 1, "interval": "10m", "delay": "5s", "mode": "delay"}, "count": 2}`, images[0], images[1]),
		"consul services with a command check": fmt.Sprintf(`{"image": %q, "ports": [{"container_port": 8080}], "service_provider": "consul",
			"health_check": {"command": ["/bin/true"], "retries": 2}}`, images[0]),
		"raw_exec":             `{"image": "echo", "driver": "raw_exec", "command": ["/bin/sleep", "600"], "ports": [{"container_port": 28080}]}`,
		"count range":          fmt.Sprintf(`{"image": %q, "count": {"min": 0, "max": 3}}`, images[0]),
		"nothing but an image": fmt.Sprintf(`{"image": %q}`, images[0]),
	}
	for i, name := range slices.Sorted(maps.Keys(configs)) {
		t.Run(name, func(t *testing.T) {
			id := fmt.Sprintf("00000000-0000-4000-8000-00000000d1%02d", i)
			spec := resolve(t, p, id, fmt.Sprintf("canonical-%d", i), json.RawMessage(configs[name]))
			t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
			if _, err := p.Provision(context.Background(), spec); err != nil {
				t.Fatal(err)
			}
			if d := inspect(t, p, spec, ""); len(d) != 0 {
				t.Errorf("Inspect of the job as registered: %v", d)
			}
			// A restarted provider, which remembers no plan, agrees.
			if d := inspect(t, newProvider(t, block(a, `"allow_raw_exec": true`), nil), spec, ""); len(d) != 0 {
				t.Errorf("Inspect by a restarted provider: %v", d)
			}
			// A new generation of the same config is not drift, and
			// Update writes nothing for it.
			next := *spec
			next.Generation++
			if d := inspect(t, p, &next, ""); len(d) != 0 {
				t.Errorf("Inspect with the next generation of the same config: %v", d)
			}
			if res, err := p.Update(context.Background(), id, &next); err != nil || res.Changes != nil {
				t.Errorf("Update with the next generation of the same config = %+v, %v; want nothing written", res, err)
			}
		})
	}
}

// With a count range a scaler owns the count: landlord starts the job at
// min, writes Nomad's scaling block (so that Nomad refuses a count outside
// the range), and neither reports nor reverts a count within it. A new
// range the count is outside of brings it within.
func TestCountRangeLeavesTheCountToTheScaler(t *testing.T) {
	a, images := start(t)
	p := newProvider(t, block(a, ""), nil)
	const id, job = "00000000-0000-4000-8000-00000000d201", "landlord-scaled"
	withCount := func(count string) *provider.TenantComputeSpec {
		return resolve(t, p, id, "scaled", appConfig(images[0], "s", `"count": `+count))
	}
	spec := withCount(`{"min": 1, "max": 3}`)
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	waitDeployed(t, a, job)
	count := func() int {
		t.Helper()
		j, _, err := a.Client.Jobs().Info(job, nil)
		if err != nil {
			t.Fatal(err)
		}
		return *j.TaskGroups[0].Count
	}
	if got := count(); got != 1 {
		t.Errorf("a new job's count is %d, want the range's min 1", got)
	}
	if _, _, err := a.Client.Jobs().Scale(job, "tenant", new(3), "the autoscaler", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	if d := inspect(t, p, spec, ""); len(d) != 0 {
		t.Errorf("Inspect of a count the scaler set within the range: %v", d)
	}
	if res, err := p.Update(context.Background(), id, spec); err != nil || res.Changes != nil || count() != 3 {
		t.Errorf("Update over a count the scaler set = %+v, %v, count %d; want nothing written, count 3", res, err, count())
	}
	if _, _, err := a.Client.Jobs().Scale(job, "tenant", new(4), "beyond max", false, nil, nil); err == nil || !strings.Contains(err.Error(), "maximum") {
		t.Errorf("nomad job scale beyond the range's max = %v; want Nomad's refusal", err)
	}
	// A spec edit that changes the job keeps the scaler's count.
	changed := resolve(t, p, id, "scaled", appConfig(images[0], "changed", `"count": {"min": 1, "max": 3}`))
	if _, err := p.Update(context.Background(), id, changed); err != nil || count() != 3 {
		t.Errorf("Update with a new env value: %v, count %d; want the scaler's 3 kept", err, count())
	}
	narrower := withCount(`{"min": 1, "max": 2}`)
	d := inspect(t, p, narrower, "")
	if !slices.Contains(paths(d), "job/count") {
		t.Errorf("Inspect with a range the count is outside of: %v; want job/count", d)
	}
	if _, err := p.Update(context.Background(), id, narrower); err != nil || count() != 2 {
		t.Errorf("Update to a range the count is outside of: %v, count %d; want 2, the new max", err, count())
	}
	fixed := withCount(`2`)
	if d := inspect(t, p, fixed, ""); !slices.Contains(paths(d), "job/scaling") {
		t.Errorf("Inspect with a fixed count over a job with a scaling block: %v; want job/scaling", d)
	}
	waitDeployed(t, a, job)
	if _, _, err := a.Client.Jobs().Scale(job, "tenant", new(1), "by hand", false, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Update(context.Background(), id, fixed); err != nil || count() != 2 {
		t.Errorf("Update to a fixed count: %v, count %d; want 2", err, count())
	}
}

// waitDeployed waits until the deployment of the job's current version
// succeeds: Nomad refuses to scale a job while it deploys.
func waitDeployed(t *testing.T, a *nomadtest.Agent, jobID string) {
	t.Helper()
	eventually(t, "the deployment of job "+jobID, func() bool {
		j, _, err := a.Client.Jobs().Info(jobID, nil)
		if err != nil {
			return false
		}
		dep, _, err := a.Client.Jobs().LatestDeployment(jobID, nil)
		return err == nil && dep != nil && dep.JobVersion == *j.Version && dep.Status == api.DeploymentStatusSuccessful
	})
}

// Inspect at rest reads: the job, its allocations, its latest deployment
// and the list of its Variables. It plans again only once the job or the
// spec changed, and reads a Variable's items only once it changed; Update
// of an unchanged tenant costs the same reads and writes nothing.
func TestInspectAtRestReadsOnly(t *testing.T) {
	a, images := start(t)
	proxy := newAPIProxy(t, a.Address)
	p := newProvider(t, block(&nomadtest.Agent{Address: proxy.URL}, ""), nil)
	const id = "00000000-0000-4000-8000-00000000d301"
	spec := resolve(t, p, id, "at-rest", appConfig(images[0], "r", `"secrets": {"K": "v"}`))
	t.Cleanup(func() { _ = p.Destroy(context.Background(), id) })
	if _, err := p.Provision(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	waitState(t, p, id, provider.StateRunning)
	inspect(t, p, spec, "")
	first := proxy.counts()
	const n = 5
	for range n {
		if d := inspect(t, p, spec, ""); len(d) != 0 {
			t.Fatalf("drift at rest: %v", d)
		}
	}
	rest := proxy.counts()
	total := 0
	for k, v := range rest {
		total += v
		if !strings.HasPrefix(k, "GET ") {
			t.Errorf("Inspect at rest sent %d × %s", v, k)
		}
	}
	if rest["GET /v1/var/:path"] != 0 {
		t.Errorf("Inspect at rest read the Variable's items %d times", rest["GET /v1/var/:path"])
	}
	t.Logf("Inspect at rest: %.1f requests each (%v); Provision, the wait until running and the first Inspect: %v", float64(total)/n, rest, first)
	if res, err := p.Update(context.Background(), id, spec); err != nil || res.Changes != nil {
		t.Errorf("Update of an unchanged tenant = %+v, %v; want nothing written", res, err)
	}
	t.Logf("Update of an unchanged tenant: %v", proxy.counts())
}
