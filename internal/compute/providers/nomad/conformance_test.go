package nomad_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/jaxxstorm/landlord/internal/compute/providers/nomad/nomadtest"
	"github.com/jaxxstorm/landlord/sdk/provider"
	"github.com/jaxxstorm/landlord/sdk/providertest"
)

// fastUpdate makes deployments finish in about a second: Nomad's default
// min_healthy_time is 10 s.
const fastUpdate = `"update": {"min_healthy_time": "500ms", "healthy_deadline": "30s", "progress_deadline": "1m"}`

// echoConfig is a tenant config running image, answering /healthz on 8080.
func echoConfig(image, greeting string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"image": %q, "ports": [{"container_port": 8080, "name": "http"}], "env": {"GREETING": %q},
		"health_check": {"http": {"port": 8080, "path": "/healthz"}, "interval": "1s", "timeout": "1s"},
		"resources": {"cpu_millicores": 100, "memory_mib": 32}, %s}`, image, greeting, fastUpdate))
}

var invalidConfigs = []providertest.InvalidConfig{
	{Name: "landlord's meta", Config: json.RawMessage(`{"image": "app:1", "meta": {"landlord_tenant_id": "x"}}`), Pointer: "/meta/landlord_tenant_id"},
	{Name: "raw_exec not allowed", Config: json.RawMessage(`{"image": "app:1", "driver": "raw_exec", "command": ["/bin/app"]}`), Pointer: "/driver"},
	{Name: "command check on nomad services", Config: json.RawMessage(`{"image": "app:1", "ports": [{"container_port": 80}], "health_check": {"command": ["true"]}}`), Pointer: "/health_check/command"},
	{Name: "check of an unpublished port", Config: json.RawMessage(`{"image": "app:1", "ports": [{"container_port": 80}], "health_check": {"http": {"port": 81}}}`), Pointer: "/health_check/http/port"},
	{Name: "update deadlines", Config: json.RawMessage(`{"image": "app:1", "update": {"min_healthy_time": "5m"}}`), Pointer: "/update/min_healthy_time"},
	{Name: "too little memory", Config: json.RawMessage(`{"image": "app:1", "resources": {"memory_mib": 8}}`), Pointer: "/resources/memory_mib"},
	{Name: "count range upside down", Config: json.RawMessage(`{"image": "app:1", "count": {"min": 3, "max": 1}}`), Pointer: "/count"},
	{Name: "count range without max", Config: json.RawMessage(`{"image": "app:1", "count": {"min": 3}}`), Pointer: "/count"},
}

// conformanceJob is the job of a suite tenant: the suite names them
// conf-<last 8 of the id>.
func conformanceJob(tenantID string) string { return "landlord-conf-" + tenantID[len(tenantID)-8:] }

func TestConformance(t *testing.T) {
	a, images := start(t)
	logs := &providertest.LogBuffer{}
	b := block(a, "")
	p := newProvider(t, b, logs)
	providertest.Run(t, providertest.Harness{
		Provider:       p,
		Config:         func(v int) json.RawMessage { return echoConfig(images[v%2], fmt.Sprintf("v%d", v)) },
		InvalidConfigs: invalidConfigs,
		Disrupt: func(t *testing.T, tenantID string) {
			// nomad job stop, behind landlord's back.
			if _, _, err := a.Client.Jobs().Deregister(conformanceJob(tenantID), false, nil); err != nil {
				t.Fatal(err)
			}
		},
		Squat:   squatJob(a),
		Tampers: tampers(a, p, images),
		CountResources: func(t *testing.T, tenantID string) int {
			return countResources(t, a, tenantID, conformanceJob(tenantID))
		},
		Restart:       func(t *testing.T) provider.Provider { return newProvider(t, b, logs) },
		Logs:          logs.Bytes,
		DialEndpoints: true,
		ReadyTimeout:  60 * time.Second,
		Parallel:      12,
	})
}

// squatJob registers, behind landlord's back, a job of the ID a tenant
// would get, that is no tenant's (count 0: it runs nothing).
func squatJob(a *nomadtest.Agent) func(t *testing.T, tenantName string) func(t *testing.T) {
	return func(t *testing.T, tenantName string) func(t *testing.T) {
		id := "landlord-" + tenantName
		job := api.NewServiceJob(id, id, "global", 50)
		job.Datacenters = []string{"*"}
		job.Meta = map[string]string{"team": "payments"}
		tg := api.NewTaskGroup("squat", 0)
		tg.AddTask(api.NewTask("squat", "docker").SetConfig("image", "squatter:1"))
		job.AddTaskGroup(tg)
		if _, _, err := a.Client.Jobs().Register(job, nil); err != nil {
			t.Fatal(err)
		}
		before, _, err := a.Client.Jobs().Info(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		return func(t *testing.T) {
			got, _, err := a.Client.Jobs().Info(id, nil)
			switch {
			case err != nil:
				t.Errorf("the squatting job %s: %v", id, err)
			case *got.JobModifyIndex != *before.JobModifyIndex || (got.Stop != nil && *got.Stop):
				t.Errorf("the squatting job %s was changed: modify index %d → %d, stop %v", id, *before.JobModifyIndex, *got.JobModifyIndex, got.Stop)
			}
			if _, _, err := a.Client.Jobs().Deregister(id, true, nil); err != nil {
				t.Error(err)
			}
		}
	}
}
