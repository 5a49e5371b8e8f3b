package kubernetes

import (
	"testing"
	"time"

	"github.com/jaxxstorm/landlord/sdk/workload"
)

// A health check becomes the readiness and liveness probes, and its start
// period a startup probe that allows the start period and the retries.
func TestProbes(t *testing.T) {
	hc := &workload.HealthCheckConfig{HTTP: &workload.HTTPProbe{Path: "/healthz", Port: 8080}, Interval: 10 * time.Second,
		Timeout: 2 * time.Second, Retries: 3, StartPeriod: 45 * time.Second}
	c := container(workload.ContainerSpec{Name: "app", Image: "app:1", HealthCheck: hc}, nil, "")
	for name, p := range map[string]int32{"readiness": *c.ReadinessProbe.FailureThreshold, "liveness": *c.LivenessProbe.FailureThreshold} {
		if p != 3 {
			t.Errorf("%s probe failure threshold %d, want the retries, 3", name, p)
		}
	}
	if c.ReadinessProbe.HTTPGet == nil || *c.ReadinessProbe.HTTPGet.Path != "/healthz" || *c.ReadinessProbe.PeriodSeconds != 10 || *c.ReadinessProbe.TimeoutSeconds != 2 {
		t.Errorf("readiness probe %+v", c.ReadinessProbe)
	}
	if c.StartupProbe == nil || *c.StartupProbe.FailureThreshold != 5+3 || *c.StartupProbe.PeriodSeconds != 10 {
		t.Errorf("startup probe %+v, want 45s of start period in 10s periods (5) and 3 retries", c.StartupProbe)
	}
	hc.StartPeriod = 0
	if c := container(workload.ContainerSpec{Name: "app", Image: "app:1", HealthCheck: hc}, nil, ""); c.StartupProbe != nil {
		t.Error("a startup probe without a start period")
	}
}
