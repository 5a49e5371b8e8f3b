package nomad_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad"
	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/internal/poll"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// tampers are the changes an operator makes with the nomad CLI to a
// conformance tenant's job behind landlord's back, each made through the
// agent's HTTP API as the CLI makes it. The tenant runs images[0].
func tampers(a *nomadtest.Agent, p *nomad.Provider, images [2]string) []providertest.Tamper {
	return []providertest.Tamper{
		// nomad job scale <job> tenant 3
		{Name: "scale", Path: "job/count", Do: func(t *testing.T, tenantID string) {
			if _, _, err := a.Client.Jobs().Scale(conformanceJob(tenantID), "tenant", new(3), "scaled by hand", false, nil, nil); err != nil {
				t.Fatal(err)
			}
		}},
		// nomad job inspect, an env value edited, nomad job run.
		{Name: "edit-job-env", Path: "containers/app/env/GREETING", Do: func(t *testing.T, tenantID string) {
			editJob(t, a, conformanceJob(tenantID), func(task *api.Task) { task.Env["GREETING"] = "edited by hand" })
		}},
		// The same with another image.
		{Name: "edit-job-image", Path: "containers/app/image", Do: func(t *testing.T, tenantID string) {
			editJob(t, a, conformanceJob(tenantID), func(task *api.Task) { task.Config["image"] = images[1] })
		}},
		// nomad alloc stop: Nomad places a replacement, on another port.
		// Nothing differs from the spec then; what the suite checks is
		// that the endpoint reported running answers.
		{Name: "stop-alloc", Do: func(t *testing.T, tenantID string) {
			stopAlloc(t, a, conformanceJob(tenantID))
		}},
		// nomad var purge of the task's Variable: the running allocation
		// keeps the environment it rendered.
		{Name: "purge-variable", Path: "variable/app", Do: func(t *testing.T, tenantID string) {
			purgeVariable(t, a, conformanceJob(tenantID))
		}},
		// nomad var purge, then nomad alloc stop: the replacement waits
		// for its template, and the tenant is not running meanwhile.
		{Name: "purge-variable-then-stop-alloc", Path: "variable/app", Do: func(t *testing.T, tenantID string) {
			job := conformanceJob(tenantID)
			purgeVariable(t, a, job)
			stopAlloc(t, a, job)
			st := waitStatus(t, p, tenantID, func(st *provider.ComputeStatus) bool { return strings.Contains(st.Message, "Missing") })
			if st.State == provider.StateRunning || len(st.Endpoints) != 0 {
				t.Errorf("a tenant whose allocation waits for its Variable: %s, endpoints %v; want not running, no endpoint", st.State, st.Endpoints)
			}
			t.Logf("while the allocation waits: %s: %s", st.State, st.Message)
		}},
	}
}

// editJob reads the job, changes its task app, and registers it again.
func editJob(t *testing.T, a *nomadtest.Agent, jobID string, edit func(*api.Task)) {
	t.Helper()
	job, _, err := a.Client.Jobs().Info(jobID, nil)
	if err != nil {
		t.Fatal(err)
	}
	edit(job.TaskGroups[0].Tasks[0])
	if _, _, err := a.Client.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
}

// stopAlloc stops the job's running allocations and returns once Nomad
// has marked them to stop (the scheduler's evaluation placed their
// replacements).
func stopAlloc(t *testing.T, a *nomadtest.Agent, jobID string) {
	t.Helper()
	allocs, _, err := a.Client.Jobs().Allocations(jobID, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var stopped []string
	for _, al := range allocs {
		if al.DesiredStatus == api.AllocDesiredStatusRun && al.ClientStatus == api.AllocClientStatusRunning {
			if _, err := a.Client.Allocations().Stop(&api.Allocation{ID: al.ID}, nil); err != nil {
				t.Fatal(err)
			}
			stopped = append(stopped, al.ID)
		}
	}
	if len(stopped) == 0 {
		t.Fatalf("job %s has no running allocation to stop", jobID)
	}
	for _, id := range stopped {
		eventually(t, "allocation "+id+" marked to stop", func() bool {
			al, _, err := a.Client.Allocations().Info(id, nil)
			return err == nil && al.DesiredStatus != api.AllocDesiredStatusRun
		})
	}
}

// purgeVariable deletes the Variable of the job's task app.
func purgeVariable(t *testing.T, a *nomadtest.Agent, jobID string) {
	t.Helper()
	if _, err := a.Client.Variables().Delete("nomad/jobs/"+jobID+"/tenant/app", nil); err != nil {
		t.Fatal(err)
	}
}

// waitStatus polls the tenant's status until ok holds.
func waitStatus(t *testing.T, p provider.Provider, tenantID string, ok func(*provider.ComputeStatus) bool) *provider.ComputeStatus {
	t.Helper()
	var st *provider.ComputeStatus
	eventually(t, "the status of tenant "+tenantID, func() bool {
		var err error
		st, err = p.GetStatus(context.Background(), tenantID)
		return err == nil && ok(st)
	})
	return st
}

// eventually polls cond until it holds, failing t after a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	poll.Until(t, what, time.Minute, func() (bool, string) { return cond(), "" })
}
