package tenant_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/jaxxstorm/landlord/internal/tenant"
)

// pages is a Lister of n tenants, served three to a page whatever the
// page size asked, that records what it was asked.
type pages struct {
	n     int
	fail  string // the page token whose listing fails
	asked []tenant.ListOptions
}

func (p *pages) List(_ context.Context, opts tenant.ListOptions) (*tenant.Page, error) {
	p.asked = append(p.asked, opts)
	if opts.PageToken == p.fail && p.fail != "" {
		return nil, errors.New("the database went away")
	}
	from, _ := strconv.Atoi(opts.PageToken)
	page := &tenant.Page{}
	for i := from; i < min(from+3, p.n); i++ {
		page.Tenants = append(page.Tenants, &tenant.Tenant{ID: strconv.Itoa(i)})
	}
	if from+3 < p.n {
		page.NextPageToken = strconv.Itoa(from + 3)
	}
	return page, nil
}

func TestListAll(t *testing.T) {
	p := &pages{n: 8}
	got, err := tenant.ListAll(context.Background(), p, tenant.ListOptions{Plan: "standard", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 8 || got[0].ID != "0" || got[7].ID != "7" {
		t.Errorf("ListAll = %d tenants, want 0 to 7", len(got))
	}
	if len(p.asked) != 3 {
		t.Fatalf("%d pages read, want 3", len(p.asked))
	}
	for i, opts := range p.asked {
		if opts.Plan != "standard" || opts.PageSize != tenant.MaxPageSize || opts.PageToken != []string{"", "3", "6"}[i] {
			t.Errorf("page %d read with %+v", i, opts)
		}
	}
	if _, err := tenant.ListAll(context.Background(), &pages{n: 8, fail: "3"}, tenant.ListOptions{}); err == nil {
		t.Error("a failed page: no error")
	}
}
