package storetest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

func testListFilters(t *testing.T, s tenant.Store) {
	// Twelve tenants: providers alternate, tiers cycle, regions halve, and
	// each is moved to a status.
	statuses := []tenant.Status{tenant.StatusRequested, tenant.StatusProvisioning, tenant.StatusReady, tenant.StatusFailed}
	for i := range 12 {
		in := newTenant(fmt.Sprintf("%s-%02d", []string{"alpha", "beta"}[i%2], i))
		in.Provider = []string{"docker", "nomad"}[i%2]
		in.Labels = map[string]string{"tier": []string{"gold", "silver", "bronze"}[i%3], "region": []string{"eu", "us"}[i/6]}
		cur := mustCreate(t, s, in)
		switch statuses[i%4] {
		case tenant.StatusProvisioning:
			mustObserve(t, s, cur, tenant.StatusProvisioning)
		case tenant.StatusReady:
			mustObserve(t, s, mustObserve(t, s, cur, tenant.StatusProvisioning), tenant.StatusReady)
		case tenant.StatusFailed:
			mustObserve(t, s, cur, tenant.StatusFailed)
		}
	}
	deleted := mustCreate(t, s, newTenant("alpha-deleted"))
	mustDelete(t, s, deleted)

	tests := []struct {
		name string
		opts tenant.ListOptions
		want []string
	}{
		{"all live, in creation order", tenant.ListOptions{}, []string{"alpha-00", "beta-01", "alpha-02", "beta-03", "alpha-04", "beta-05", "alpha-06", "beta-07", "alpha-08", "beta-09", "alpha-10", "beta-11"}},
		{"status", tenant.ListOptions{Statuses: []tenant.Status{tenant.StatusReady}}, []string{"alpha-02", "alpha-06", "alpha-10"}},
		{"several statuses", tenant.ListOptions{Statuses: []tenant.Status{tenant.StatusReady, tenant.StatusFailed}}, []string{"alpha-02", "beta-03", "alpha-06", "beta-07", "alpha-10", "beta-11"}},
		{"provider", tenant.ListOptions{Provider: "nomad"}, []string{"beta-01", "beta-03", "beta-05", "beta-07", "beta-09", "beta-11"}},
		{"label", tenant.ListOptions{Labels: map[string]string{"tier": "gold"}}, []string{"alpha-00", "beta-03", "alpha-06", "beta-09"}},
		{"two labels", tenant.ListOptions{Labels: map[string]string{"tier": "gold", "region": "us"}}, []string{"alpha-06", "beta-09"}},
		{"label value absent", tenant.ListOptions{Labels: map[string]string{"tier": "platinum"}}, nil},
		{"name prefix", tenant.ListOptions{NamePrefix: "beta-0"}, []string{"beta-01", "beta-03", "beta-05", "beta-07", "beta-09"}},
		{"prefix is not a pattern", tenant.ListOptions{NamePrefix: "alpha_"}, nil},
		{"prefix is not a pattern (%)", tenant.ListOptions{NamePrefix: "%"}, nil},
		{"combined", tenant.ListOptions{Provider: "docker", Labels: map[string]string{"region": "us"}, Statuses: []tenant.Status{tenant.StatusReady}, NamePrefix: "alpha"}, []string{"alpha-06", "alpha-10"}},
		{"include deleted", tenant.ListOptions{IncludeDeleted: true, NamePrefix: "alpha-d"}, []string{"alpha-deleted"}},
		{"deleted status", tenant.ListOptions{Statuses: []tenant.Status{tenant.StatusDeleted}}, []string{"alpha-deleted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{0, 2} {
				opts := tt.opts
				opts.PageSize = size
				if diff := cmp.Diff(tt.want, names(listAll(t, s, opts)), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("page size %d (-want +got):\n%s", size, diff)
				}
			}
		})
	}
}

func testPagination(t *testing.T, s tenant.Store) {
	var want []string
	for i := range 120 {
		want = append(want, mustCreate(t, s, newTenant(fmt.Sprintf("t-%03d", i))).Name)
	}
	page, err := s.List(ctx, tenant.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Tenants) != tenant.DefaultPageSize || page.NextPageToken == "" {
		t.Errorf("default page: %d tenants, token %q; want %d and a token", len(page.Tenants), page.NextPageToken, tenant.DefaultPageSize)
	}
	for _, size := range []int{1, 7, 50, 119, 120, 121, tenant.MaxPageSize + 1} {
		got := listAll(t, s, tenant.ListOptions{PageSize: size})
		if diff := cmp.Diff(want, names(got)); diff != "" {
			t.Errorf("page size %d (-want +got):\n%s", size, diff)
		}
	}
	last, err := s.List(ctx, tenant.ListOptions{PageSize: 120})
	if err != nil || last.NextPageToken != "" {
		t.Errorf("a page that holds the rest must have no next token: %q, %v", last.NextPageToken, err)
	}
	for _, bad := range []string{"garbage", "e30", tenant.EncodePageToken("not-an-id"), strings.Repeat("A", 300)} {
		_, err := s.List(ctx, tenant.ListOptions{PageToken: bad})
		wantErr(t, "List with page token "+bad, err, tenant.ErrInvalidPageToken)
	}
	for _, sel := range []map[string]string{{`a"b`: "x"}, {"k": `v\`}, {"": "x"}} {
		_, err := s.List(ctx, tenant.ListOptions{Labels: sel})
		wantErr(t, fmt.Sprintf("List with selector %v", sel), err, tenant.ErrInvalid)
	}
}

func testListWork(t *testing.T, s tenant.Store) {
	requested := mustCreate(t, s, newTenant("requested"))
	mustObserve(t, s, mustObserve(t, s, mustCreate(t, s, newTenant("ready")), tenant.StatusProvisioning), tenant.StatusReady)
	changed := mustObserve(t, s, mustObserve(t, s, mustCreate(t, s, newTenant("changed")), tenant.StatusProvisioning), tenant.StatusReady)
	if _, err := s.UpdateDesired(ctx, changed.ID, tenant.DesiredChange{Version: changed.Version, ComputeConfig: []byte(`{"image":"b"}`)}); err != nil {
		t.Fatal(err)
	}
	mustObserve(t, s, mustCreate(t, s, newTenant("failed")), tenant.StatusFailed)
	deleting, err := s.RequestDeletion(ctx, mustCreate(t, s, newTenant("deleting")).ID, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	mustDelete(t, s, mustCreate(t, s, newTenant("deleted")))

	want := []string{requested.ID, changed.ID, deleting.ID}
	var got []string
	after := ""
	for {
		ids, err := s.ListWork(ctx, tenant.WorkOptions{After: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			break
		}
		got = append(got, ids...)
		after = ids[len(ids)-1]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListWork (-want +got):\n%s", diff)
	}
	_, err = s.ListWork(ctx, tenant.WorkOptions{After: "not-an-id"})
	wantErr(t, "ListWork after a non-id", err, tenant.ErrInvalidPageToken)
	for _, id := range got {
		if tn := mustGet(t, s, id); !tn.NeedsWork() {
			t.Errorf("ListWork returned %s, which needs no work", tn.Name)
		}
	}
}

// testWorkMatchesNeedsWork: the stores' ListWork query and partial index
// say what Tenant.NeedsWork says, for every status and both generation
// cases.
func testWorkMatchesNeedsWork(t *testing.T, s tenant.Store) {
	paths := map[string][]tenant.Status{
		"requested":    nil,
		"provisioning": {tenant.StatusProvisioning},
		"ready":        {tenant.StatusProvisioning, tenant.StatusReady},
		"updating":     {tenant.StatusProvisioning, tenant.StatusReady, tenant.StatusUpdating},
		"failed":       {tenant.StatusFailed},
		"deleting":     nil,
		"deleted":      nil,
	}
	var all []*tenant.Tenant
	for name, path := range paths {
		for _, bump := range []bool{false, true} {
			cur := mustCreate(t, s, newTenant(fmt.Sprintf("%s-%v", name, bump)))
			for _, st := range path {
				cur = mustObserve(t, s, cur, st)
			}
			switch name {
			case "deleting":
				d, err := s.RequestDeletion(ctx, cur.ID, 0, "test")
				if err != nil {
					t.Fatal(err)
				}
				cur = d
			case "deleted":
				cur = mustDelete(t, s, cur)
			}
			if bump && cur.Status != tenant.StatusDeleting && cur.Status != tenant.StatusDeleted {
				next, err := s.UpdateDesired(ctx, cur.ID, tenant.DesiredChange{Version: cur.Version, ComputeConfig: []byte(`{"image":"bumped"}`)})
				if err != nil {
					t.Fatal(err)
				}
				cur = next
			}
			all = append(all, cur)
		}
	}
	work := map[string]bool{}
	ids, err := s.ListWork(ctx, tenant.WorkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		work[id] = true
	}
	for _, tn := range all {
		if got := work[tn.ID]; got != tn.NeedsWork() {
			t.Errorf("%s (status %s, generation %d, observed %d): ListWork says %v, NeedsWork says %v",
				tn.Name, tn.Status, tn.Generation, tn.ObservedGeneration, got, tn.NeedsWork())
		}
	}
}

func testCountByStatus(t *testing.T, s tenant.Store) {
	c, ok := s.(tenant.StatusCounter)
	if !ok {
		t.Fatalf("%T does not implement tenant.StatusCounter", s)
	}
	mustCreate(t, s, newTenant("a"))
	mustObserve(t, s, mustCreate(t, s, newTenant("b")), tenant.StatusProvisioning)
	mustObserve(t, s, mustCreate(t, s, newTenant("c")), tenant.StatusProvisioning)
	mustDelete(t, s, mustCreate(t, s, newTenant("d")))
	got, err := c.CountByStatus(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[tenant.Status]int{tenant.StatusRequested: 1, tenant.StatusProvisioning: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CountByStatus (-want +got):\n%s", diff)
	}
}
