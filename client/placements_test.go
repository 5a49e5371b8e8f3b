package client_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/jaxxstorm/landlord/client"
	"github.com/jaxxstorm/landlord/client/clienttest"
)

// A tenant of two placements: each is shown with its own status, its
// history is read placement by placement, and the status of a workload
// is asked of a placement by name.
func TestPlacements(t *testing.T) {
	c := clienttest.NewServer(t, clienttest.Options{Controller: true}).Client(t, "")
	created, err := c.Tenants().Create(ctx, client.CreateTenantRequest{Name: "acme", Placements: []client.PlacementRequest{
		{Name: "web", ComputeConfig: json.RawMessage(appConfig)},
		{Name: "worker", ComputeConfig: json.RawMessage(`{"image":"example.com/worker:1"}`)},
	}}, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.Placements) != 2 || created.Placements[0].Name != "web" || created.Placements[1].Name != "worker" {
		t.Fatalf("created with placements %+v", created.Placements)
	}
	ready, err := c.Tenants().Wait(ctx, created.ID, client.UntilReady, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ready.Placements {
		if p.Status != client.StatusReady || p.ComputeProvider != "mock" {
			t.Errorf("placement %s of a ready tenant: %s on %s", p.Name, p.Status, p.ComputeProvider)
		}
	}

	t.Run("events of a placement", func(t *testing.T) {
		var all, web int
		for e, err := range c.Tenants().AllEvents(ctx, "acme", client.EventOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			all++
			if e.Placement == "web" {
				web++
			}
		}
		var got []client.Event
		for e, err := range c.Tenants().AllEvents(ctx, "acme", client.EventOptions{Placement: "web", PageSize: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, e)
		}
		if len(got) == 0 || len(got) != web || len(got) >= all {
			t.Errorf("%d events of web, want the %d of the tenant's %d that name it", len(got), web, all)
		}
		for _, e := range got {
			if e.Placement != "web" {
				t.Errorf("an event of %q among web's: %+v", e.Placement, e)
			}
		}
		_, err := c.Tenants().Events(ctx, "acme", client.EventOptions{Placement: "db"})
		mustAPIError(t, err, http.StatusNotFound, "not_found")
	})
	t.Run("status of a placement", func(t *testing.T) {
		st, err := c.Tenants().StatusOf(ctx, "acme", client.StatusOptions{Placement: "worker"})
		if err != nil {
			t.Fatal(err)
		}
		if st.State != client.StateRunning || len(st.Containers) == 0 || st.Containers[0].Image != "example.com/worker:1" {
			t.Errorf("worker's workload: %+v", st)
		}
		_, err = c.Tenants().Status(ctx, "acme")
		mustAPIError(t, err, http.StatusBadRequest, "invalid_parameter")
		_, err = c.Tenants().StatusOf(ctx, "acme", client.StatusOptions{Placement: "db"})
		mustAPIError(t, err, http.StatusNotFound, "not_found")
	})
}

func TestProviders(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    client.Tenant
		want []string
	}{
		{"without placements", client.Tenant{ComputeProvider: "docker"}, []string{"docker"}},
		{"each once, in order", client.Tenant{ComputeProvider: "nomad", Placements: []client.Placement{
			{Name: "a", ComputeProvider: "nomad"}, {Name: "b", ComputeProvider: "docker"}, {Name: "c", ComputeProvider: "nomad"},
		}}, []string{"nomad", "docker"}},
		{"without those being removed", client.Tenant{ComputeProvider: "nomad", Placements: []client.Placement{
			{Name: "a", ComputeProvider: "nomad"}, {Name: "b", ComputeProvider: "ecs", Removed: true},
		}}, []string{"nomad"}},
		{"only removed", client.Tenant{ComputeProvider: "nomad", Placements: []client.Placement{
			{Name: "a", ComputeProvider: "nomad", Removed: true},
		}}, []string{"nomad"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.Providers(tt.t); !slices.Equal(got, tt.want) {
				t.Errorf("Providers = %v, want %v", got, tt.want)
			}
		})
	}
}
