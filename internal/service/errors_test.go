package service_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/jaxxstorm/landlord/internal/service"
	"github.com/jaxxstorm/landlord/internal/tenant"
)

// TestErrorKeepsItsCause: a refusal's text, which the log shows, holds
// the cause it words as well as the words the user reads.
func TestErrorKeepsItsCause(t *testing.T) {
	cause := errors.New("sqlite: publish version: constraint failed")
	for _, tc := range []struct {
		err  *service.Error
		want string
	}{
		{&service.Error{Detail: "the store refused this version", Err: cause}, "the store refused this version: sqlite: publish version: constraint failed"},
		{&service.Error{Err: cause}, cause.Error()},
		{&service.Error{Detail: "the name is not valid"}, "the name is not valid"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if tc.err.Err != nil && !errors.Is(tc.err, cause) {
			t.Errorf("%v does not wrap its cause", tc.err)
		}
	}
}

// TestLeftRunningNamesEveryPlacement: forgetting a tenant with placements
// names what each placement's workload, and a move's, may have left.
func TestLeftRunningNamesEveryPlacement(t *testing.T) {
	tn := &tenant.Tenant{ID: "0190c4a5-1f2e-7c3d-8b4a-5e6f7a8b9c0d", Name: "acme", Placements: []tenant.Placement{
		{Name: "web", Provider: "docker", WorkloadID: "w1", ResourceIDs: map[string]string{"container": "c1"}},
		{Name: "worker", Provider: "nomad", WorkloadID: "w2", ResourceIDs: map[string]string{"job": "j2"},
			Move: &tenant.Move{Other: tenant.Placement{Provider: "kubernetes", WorkloadID: "w3", ResourceIDs: map[string]string{"deployment": "d3"}}}},
	}}
	got := service.LeftRunning(tn)
	for _, want := range []string{"placement web (workload w1 on docker): container=c1", "placement worker (workload w2 on nomad): job=j2",
		"placement worker's move (workload w3 on kubernetes): deployment=d3"} {
		if !strings.Contains(got, want) {
			t.Errorf("LeftRunning = %q, lacks %q", got, want)
		}
	}
}
